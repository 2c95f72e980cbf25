"""`groundchat serve --public`: the local stack as a public chat, with a Turnstile stub standing in
for Cloudflare (it says yes to every token) and local values for the guards nobody has set.

Only the bot wall is replaced; a rate limit or a ceiling set in the environment is kept as it is,
so `GROUNDCHAT_VISITOR_RATE_LIMIT=0 groundchat serve --public` is refused like a deployment would be."""
from __future__ import annotations

import os
import secrets
from pathlib import Path

from groundchat.config import Settings, get_settings, reset_settings_cache

# What a local public chat allows when the environment says nothing: a few questions a minute, a
# quarter of a dollar for all visitors together (the offline answerer spends nothing anyway).
LOCAL_GUARDS = {"GROUNDCHAT_VISITOR_RATE_LIMIT": "10", "GROUNDCHAT_PUBLIC_BUDGET_USD": "0.25"}


def local_visitor_secret(settings: Settings) -> str:
    """Like the dev secret: created once in GROUNDCHAT_HOME, so sessions survive a restart."""
    if settings.visitor_secret:
        return settings.visitor_secret
    path = Path(settings.home) / "visitor_secret"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_hex(32))
        path.chmod(0o600)
    return path.read_text().strip()


def start_public_stand_ins(say=print):
    """Starts the Turnstile stub and points the settings at it; returns the stub (stop it after)."""
    from groundchat_cli.turnstile_stub import TurnstileStub

    stub = TurnstileStub().start()
    os.environ["GROUNDCHAT_MODE"] = "public"
    os.environ.update(stub.settings_env())
    for name, value in LOCAL_GUARDS.items():
        os.environ.setdefault(name, value)
    # Dev auth on this machine only: the startup check refuses it anywhere else, and the dev
    # sign-in route stays off in public mode (a stranger at the page is a visitor).
    os.environ.setdefault("GROUNDCHAT_PUBLIC_DEV_AUTH", "local-only")
    os.environ["GROUNDCHAT_VISITOR_SECRET"] = local_visitor_secret(get_settings())
    reset_settings_cache()
    settings = get_settings()
    say(f"public mode: Turnstile stub on {stub.url} (it passes every token); rate limit "
        f"{settings.visitor_rate_limit} per {settings.visitor_rate_window_seconds} s per visitor; visitors' ceiling "
        f"${settings.public_budget_usd if settings.public_budget_usd is not None else '(unset)'}")
    return stub
