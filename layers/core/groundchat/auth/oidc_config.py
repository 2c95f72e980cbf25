"""The OIDC sign-in's settings, resolved once: the environment first, then a Secrets Manager secret
for what the environment leaves empty.

In AWS the app client id and the API's own address cannot be in the chat function's environment:
the app client names the API's callback URL, and the API names the function, so a reference back
would be a cycle. The template writes them (and a generated session secret) into one secret that
the function reads at its first sign-in request.
"""
from __future__ import annotations

import json
import threading
from functools import lru_cache
from urllib.parse import urlsplit

import boto3
from botocore.exceptions import BotoCoreError, ClientError
from pydantic import BaseModel, ConfigDict

from groundchat.config import Settings

CALLBACK_PATH = "/auth/callback"
# Keys a secret may fill: the settings' own names, so one vocabulary serves both.
SECRET_KEYS = ("oidc_client_id", "oidc_client_secret", "oidc_redirect_url", "oidc_sign_out_url", "session_secret")
MIN_SESSION_SECRET_CHARS = 32


class OidcNotConfigured(Exception):
    """A setting is missing or wrong: one line that names what to set."""


class OidcConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    issuer: str
    client_id: str
    client_secret: str = ""
    redirect_url: str
    sign_out_url: str
    scopes: str
    session_secret: str
    session_days: int

    def __hash__(self) -> int:
        # Frozen, so one provider per configuration is cached (auth/oidc.py `provider_for`); said
        # here because the checker reads pydantic's models as unhashable.
        return hash(tuple(self.__dict__.values()))

    @property
    def base_path(self) -> str:
        """The path this app is served under, as the browser sees it (an API stage, or "")."""
        return urlsplit(self.redirect_url).path[: -len(CALLBACK_PATH)]

    def app_path(self, path: str) -> str:
        return self.base_path + path

    @property
    def origin(self) -> str:
        parts = urlsplit(self.redirect_url)
        return f"{parts.scheme}://{parts.netloc}"


_secret_lock = threading.Lock()


@lru_cache(maxsize=4)
def _secret_values(secret_id: str, region: str) -> tuple[tuple[str, str], ...]:
    # Cached per process: a cold start reads the secret once. A failed read is not cached.
    try:
        raw = boto3.client("secretsmanager", region_name=region).get_secret_value(SecretId=secret_id)["SecretString"]
        values = json.loads(raw)
    except (BotoCoreError, ClientError) as exc:
        raise OidcNotConfigured(f"cannot read the sign-in secret {secret_id!r}: {exc}") from exc
    except (KeyError, ValueError) as exc:
        raise OidcNotConfigured(f"the sign-in secret {secret_id!r} is not a JSON object of strings") from exc
    if not isinstance(values, dict):
        raise OidcNotConfigured(f"the sign-in secret {secret_id!r} is not a JSON object of strings")
    return tuple((k, str(v)) for k, v in values.items() if k in SECRET_KEYS and v)


def secret_values(settings: Settings) -> dict[str, str]:
    if not settings.oidc_secret_id:
        return {}
    with _secret_lock:
        return dict(_secret_values(settings.oidc_secret_id, settings.aws_region))


def forget_secret_values() -> None:
    """Tests (and a rotated secret) start over."""
    _secret_values.cache_clear()


def sign_in_configured(settings: Settings) -> bool:
    """Whether the OIDC sign-in is meant to run here, without reading any secret."""
    return settings.auth_mode == "oidc" and bool(settings.oidc_issuer) and (
        bool(settings.oidc_secret_id) or bool(settings.oidc_client_id and settings.oidc_redirect_url))


def resolve_oidc_config(settings: Settings) -> OidcConfig:
    """Every value the sign-in needs, or OidcNotConfigured naming the first one missing."""
    filled = secret_values(settings)

    def value(name: str) -> str:
        return getattr(settings, name) or filled.get(name, "")

    issuer = settings.oidc_issuer.rstrip("/")
    client_id, redirect_url, session_secret = value("oidc_client_id"), value("oidc_redirect_url"), value("session_secret")
    for env, given in (("GROUNDCHAT_OIDC_ISSUER", issuer), ("GROUNDCHAT_OIDC_CLIENT_ID", client_id),
                       ("GROUNDCHAT_OIDC_REDIRECT_URL", redirect_url), ("GROUNDCHAT_SESSION_SECRET", session_secret)):
        if not given:
            raise OidcNotConfigured(f"the sign-in is not configured: set {env} (or put it in GROUNDCHAT_OIDC_SECRET_ID's secret)")
    parts = urlsplit(redirect_url)
    if parts.scheme not in ("http", "https") or not parts.netloc or not parts.path.endswith(CALLBACK_PATH) or parts.query:
        raise OidcNotConfigured(f"GROUNDCHAT_OIDC_REDIRECT_URL must be this app's absolute address ending in {CALLBACK_PATH}")
    if len(session_secret) < MIN_SESSION_SECRET_CHARS:
        raise OidcNotConfigured(f"GROUNDCHAT_SESSION_SECRET must be at least {MIN_SESSION_SECRET_CHARS} characters")
    base = redirect_url[: -len(CALLBACK_PATH)]
    return OidcConfig(
        issuer=issuer, client_id=client_id, client_secret=value("oidc_client_secret"), redirect_url=redirect_url,
        sign_out_url=value("oidc_sign_out_url") or base + "/chat", scopes=settings.oidc_scopes,
        session_secret=session_secret, session_days=settings.session_days,
    )
