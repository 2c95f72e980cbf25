"""The sign-in's cookies: what each holds, how long it lives, how it is sealed, and who it names.

- The session cookie holds the provider's ID token itself, verified on every request exactly
  like a bearer token (signature by the provider's keys, issuer, audience, expiry): the server
  keeps no session store, and a stolen cookie is worth no more than the token it carries.
- The refresh cookie holds the refresh token sealed (encrypted and authenticated) with the session
  secret, and is sent only to /auth/*.
- The sign-in cookie holds the state, nonce and PKCE verifier of one sign-in in progress, sealed,
  for ten minutes. It is SameSite=Lax because the provider's redirect back is a cross-site
  navigation, on which a Strict cookie would not be sent; the others are Strict.

All are Secure and HttpOnly: the page's script never sees a token.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

from cryptography.fernet import Fernet, InvalidToken
from pydantic import BaseModel, ValidationError

from groundchat.auth.oidc import SignInFailed
from groundchat.auth.oidc_config import OidcConfig

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject

SESSION_COOKIE = "__Host-groundchat-session"
STATE_COOKIE = "__Host-groundchat-sign-in"
REFRESH_COOKIE = "__Secure-groundchat-refresh"
STATE_MAX_AGE_SECONDS = 600
# What the page sends with a cookie-authenticated request besides the browser's own Origin.
CSRF_HEADER = "x-groundchat-csrf"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

Sealed = TypeVar("Sealed", bound=BaseModel)


@dataclass(frozen=True)
class CookieSpec:
    """One Set-Cookie, always Secure and HttpOnly; max_age 0 deletes it."""

    name: str
    value: str
    max_age: int
    path: str
    samesite: str


class SignInState(BaseModel):
    state: str
    nonce: str
    code_verifier: str


class RefreshGrant(BaseModel):
    refresh_token: str
    sub: str


class SessionView(BaseModel):
    """What the page may know of a session: who and until when, never a token."""

    configured: bool = True
    signed_in: bool
    user: str | None = None
    name: str | None = None
    expires_at: int | None = None
    expires_in: int | None = None
    refreshable: bool = False
    sign_in_url: str


# ---- sealing -----------------------------------------------------------------------------------

def _fernet(secret: str, purpose: str) -> Fernet:
    # One key per purpose, so a refresh cookie can never be replayed as a sign-in cookie.
    key = hmac.new(secret.encode(), f"groundchat {purpose} cookie".encode(), hashlib.sha256).digest()
    return Fernet(base64.urlsafe_b64encode(key))


def seal(value: BaseModel, secret: str, purpose: str) -> str:
    return _fernet(secret, purpose).encrypt(value.model_dump_json().encode()).decode("ascii")


def unseal(kind: type[Sealed], sealed: str, secret: str, purpose: str, max_age: int) -> Sealed:
    """The sealed value, or SignInFailed saying whether it was changed or is too old."""
    fernet = _fernet(secret, purpose)
    try:
        made_at = fernet.extract_timestamp(sealed.encode("ascii"))
        plain = fernet.decrypt(sealed.encode("ascii"))
        value = kind.model_validate_json(plain)
    except (InvalidToken, UnicodeEncodeError, ValidationError) as exc:
        raise SignInFailed(f"the {purpose} cookie was changed or sealed by another server") from exc
    if time.time() - made_at > max_age:
        raise SignInFailed(f"the {purpose} cookie is older than {max_age // 60} minutes")
    return value


# ---- the cookies -----------------------------------------------------------------------------

def sign_in_cookie(config: OidcConfig, state: SignInState) -> CookieSpec:
    return CookieSpec(STATE_COOKIE, seal(state, config.session_secret, "sign-in"), STATE_MAX_AGE_SECONDS, "/", "lax")


def read_sign_in_cookie(config: OidcConfig, sealed: str | None) -> SignInState:
    if not sealed:
        raise SignInFailed("this sign-in did not start in this browser, or took over ten minutes")
    return unseal(SignInState, sealed, config.session_secret, "sign-in", STATE_MAX_AGE_SECONDS)


def session_cookies(config: OidcConfig, id_token: str, claims: JsonObject,
                    refresh: RefreshGrant | None) -> list[CookieSpec]:
    """The session (the ID token, until it expires) and, when the provider gave one, the sealed
    refresh token for `session_days`."""
    lifetime = max(1, expiry(claims) - int(time.time()))
    cookies = [CookieSpec(SESSION_COOKIE, id_token, lifetime, "/", "strict")]
    if refresh is not None:
        cookies.append(CookieSpec(REFRESH_COOKIE, seal(refresh, config.session_secret, "refresh"),
                                  config.session_days * 86400, config.app_path("/auth"), "strict"))
    return cookies


def read_refresh_cookie(config: OidcConfig, sealed: str | None) -> RefreshGrant | None:
    if not sealed:
        return None
    return unseal(RefreshGrant, sealed, config.session_secret, "refresh", config.session_days * 86400)


def sign_in_cookie_cleared() -> CookieSpec:
    return CookieSpec(STATE_COOKIE, "", 0, "/", "lax")


def all_cookies_cleared(config: OidcConfig) -> list[CookieSpec]:
    return [CookieSpec(SESSION_COOKIE, "", 0, "/", "strict"),
            CookieSpec(REFRESH_COOKIE, "", 0, config.app_path("/auth"), "strict"),
            sign_in_cookie_cleared()]


# ---- what a session says ---------------------------------------------------------------------

def expiry(claims: JsonObject) -> int:
    """The token's `exp` (seconds since the epoch): verification required it, so it is a number."""
    exp = claims["exp"]
    if not isinstance(exp, (int, float)):
        raise ValueError(f"the ID token's exp is not a number: {exp!r}")
    return int(exp)


