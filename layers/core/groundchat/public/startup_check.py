"""A public chat that lacks a guard must not start: the checks the chat function (at cold start)
and `groundchat serve` run before serving anything, each hole named in one line with what to set."""
from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from groundchat.auth.callers import CHAT_USE
from groundchat.config import HISTORY_PROFILE_NAMES
from groundchat.observability import running_on_lambda
from groundchat.public.visitors import BadVisitorPermissions, visitor_permissions

if TYPE_CHECKING:
    from groundchat.config import Settings

MODES = ("private", "public")
ADDRESS_SOURCES = ("client", "api-gateway")
MIN_SECRET_CHARS = 32
LOCAL_ONLY = "local-only"
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


class PublicModeRefused(Exception):
    """The one line to print when the chat refuses to start."""


def public_mode_problems(settings: Settings) -> list[str]:
    """Every reason this configuration may not serve a public chat (empty: it may)."""
    if settings.mode not in MODES:
        return [f"GROUNDCHAT_MODE must be 'private' or 'public', not {settings.mode!r}"]
    if settings.mode != "public":
        return []
    problems = []
    if settings.auth_mode == "dev":
        if settings.public_dev_auth != LOCAL_ONLY:
            problems.append("dev auth lets anyone in (set GROUNDCHAT_AUTH_MODE=oidc; on this machine only, "
                            f"GROUNDCHAT_PUBLIC_DEV_AUTH={LOCAL_ONLY})")
        elif running_on_lambda():
            problems.append(f"GROUNDCHAT_PUBLIC_DEV_AUTH={LOCAL_ONLY} is refused in AWS (set GROUNDCHAT_AUTH_MODE=oidc)")
    if settings.visitor_rate_limit <= 0 or settings.visitor_rate_window_seconds <= 0:
        problems.append("no rate limit (set GROUNDCHAT_VISITOR_RATE_LIMIT, questions per visitor per "
                        "GROUNDCHAT_VISITOR_RATE_WINDOW_SECONDS, to a positive number)")
    if not settings.turnstile_site_key or not settings.turnstile_secret:
        problems.append("no bot wall (set GROUNDCHAT_TURNSTILE_SITE_KEY and GROUNDCHAT_TURNSTILE_SECRET)")
    elif not verify_url_is_safe(settings.turnstile_verify_url):
        problems.append("GROUNDCHAT_TURNSTILE_VERIFY_URL must be https (or a local stub on http://127.0.0.1 or localhost)")
    if settings.public_budget_usd is None:
        problems.append("no spending ceiling for anonymous visitors (set GROUNDCHAT_PUBLIC_BUDGET_USD)")
    elif Decimal(settings.public_budget_usd) < 0:
        problems.append("GROUNDCHAT_PUBLIC_BUDGET_USD is negative")
    if len(settings.visitor_secret) < MIN_SECRET_CHARS:
        problems.append(f"no visitor secret (set GROUNDCHAT_VISITOR_SECRET, {MIN_SECRET_CHARS}+ characters: it signs "
                        "visitor sessions and keys the address hash)")
    if settings.visitor_address_from not in ADDRESS_SOURCES:
        problems.append(f"GROUNDCHAT_VISITOR_ADDRESS_FROM must be one of {', '.join(ADDRESS_SOURCES)}")
    try:
        if CHAT_USE not in visitor_permissions(settings.visitor_permissions):
            problems.append(f"GROUNDCHAT_VISITOR_PERMISSIONS must include {CHAT_USE} in public mode")
    except BadVisitorPermissions as exc:
        problems.append(str(exc))
    if settings.visitor_history_profile not in HISTORY_PROFILE_NAMES:
        problems.append(f"GROUNDCHAT_VISITOR_HISTORY_PROFILE: unknown history profile "
                        f"{settings.visitor_history_profile!r}; valid: {', '.join(HISTORY_PROFILE_NAMES)}")
    return problems


def verify_url_is_safe(url: str) -> bool:
    """The secret travels to this URL: https anywhere, plain http only to this machine. The host is
    parsed, never read as a prefix (`http://127.0.0.1@elsewhere/` and `http://localhost.elsewhere/`
    go elsewhere)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises for a port out of range
    except ValueError:
        return False
    if parts.username is not None or parts.password is not None or not parts.hostname:
        return False
    if parts.scheme == "https":
        return True
    return parts.scheme == "http" and parts.hostname in LOCAL_HOSTS


def refuse_unsafe_public_mode(settings: Settings) -> None:
    problems = public_mode_problems(settings)
    if problems:
        raise PublicModeRefused(f"groundchat refuses to start in public mode: {'; '.join(problems)}"
                                if settings.mode == "public" else f"groundchat refuses to start: {problems[0]}")
