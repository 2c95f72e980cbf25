"""Which web pages may call `/mcp`: the MCP transport's rule against DNS rebinding. A page on a
hostile site whose name is made to resolve to this server would be same-origin to the browser, so
no CORS preflight stops it; only the `Origin` header the browser sends says where the page is.

A request with an `Origin` is served only when that origin is one the operator listed
(GROUNDCHAT_ALLOWED_ORIGINS, the list CORS answers too); the server's own `Host` never counts, since
a rebound name arrives with the hostile site's host. A request without one comes from no browser
page (an MCP host, a script) and is served as before.
"""
from __future__ import annotations

from urllib.parse import urlsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}


def listed_origins(allowed_origins: str) -> frozenset[str]:
    """The configured origins (comma-separated), each in the form `same_origin` compares."""
    return frozenset(filter(None, (normal_origin(o.strip()) for o in allowed_origins.split(","))))


def normal_origin(origin: str) -> str | None:
    """`scheme://host[:port]` lower-cased, without a default port or trailing slash; "*" as is;
    None for anything that is not an origin ("null" a sandboxed page sends included)."""
    if origin == "*":
        return origin
    try:
        parts = urlsplit(origin.rstrip("/"))
        port = parts.port
    except ValueError:
        return None
    scheme, host = parts.scheme.lower(), (parts.hostname or "")
    if scheme not in _DEFAULT_PORTS or not host or parts.path or parts.query or parts.fragment or parts.username:
        return None
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}" + (f":{port}" if port is not None and port != _DEFAULT_PORTS[scheme] else "")


def origin_allowed(origin: str | None, allowed_origins: str) -> bool:
    """True for no Origin (not a browser page) and for a listed one; "*" listed allows every page,
    as it does for CORS."""
    if origin is None:
        return True
    listed = listed_origins(allowed_origins)
    if "*" in listed:
        return True
    normal = normal_origin(origin.strip())
    return normal is not None and normal in listed
