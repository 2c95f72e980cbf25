"""The headers every response of ours carries, pages, scripts and JSON alike, and the ASGI
middleware that adds them (plain ASGI: both functions' apps use it, and the core stays free of any
web framework). The policy itself is data (data/security_headers.json).

- Content-Security-Policy: scripts only from this site's own files (no inline script, no eval),
  nothing may frame a page (`frame-ancestors 'none'`: a shared page's id is its only secret), and
  requests only to this site (and to a page's own `blob:` images, which it may read back: a blob
  URL names data the page holds, on no other site). Inline styles stay allowed: the pages carry their style sheets inline
  and the human check's widget adds one, and a style runs no code. `form-action` is left out on
  purpose: the sign-in form's answer redirects to the identity provider, which Chromium checks
  against `form-action` too. In public mode the human check's origin (from its script's address)
  may serve a script and a frame.
- X-Content-Type-Options: nosniff, so a script or a JSON body is never run as something else.
- Referrer-Policy: strict-origin-when-cross-origin, so another site learns at most our origin,
  never a shared page's address; `no-referrer` would make a same-origin POST's `Origin` "null",
  which the cookie-signed routes rightly refuse as cross-site.
- Permissions-Policy: the powerful features no page of ours uses, denied to the pages and to any
  frame in them.
- X-Frame-Options: DENY, frame-ancestors for browsers that predate it.
"""
from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Awaitable, Callable, MutableMapping, TypedDict
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from groundchat.config import Settings

Message = MutableMapping[str, object]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[MutableMapping[str, object], Receive, Send], Awaitable[None]]


class _Policy(TypedDict):
    """data/security_headers.json."""

    content_security_policy: dict[str, list[str]]  # directive: its sources
    human_check_directives: list[str]  # the directives the human check's widget is added to
    referrer_policy: str
    denied_features: list[str]


@lru_cache(maxsize=1)
def _policy() -> _Policy:
    text = resources.files("groundchat").joinpath("data/security_headers.json").read_text(encoding="utf-8")
    policy: _Policy = json.loads(text)
    return policy


def _origin(address: str) -> str:
    parts = urlsplit(address)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"not an http(s) address: {address!r}")
    return f"{parts.scheme}://{parts.netloc}"


def content_security_policy(settings: Settings) -> str:
    policy = _policy()
    directives: dict[str, list[str]] = {name: list(sources) for name, sources in policy["content_security_policy"].items()}
    if settings.mode == "public":
        widget = _origin(settings.turnstile_script_url)
        for name in policy["human_check_directives"]:
            directives[name] = [s for s in directives.get(name, []) if s != "'none'"] + [widget]
    return "; ".join(f"{name} {' '.join(sources)}" for name, sources in directives.items())


def security_headers(settings: Settings) -> dict[str, str]:
    """The headers by name (lower case), for this deployment's settings."""
    policy = _policy()
    return {
        "content-security-policy": content_security_policy(settings),
        "x-content-type-options": "nosniff",
        "referrer-policy": policy["referrer_policy"],
        "permissions-policy": ", ".join(f"{feature}=()" for feature in policy["denied_features"]),
        "x-frame-options": "DENY",
    }


class SecurityHeaders:
    """ASGI middleware: each HTTP response gets every header of `headers` it does not set itself
    (a route's own value wins), streamed responses included (added to their start message)."""

    def __init__(self, app: App, headers: dict[str, str]) -> None:
        self.app = app
        self.headers = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]

    async def __call__(self, scope: MutableMapping[str, object], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                sent = message.get("headers", [])  # ASGI: (name, value) byte pairs
                own: list[tuple[bytes, bytes]] = list(sent) if isinstance(sent, (list, tuple)) else []
                present = {bytes(name).lower() for name, _ in own}
                message["headers"] = own + [(name, value) for name, value in self.headers if name not in present]
            await send(message)

        await self.app(scope, receive, send_with_headers)
