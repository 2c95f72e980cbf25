"""Verifying bearer tokens: HS256 dev tokens locally, OIDC JWTs (JWKS, cached) in AWS."""
from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import TYPE_CHECKING

from groundchat.auth.callers import Caller
from groundchat.config import Settings

if TYPE_CHECKING:
    import jwt

# PyJWT (with the cryptography it loads, ~30 ms) is imported by the functions that sign or verify,
# not at a cold start: the chat's pages and assets never need it, its API routes do on first use.

DEV_ISSUER = "groundchat-dev"
DEV_AUDIENCE = "groundchat"


class AuthError(Exception):
    pass


def dev_secret(settings: Settings, create: bool = False) -> str:
    """The local signing secret: from config, else a file the local stack creates once."""
    if settings.dev_secret:
        return settings.dev_secret
    path = Path(settings.home) / "dev_secret"
    if path.exists():
        return path.read_text().strip()
    if not create:
        raise AuthError(f"no dev secret: run `groundchat serve` once (it creates {path}) or set GROUNDCHAT_DEV_SECRET")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(secrets.token_hex(32))
    path.chmod(0o600)
    return path.read_text().strip()


def issue_dev_token(settings: Settings, user: str, days: int = 30) -> str:
    import jwt

    now = int(time.time())
    claims = {"sub": user, "iss": DEV_ISSUER, "aud": DEV_AUDIENCE, "iat": now, "exp": now + days * 86400}
    return jwt.encode(claims, dev_secret(settings, create=True), algorithm="HS256")


class TokenVerifier:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._jwks: jwt.PyJWKClient | None = None

    def verify(self, token: str) -> Caller:
        import jwt

        try:
            if self.settings.auth_mode == "oidc":
                return self._verify_oidc(token)
            claims = jwt.decode(
                token, dev_secret(self.settings), algorithms=["HS256"], audience=DEV_AUDIENCE, issuer=DEV_ISSUER,
                options={"require": ["exp", "sub", "iss", "aud"]},
            )
        except jwt.PyJWTError as exc:
            raise AuthError(f"invalid token: {exc}") from exc
        return Caller(id=str(claims["sub"]))

    def _verify_oidc(self, token: str) -> Caller:
        # Imported here, in oidc mode only: the sign-in's modules are a cold start's largest own part.
        from groundchat.auth.oidc import SignInFailed
        from groundchat.auth.oidc_config import OidcNotConfigured, sign_in_configured
        from groundchat.auth.sign_in import provider_of

        if sign_in_configured(self.settings):
            # With the page's sign-in set up, a bearer ID token is checked exactly as the session
            # cookie is: the discovered keys, this client as the audience, the issuer, the expiry.
            try:
                claims = provider_of(self.settings).verify_id_token(token)
            except (SignInFailed, OidcNotConfigured) as exc:
                raise AuthError(f"invalid token: {exc}") from exc
            return Caller(id=str(claims["sub"]))
        import jwt

        if self._jwks is None:
            # PyJWKClient caches the key set and refetches on an unknown `kid` (key rotation).
            self._jwks = jwt.PyJWKClient(self.settings.oidc_jwks_url, cache_keys=True, lifespan=3600)
        key = self._jwks.get_signing_key_from_jwt(token)
        claims = jwt.decode(
            token, key.key, algorithms=["RS256"], audience=self.settings.oidc_audience or None,
            issuer=self.settings.oidc_issuer,
            # Cognito access tokens carry client_id, not aud: audience is checked only when configured.
            options={"require": ["exp", "sub", "iss"], "verify_aud": bool(self.settings.oidc_audience)},
        )
        return Caller(id=str(claims["sub"]))

    def caller_from_header(self, authorization: str | None) -> Caller | None:
        if not authorization or not authorization.lower().startswith("bearer "):
            return None
        try:
            return self.verify(authorization.split(" ", 1)[1].strip())
        except AuthError:
            return None
