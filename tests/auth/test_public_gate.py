"""The public gate on its own, with a counting limiter and verifier: the rate limit comes first,
people keep their grants, visitors pass the bot wall once per session."""
from __future__ import annotations

from groundchat.auth.callers import Caller
from groundchat.config import Settings
from groundchat.exchange.refusal import Refusal
from groundchat.public.bot_wall import HumanCheck
from groundchat.public.gate import Admitted, PublicGate, Visit
from groundchat.public.rate_limit import RateDecision
from groundchat.public.visitor_sessions import issue_session

SETTINGS = Settings(mode="public", visitor_secret="g" * 40, visitor_rate_limit=1)
NOW = 1_800_000_000.0


class Limiter:
    def __init__(self, allowed: bool) -> None:
        self.allowed, self.keys = allowed, []

    async def admit(self, key: str) -> RateDecision:
        self.keys.append(key)
        return RateDecision(True) if self.allowed else RateDecision(False, 7)


class Verifier:
    def __init__(self, outcome: str) -> None:
        self.outcome, self.tokens = outcome, []

    async def verify(self, token: str, remote_ip: str | None = None) -> HumanCheck:
        self.tokens.append(token)
        return HumanCheck(self.outcome)


async def may_chat(permission: str, caller: Caller) -> bool:
    return caller.id == "alice"


def gate(allowed=True, outcome="human") -> PublicGate:
    return PublicGate(SETTINGS, Limiter(allowed), Verifier(outcome), clock=lambda: NOW)


async def test_the_rate_limit_comes_before_anything_else_and_keys_no_raw_address():
    g = gate(allowed=False)
    refused = await g.admit(Caller(id="alice"), Visit(address="203.0.113.1", human_check_token="t"), may_chat)
    assert refused == Refusal(429, "rate-limited", "Too many questions from your address: wait 7 s, then ask again.",
                              headers={"Retry-After": "7"}, extra={"retry_after": 7})
    assert g.verifier.tokens == [] and "203.0.113.1" not in g.limiter.keys[0]


async def test_people_keep_their_grants_and_skip_the_bot_wall():
    g = gate()
    assert await g.admit(Caller(id="alice"), Visit(address="a"), may_chat) == Admitted(Caller(id="alice"))
    assert (await g.admit(Caller(id="bob"), Visit(address="a"), may_chat)).code == "forbidden"
    assert g.verifier.tokens == []


async def test_a_question_asked_in_process_has_no_address_to_limit():
    g = gate(allowed=False)
    assert await g.admit(Caller(id="alice"), None, may_chat) == Admitted(Caller(id="alice"))
    assert (await g.admit(None, None, may_chat)).code == "human-check-required"  # and no visitor without a check
    assert g.limiter.keys == []


async def test_a_visitor_is_checked_once_then_rides_the_session():
    g = gate()
    first = await g.admit(None, Visit(address="a", human_check_token="tok"), may_chat)
    assert isinstance(first, Admitted) and first.caller.is_visitor and first.new_session is not None
    again = await g.admit(None, Visit(address="a", session=first.new_session.token, human_check_token="tok2"), may_chat)
    assert again == Admitted(first.caller)  # no new session, no second check
    assert g.verifier.tokens == ["tok"]


async def test_a_run_out_session_carries_its_visitor_into_the_next_check():
    g = gate()
    old = issue_session(SETTINGS.visitor_secret, "visitor:" + "c" * 32, minutes=1, now=NOW - 600)
    renewed = await g.admit(None, Visit(address="a", session=old.token, human_check_token="t"), may_chat)
    assert renewed.caller.id == "visitor:" + "c" * 32 and renewed.new_session.visitor_id == renewed.caller.id


async def test_rejection_and_outage_are_different_answers():
    assert (await gate(outcome="not-human").admit(None, Visit(human_check_token="t"), may_chat)).status == 403
    down = await gate(outcome="unavailable").admit(None, Visit(human_check_token="t"), may_chat)
    assert (down.status, down.code, down.headers) == (503, "bot-check-unavailable", {"Retry-After": "30"})
