"""OAuth 2.0 Protected Resource Metadata (RFC 9728) for `/mcp`, which MCP hosts discover the sign-in from.

A request without a token is answered 401 with `WWW-Authenticate: Bearer resource_metadata="…"`;
the host reads this document there and signs in with the authorization server it names: the OIDC
issuer in AWS. Locally (dev tokens) there is no authorization server: the document names none,
and a host sends the token `groundchat token USER` prints.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from groundchat.config import Settings
    from groundchat.json_shapes import JsonObject

WELL_KNOWN = "/.well-known/oauth-protected-resource"
MCP_PATH = "/mcp"


def metadata_url(base: str) -> str:
    """The well-known path before the resource's path (RFC 9728 §3.1), under the app's base: behind
    API Gateway that base includes the stage, outside of which the API serves nothing. Hosts take
    this URL from the 401's `WWW-Authenticate`, so it need not sit at the host's root."""
    return f"{base.rstrip('/')}{WELL_KNOWN}{MCP_PATH}"


def protected_resource(settings: Settings, base: str) -> JsonObject:
    document: JsonObject = {"resource": f"{base.rstrip('/')}{MCP_PATH}", "bearer_methods_supported": ["header"],
                            "resource_name": settings.bot_name}
    if settings.auth_mode == "oidc" and settings.oidc_issuer:
        document["authorization_servers"] = [settings.oidc_issuer]
    return document


def challenge(base: str) -> str:
    """The `WWW-Authenticate` value of a 401 from `/mcp`."""
    return f'Bearer resource_metadata="{metadata_url(base)}"'
