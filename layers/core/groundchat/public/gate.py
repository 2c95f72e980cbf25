"""Who may ask in public mode, decided in the order of the README's "Going public": the rate limit
(429, local and free), then the caller: a signed-in person with their own grants (403), or an
anonymous visitor behind the bot wall (a valid session; else a human-check token, verified once:
403 `not-human`, 503 `bot-check-unavailable`; neither: 401). The body, the conversation and the
caps come after, in the answer use case."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Awaitable, Callable

from groundchat.auth.callers import CHAT_USE, Caller
from groundchat.exchange.refusal import IssuedSession, Refusal
from groundchat.public.addresses import address_key
from groundchat.public.visitor_sessions import issue_session, read_session
from groundchat.public.visitors import new_visitor_id, visitor

if TYPE_CHECKING:  # the verifier (and httpx) load only where public mode builds them
    from groundchat.public.bot_wall import TurnstileVerifier
    from groundchat.public.rate_limit import SlidingWindowLimiter

# How soon a visitor may try again when the verifier is down.
VERIFIER_RETRY_SECONDS = 30


@dataclass(frozen=True)
class Visit:
    """What one HTTP request says about who sends it (read by the chat function, judged here)."""

    address: str | None = None  # the source IP: hashed for the rate limit, never stored
    session: str | None = None  # the visitor session cookie
    human_check_token: str | None = None  # a fresh Turnstile token


@dataclass(frozen=True)
class Admitted:
    caller: Caller
    new_session: IssuedSession | None = None  # to set as the visitor's cookie


class PublicGate:
    def __init__(self, settings, limiter: "SlidingWindowLimiter", verifier: "TurnstileVerifier",
                 clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.limiter = limiter
        self.verifier = verifier
        self.clock = clock

    async def admit(self, caller: Caller | None, visit: Visit | None, can: Callable[[str, Caller], Awaitable[bool]]) -> Admitted | Refusal:
        """`visit` is None only for a question asked in process (the CLI, the benchmarks), which has
        no address to limit; anything that arrives over HTTP has one."""
        if visit is not None:
            refused = await self._rate_limited(visit)
            if refused:
                return refused
        visit = visit or Visit()
        if caller is not None and not caller.is_visitor:
            if not await can(CHAT_USE, caller):
                return Refusal(403, "forbidden", f"You do not have the permission {CHAT_USE!r}.")
            return Admitted(caller)
        return await self._visitor(visit)

    async def _rate_limited(self, visit: Visit) -> Refusal | None:
        decision = await self.limiter.admit(address_key(self.settings.visitor_secret, visit.address))
        if not decision.allowed:
            wait = decision.retry_after_seconds
            return Refusal(429, "rate-limited", f"Too many questions from your address: wait {wait} s, then ask again.",
                           headers={"Retry-After": str(wait)}, extra={"retry_after": wait})
        return None

    async def _visitor(self, visit: Visit) -> Admitted | Refusal:
        secret, now = self.settings.visitor_secret, self.clock()
        session = read_session(secret, visit.session, now)
        if session is not None and not session.expired:
            return Admitted(visitor(session.visitor_id))
        if not visit.human_check_token:
            minutes = self.settings.visitor_session_minutes
            return Refusal(401, "human-check-required",
                              f"Complete the human check, then ask (visitors repeat it every {minutes} minutes).")
        check = await self.verifier.verify(visit.human_check_token, visit.address)
        if check.outcome == "not-human":
            return Refusal(403, "not-human", "The human check did not pass: try it again.")
        if check.outcome != "human":
            return Refusal(503, "bot-check-unavailable",
                              "The human check cannot be reached, so nothing was asked: try again in a minute.",
                              headers={"Retry-After": str(VERIFIER_RETRY_SECONDS)})
        # A visitor whose session just ran out keeps their id, and so their conversation.
        visitor_id = session.visitor_id if session is not None else new_visitor_id()
        issued = issue_session(secret, visitor_id, self.settings.visitor_session_minutes, now)
        return Admitted(visitor(visitor_id), issued)
