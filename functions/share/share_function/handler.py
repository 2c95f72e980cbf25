"""Lambda entry point: the share app behind Mangum (API Gateway REST proxy events, buffered).

The app is built on the first invocation, not at import, so an import never opens connections and
a test can set the environment before anything reads it.
"""
from __future__ import annotations

from typing import Any

from mangum import Mangum

from groundchat.observability import logger, record_count, tracer

_adapter: Mangum | None = None


def _app_adapter() -> Mangum:
    global _adapter
    if _adapter is None:
        from share_function.app import create_share_app

        # lifespan off: the app has no startup work, and API Gateway gives it no lifespan events.
        _adapter = Mangum(create_share_app(), lifespan="off")
    return _adapter


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    response = _app_adapter()(event, context)
    status = int(response.get("statusCode", 0))
    record_count("SharedReads", outcome="found" if status < 400 else str(status))
    return response


def reset() -> None:
    """Tests build the app again after changing the environment."""
    global _adapter
    _adapter = None
