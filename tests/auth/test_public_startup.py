"""A public chat cannot be built with a hole in it: without a rate limit, a bot wall or a spending
ceiling for visitors, the chat function refuses to start (one line, at cold start) and so does
`groundchat serve`. One test per hole."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from groundchat.config import Settings
from groundchat.public.startup_check import PublicModeRefused, public_mode_problems

GUARDED = {
    "GROUNDCHAT_MODE": "public",
    "GROUNDCHAT_VISITOR_RATE_LIMIT": "5",
    "GROUNDCHAT_TURNSTILE_SITE_KEY": "site-key",
    "GROUNDCHAT_TURNSTILE_SECRET": "turnstile-secret",
    "GROUNDCHAT_PUBLIC_BUDGET_USD": "0.25",
    "GROUNDCHAT_VISITOR_SECRET": "x" * 32,
    "GROUNDCHAT_PUBLIC_DEV_AUTH": "local-only",  # these tests run dev auth on this machine
}


def app_with(monkeypatch, dynamo, **env):
    from chat_function.app import create_app
    from groundchat.config import get_settings, reset_settings_cache
    from groundchat.services import Services

    for name, value in {**GUARDED, **env}.items():
        monkeypatch.setenv(name, value)
    reset_settings_cache()
    return create_app(Services(settings=get_settings(), dynamo=dynamo))


def refusal(monkeypatch, dynamo, **env) -> str:
    with pytest.raises(PublicModeRefused) as refused:
        app_with(monkeypatch, dynamo, **env)
    line = str(refused.value)
    assert "\n" not in line and line.startswith("groundchat refuses to start in public mode: ")
    return line


def test_with_every_guard_the_public_chat_starts(monkeypatch, dynamo):
    app = app_with(monkeypatch, dynamo)
    assert app.state.services.public


def test_without_a_rate_limit_it_refuses(monkeypatch, dynamo):
    line = refusal(monkeypatch, dynamo, GROUNDCHAT_VISITOR_RATE_LIMIT="0")
    assert "no rate limit (set GROUNDCHAT_VISITOR_RATE_LIMIT" in line and "bot wall" not in line


def test_without_a_bot_wall_it_refuses(monkeypatch, dynamo):
    for missing in ("GROUNDCHAT_TURNSTILE_SITE_KEY", "GROUNDCHAT_TURNSTILE_SECRET"):
        line = refusal(monkeypatch, dynamo, **{missing: ""})
        assert "no bot wall (set GROUNDCHAT_TURNSTILE_SITE_KEY and GROUNDCHAT_TURNSTILE_SECRET)" in line
        assert "rate limit" not in line and "ceiling" not in line


def test_without_a_ceiling_for_visitors_it_refuses(monkeypatch, dynamo):
    line = refusal(monkeypatch, dynamo, GROUNDCHAT_PUBLIC_BUDGET_USD="")
    assert line.endswith("no spending ceiling for anonymous visitors (set GROUNDCHAT_PUBLIC_BUDGET_USD)")


def test_every_hole_is_named_at_once():
    problems = public_mode_problems(Settings(mode="public"))
    assert [p.split(" (")[0] for p in problems] == [
        "dev auth lets anyone in", "no rate limit", "no bot wall", "no spending ceiling for anonymous visitors",
        "no visitor secret"]


@pytest.mark.parametrize("env, said", [
    ({"GROUNDCHAT_VISITOR_SECRET": "short"}, "no visitor secret"),
    ({"GROUNDCHAT_VISITOR_PERMISSIONS": "chat.use,traces.read"}, "may not give visitors traces.read"),
    ({"GROUNDCHAT_VISITOR_PERMISSIONS": "docs.read"}, "must include chat.use"),
    ({"GROUNDCHAT_VISITOR_ADDRESS_FROM": "x-forwarded-for"}, "GROUNDCHAT_VISITOR_ADDRESS_FROM must be one of"),
    ({"GROUNDCHAT_TURNSTILE_VERIFY_URL": "http://verifier.example/siteverify"}, "must be https"),
    ({"GROUNDCHAT_TURNSTILE_VERIFY_URL": "http://127.0.0.1@verifier.example/siteverify"}, "must be https"),
    ({"GROUNDCHAT_TURNSTILE_VERIFY_URL": "http://localhost.verifier.example/siteverify"}, "must be https"),
    ({"GROUNDCHAT_TURNSTILE_VERIFY_URL": "http://127.0.0.1.nip.example/siteverify"}, "must be https"),
    ({"GROUNDCHAT_TURNSTILE_VERIFY_URL": "http://127.0.0.1:99999/siteverify"}, "must be https"),
    ({"GROUNDCHAT_PUBLIC_DEV_AUTH": ""}, "dev auth lets anyone in (set GROUNDCHAT_AUTH_MODE=oidc"),
    ({"GROUNDCHAT_PUBLIC_DEV_AUTH": "yes"}, "dev auth lets anyone in"),
    ({"AWS_LAMBDA_FUNCTION_NAME": "chat"}, "GROUNDCHAT_PUBLIC_DEV_AUTH=local-only is refused in AWS"),
    ({"GROUNDCHAT_PUBLIC_BUDGET_USD": "-1"}, "is negative"),
])
def test_other_unsafe_settings_refuse_too(monkeypatch, dynamo, env, said):
    assert said in refusal(monkeypatch, dynamo, **env)


def test_private_mode_needs_none_of_it_and_an_unknown_mode_refuses():
    assert public_mode_problems(Settings()) == []
    assert public_mode_problems(Settings(mode="open")) == ["GROUNDCHAT_MODE must be 'private' or 'public', not 'open'"]


def _cold_start(env: dict[str, str]) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDCHAT_")}
    return subprocess.run([sys.executable, "-c", "import chat_function.main"], env={**clean, **env},
                          capture_output=True, text=True, timeout=120)


def test_the_function_fails_its_cold_start_with_one_line(tmp_path):
    done = _cold_start({**GUARDED, "GROUNDCHAT_HOME": str(tmp_path), "GROUNDCHAT_PUBLIC_BUDGET_USD": ""})
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "groundchat refuses to start in public mode: no spending ceiling for anonymous visitors (set GROUNDCHAT_PUBLIC_BUDGET_USD)"]


def test_groundchat_serve_refuses_with_one_line_before_starting_anything(monkeypatch, capsys, tmp_path):
    from groundchat.config import reset_settings_cache
    from groundchat_cli.main import main

    monkeypatch.setenv("GROUNDCHAT_MODE", "public")
    reset_settings_cache()
    assert main(["serve", "--port", "8765"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("groundchat refuses to start in public mode: dev auth lets anyone in")
    assert "no rate limit" in err[0]
    assert not list((tmp_path / "home").glob("stack-*.json"))  # no stack was started


def test_serve_public_brings_a_bot_wall_but_keeps_a_rate_limit_set_to_none(monkeypatch, capsys):
    from groundchat.config import reset_settings_cache
    from groundchat_cli.main import main

    monkeypatch.setenv("GROUNDCHAT_VISITOR_RATE_LIMIT", "0")
    for name in ("GROUNDCHAT_MODE", "GROUNDCHAT_TURNSTILE_SITE_KEY", "GROUNDCHAT_TURNSTILE_SECRET", "GROUNDCHAT_TURNSTILE_VERIFY_URL",
                 "GROUNDCHAT_TURNSTILE_SCRIPT_URL", "GROUNDCHAT_PUBLIC_BUDGET_USD", "GROUNDCHAT_VISITOR_SECRET"):
        monkeypatch.setenv(name, os.environ.get(name, ""))  # restored after the test: serve sets them
    monkeypatch.delenv("GROUNDCHAT_PUBLIC_BUDGET_USD")
    reset_settings_cache()
    assert main(["serve", "--public", "--port", "8765"]) == 2
    out, err = capsys.readouterr()
    assert "public mode: Turnstile stub on http://127.0.0.1:" in out
    assert err.strip() == ("groundchat refuses to start in public mode: no rate limit (set GROUNDCHAT_VISITOR_RATE_LIMIT, "
                           "questions per visitor per GROUNDCHAT_VISITOR_RATE_WINDOW_SECONDS, to a positive number)")


async def test_a_question_asked_in_process_meets_the_same_refusal(monkeypatch, dynamo):
    """The CLI answers in process without the app: the use case refuses a public mode with a hole."""
    from groundchat.auth.callers import Caller
    from groundchat.chat.answer import Refusal, answer_question
    from groundchat.config import get_settings, reset_settings_cache
    from groundchat.services import Services
    from groundchat_testkit.scripted import ScriptedModel, Step

    for name, value in {**GUARDED, "GROUNDCHAT_VISITOR_RATE_LIMIT": "0"}.items():
        monkeypatch.setenv(name, value)
    reset_settings_cache()
    model = ScriptedModel([Step(text="never")])
    services = Services(settings=get_settings(), dynamo=dynamo, model_override=model)
    refused = await answer_question(services, Caller(id="alice"), {"message": "hi"})
    assert isinstance(refused, Refusal) and (refused.status, refused.code) == (503, "chat-not-configured")
    assert refused.message.startswith("Public mode lacks a guard: no rate limit") and model.calls == 0


@pytest.mark.parametrize("url", ["https://challenges.example/siteverify", "http://127.0.0.1:8123/siteverify",
                                 "http://localhost:8123/siteverify", "http://[::1]:8123/siteverify"])
def test_https_and_a_stub_on_this_machine_are_accepted_as_verifiers(url):
    from groundchat.public.startup_check import verify_url_is_safe

    assert verify_url_is_safe(url)
