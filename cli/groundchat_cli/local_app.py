"""Locally, the chat and share functions are served by one server, as API Gateway routes them."""
from __future__ import annotations


def combined_app():
    from chat_function.app import create_app
    from groundchat.services import build_services

    services = build_services()
    app = create_app(services)
    try:
        from share_function.app import add_share_routes
    except ImportError:  # a build without the share function
        return app
    add_share_routes(app, services)
    return app
