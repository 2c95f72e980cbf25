"""The short-lived signed session a visitor gets when a human check passes, so each question does
not need a new challenge. It is a JWT (HS256) in an HttpOnly cookie: it names the visitor and
when the session ends, nothing else.

A session that has just run out still proves who the visitor was: when a new check passes, the
visitor keeps that id, and with it the conversation it was having."""
from __future__ import annotations

import hashlib
import hmac
import time
from dataclasses import dataclass

from groundchat.exchange.refusal import IssuedSession
from groundchat.public.visitors import is_visitor_id

# PyJWT (~30 ms with cryptography) is imported where a session is signed or read, not at a cold
# start: the chat function imports this module for its cookie name in private mode too.

COOKIE_NAME = "groundchat_visitor"
ISSUER = "groundchat-visitor"
AUDIENCE = "groundchat"
# How long after its end a session still carries its visitor over to a new one.
CARRY_OVER_SECONDS = 24 * 3600


def _signing_key(secret: str) -> bytes:
    # Its own key derived from the visitor secret, so a session and an address hash never share one.
    return hmac.new(secret.encode(), b"visitor-session", hashlib.sha256).digest()


@dataclass(frozen=True)
class SessionRead:
    visitor_id: str
    expired: bool


def issue_session(secret: str, visitor_id: str, minutes: int, now: float | None = None) -> IssuedSession:
    import jwt

    issued = int(time.time() if now is None else now)
    max_age = minutes * 60
    claims = {"sub": visitor_id, "iss": ISSUER, "aud": AUDIENCE, "iat": issued, "exp": issued + max_age}
    return IssuedSession(jwt.encode(claims, _signing_key(secret), algorithm="HS256"), max_age, visitor_id)


def read_session(secret: str, token: str | None, now: float | None = None) -> SessionRead | None:
    """The visitor a session names, and whether it has run out; None when it is not one we signed
    (or ran out too long ago to carry anything over)."""
    if not token or not secret:
        return None
    import jwt

    try:
        claims = jwt.decode(token, _signing_key(secret), algorithms=["HS256"], audience=AUDIENCE, issuer=ISSUER,
                            # Time is judged below, by our clock (the same one that issued it).
                            options={"require": ["exp", "sub", "iss", "aud"], "verify_exp": False, "verify_iat": False,
                                     "verify_nbf": False})
    except jwt.PyJWTError:
        return None
    visitor_id, exp = claims.get("sub"), claims.get("exp")
    if not isinstance(visitor_id, str) or not is_visitor_id(visitor_id) or not isinstance(exp, int):
        return None
    now = time.time() if now is None else now
    if now >= exp + CARRY_OVER_SECONDS:
        return None
    return SessionRead(visitor_id, expired=now >= exp)