def display_name(claims: JsonObject) -> str:
    for claim in ("email", "preferred_username", "name", "cognito:username"):
        value = claims.get(claim)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return str(claims["sub"])


def session_view(config: OidcConfig, claims: JsonObject | None, refreshable: bool) -> SessionView:
    sign_in_url = config.app_path("/auth/sign-in")
    if claims is None:
        return SessionView(signed_in=False, refreshable=refreshable, sign_in_url=sign_in_url)
    expires_at = expiry(claims)
    return SessionView(signed_in=True, user=str(claims["sub"]), name=display_name(claims), expires_at=expires_at,
                       expires_in=max(0, expires_at - int(time.time())), refreshable=refreshable, sign_in_url=sign_in_url)


# ---- cross-site requests -------------------------------------------------------------------------

def _origin_of(url: str) -> tuple[str, str] | None:
    """(scheme, host[:port]) of an origin or URL, the default port left out; None when it is not
    one (no host, or a port urllib refuses, such as 99999: a forged header, never a 500)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    default = {"http": 80, "https": 443}[parts.scheme]
    return parts.scheme, parts.hostname + (f":{port}" if port and port != default else "")


def _request_origin(host: str | None, app_origin: str | None, scheme: str) -> set[tuple[str, str]]:
    """The origins this request may come from: the app's configured one, and the Host it was sent
    to under the scheme this server was reached by."""
    allowed = set()
    if host:
        own = _origin_of(f"{scheme}://{host.lower()}")
        if own:
            allowed.add(own)
    if app_origin:
        configured = _origin_of(app_origin)
        if configured:
            allowed.add(configured)
    return allowed


def cross_site_reason(method: str, origin: str | None, host: str | None, csrf_header: str | None,
                      app_origin: str | None, scheme: str = "https") -> str | None:
    """Why a request that a cookie authenticates must be refused as possibly forged, or None.

    A cookie goes with every request the browser makes to this site, whoever's page started it;
    SameSite=Strict stops other sites, and this stops other origins of the same site. Reading
    requests are safe; a changing one must come from this origin (the browser's `Origin`, which
    a page cannot forge) or, from a client that sends no Origin, carry our header, which another
    origin cannot add without a preflight this app refuses.
    """
    if method.upper() not in UNSAFE_METHODS:
        return None
    if origin:
        # Scheme, host and port all count: https://chat.example is another origin than http://chat.example.
        if origin != "null" and _origin_of(origin) in _request_origin(host, app_origin, scheme):
            return None
        return f"this request came from another site ({origin}): cookie-signed changes are accepted only from this site's pages"
    if csrf_header:
        return None
    return f"a cookie-signed {method.upper()} needs the browser's Origin header or {CSRF_HEADER}: send it from this site's page"
