"""The bot wall against the Turnstile stub: a pass, a refusal, and every way the verifier can fail,
which must fail closed and never look like a refusal."""
from __future__ import annotations

import httpx
import pytest

from groundchat.public.bot_wall import HumanCheck, TurnstileVerifier
from groundchat_cli.turnstile_stub import TurnstileStub


@pytest.fixture(scope="module")
def stub():
    with TurnstileStub() as running:
        yield running


@pytest.fixture(autouse=True)
def _fresh(stub):
    stub.answer, stub.widget = "yes", "works"
    stub.checks.clear()


def verifier(stub, secret=None, timeout=2.0, url=None) -> TurnstileVerifier:
    return TurnstileVerifier(secret or stub.secret, url or stub.verify_url, timeout)


async def test_a_good_token_passes_once_and_sends_the_secret_and_address(stub):
    wall = verifier(stub)
    assert await wall.verify("tok-1", "203.0.113.9") == HumanCheck("human")
    assert stub.checks == [{"token": "tok-1", "remoteip": "203.0.113.9", "answer": "yes"}]
    # Tokens are single use at the verifier: a replay is refused as not human.
    assert await wall.verify("tok-1", "203.0.113.9") == HumanCheck("not-human", "timeout-or-duplicate")


async def test_a_refused_token_is_not_human(stub):
    stub.answer = "no"
    assert await verifier(stub).verify("tok-2") == HumanCheck("not-human", "invalid-input-response")


@pytest.mark.parametrize("answer, reason", [("down", "http 503"), ("error", "internal-error")])
async def test_a_verifier_outage_is_unavailable_not_a_refusal(stub, answer, reason):
    stub.answer = answer
    assert await verifier(stub).verify("tok-3") == HumanCheck("unavailable", reason)


async def test_a_slow_verifier_times_out_as_unavailable(stub):
    stub.answer, stub.slow_seconds = "slow", 1.5
    assert await verifier(stub, timeout=0.3).verify("tok-4") == HumanCheck("unavailable", "timeout")


async def test_an_unreachable_verifier_is_unavailable():
    from groundchat_cli.stack_address import free_port

    check = await TurnstileVerifier("s", f"http://127.0.0.1:{free_port()}/siteverify", 1.0).verify("tok-5")
    assert check.outcome == "unavailable" and check.reason.startswith("unreachable")


async def test_our_wrong_secret_is_our_outage_not_the_visitors_fault(stub):
    assert await verifier(stub, secret="wrong").verify("tok-6") == HumanCheck("unavailable", "invalid-input-secret")


async def test_a_garbled_answer_is_unavailable():
    def garbled(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="<html>captive portal</html>")

    wall = TurnstileVerifier("s", "https://verifier.test/siteverify", 1.0, transport=httpx.MockTransport(garbled))
    assert await wall.verify("tok-7") == HumanCheck("unavailable", "the answer is not JSON")


async def test_an_empty_or_oversized_token_is_refused_without_a_call(stub):
    wall = verifier(stub)
    assert (await wall.verify("")).outcome == "not-human"
    assert (await wall.verify("x" * 2049)).outcome == "not-human"
    assert stub.checks == []
