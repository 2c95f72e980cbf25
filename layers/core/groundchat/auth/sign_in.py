"""The OIDC sign-in's steps, each from what the browser sent to what it gets back (a redirect,
cookies to set, what the page may know). The chat function's routes only translate HTTP.
"""
from __future__ import annotations

import hmac
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

from groundchat.auth.callers import Caller
from groundchat.auth.oidc import (
    InvalidIdToken, OidcProvider, SignInFailed, new_opaque_value, new_pkce_pair, provider_for,
)
from groundchat.auth.oidc_config import OidcNotConfigured, resolve_oidc_config, sign_in_configured
from groundchat.auth.sessions import (
    CookieSpec, RefreshGrant, SessionView, SignInState, all_cookies_cleared, read_refresh_cookie,
    read_sign_in_cookie, session_cookies, session_view, sign_in_cookie, sign_in_cookie_cleared,
)
from groundchat.config import Settings

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject


@dataclass
class Outcome:
    """Where the browser goes next (or None), the cookies to set, and what the page may know."""

    cookies: list[CookieSpec] = field(default_factory=list)
    location: str | None = None
    session: SessionView | None = None


def provider_of(settings: Settings) -> OidcProvider:
    """This deployment's provider (OidcNotConfigured when a setting is missing)."""
    return provider_for(resolve_oidc_config(settings))


def start(provider: OidcProvider) -> Outcome:
    """A fresh state, nonce and PKCE pair: sealed into the sign-in cookie, sent on to the provider."""
    verifier, challenge = new_pkce_pair()
    state = SignInState(state=new_opaque_value(), nonce=new_opaque_value(), code_verifier=verifier)
    location = provider.authorization_url(state.state, state.nonce, challenge)
    return Outcome(cookies=[sign_in_cookie(provider.config, state)], location=location)


def finish(provider: OidcProvider, params: Mapping[str, str], sealed_state: str | None) -> Outcome:
    """The provider's redirect back: the state checked against this browser's sign-in, the code
    exchanged with the PKCE verifier, the ID token verified (nonce included), the session set."""
    if params.get("error"):
        said = params.get("error_description") or params["error"]
        raise SignInFailed(f"the sign-in provider did not sign you in ({params['error']}: {str(said)[:200]})")
    started = read_sign_in_cookie(provider.config, sealed_state)
    if not hmac.compare_digest(params.get("state", ""), started.state):
        raise SignInFailed("the answer does not belong to the sign-in this browser started (state differs)")
    code = params.get("code", "")
    if not code:
        raise SignInFailed("the sign-in provider sent no code back")
    tokens = provider.exchange_code(code, started.code_verifier)
    claims = provider.verify_id_token(tokens.id_token, nonce=started.nonce)
    refresh = RefreshGrant(refresh_token=tokens.refresh_token, sub=str(claims["sub"])) if tokens.refresh_token else None
    cookies = [*session_cookies(provider.config, tokens.id_token, claims, refresh), sign_in_cookie_cleared()]
    return Outcome(cookies=cookies, location=provider.config.app_path("/chat"),
                   session=session_view(provider.config, claims, refresh is not None))


def renew(provider: OidcProvider, sealed_refresh: str | None) -> Outcome:
    """A new ID token from the refresh token, before the old one expires. The new token must name
    the same person; a refused refresh token ends the session."""
    try:
        grant = read_refresh_cookie(provider.config, sealed_refresh)
    except SignInFailed as exc:
        # A changed or expired refresh cookie is a session that is over: 401, so the page's answer
        # clears the dead cookie instead of sending it again on every renewal.
        raise SignInFailed(exc.message, status=401, code="unauthenticated") from exc
    if grant is None:
        raise SignInFailed("there is no sign-in to renew here", status=401, code="unauthenticated")
    try:
        tokens = provider.refresh(grant.refresh_token)
        claims = provider.verify_id_token(tokens.id_token)
    except SignInFailed as exc:
        if exc.status == 503:
            raise
        raise SignInFailed(exc.message, status=401, code="unauthenticated") from exc
    if str(claims["sub"]) != grant.sub:
        raise SignInFailed("the renewed sign-in names someone else", status=401, code="unauthenticated")
    # Providers that rotate refresh tokens send a new one; the others keep the old one valid.
    kept = RefreshGrant(refresh_token=tokens.refresh_token or grant.refresh_token, sub=grant.sub)
    return Outcome(cookies=session_cookies(provider.config, tokens.id_token, claims, kept),
                   session=session_view(provider.config, claims, True))


def current(provider: OidcProvider, id_token: str | None, sealed_refresh: str | None) -> SessionView:
    """Who the cookies sign in, and until when; `refreshable` when only the refresh cookie is left
    (the page renews at once, e.g. after a laptop slept past the ID token's expiry)."""
    claims = None
    if id_token:
        try:
            claims = provider.verify_id_token(id_token)
        except InvalidIdToken:
            claims = None
    return session_view(provider.config, claims, bool(sealed_refresh))


def sign_out(provider: OidcProvider, id_token: str | None, sealed_refresh: str | None) -> Outcome:
    """Every sign-in cookie cleared, the refresh token revoked where the provider can, and the
    provider's own sign-out address (so its session ends too) when it has one."""
    location = None
    # Signing out here never depends on the provider: its failures only cost its own sign-out.
    try:
        grant = read_refresh_cookie(provider.config, sealed_refresh)
        if grant is not None:
            provider.revoke(grant.refresh_token)
        location = provider.end_session_url(id_token)
    except (SignInFailed, OidcNotConfigured):
        pass
    return Outcome(cookies=all_cookies_cleared(provider.config), location=location)


def app_origin(settings: Settings) -> str | None:
    """This app's public origin as the provider knows it (from the redirect URL), or None."""
    try:
        return resolve_oidc_config(settings).origin
    except OidcNotConfigured:
        return None


def caller_from_session(settings: Settings, id_token: str | None) -> Caller | None:
    """The caller a session cookie names, verified like a bearer ID token; None for no cookie, a
    cookie that does not verify, or a deployment without the OIDC sign-in."""
    if not id_token or not sign_in_configured(settings):
        return None
    try:
        claims: JsonObject = provider_of(settings).verify_id_token(id_token)
    except (SignInFailed, OidcNotConfigured):
        return None
    return Caller(id=str(claims["sub"]))
