"""Shortening a long conversation for the model, by a named profile. The stored conversation is
never changed: only what one request sends.

The count includes the system prompt and the tool schemas actually sent, counted as high as the
spending reservation counts them, so a history that fits here never surprises the budget.
Whole earlier exchanges (a question with everything that answered it) are dropped oldest first,
so the transcript a provider sees never holds a tool result without its call.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from groundchat.chat.frames import HistoryFrame
from groundchat.models.messages import Message, ModelRequest, ToolSpec
from groundchat.spending.token_estimate import estimate_request_tokens

Strategy = Literal["drop-oldest"]


@dataclass(frozen=True)
class HistoryPolicy:
    strategy: Strategy
    max_input_tokens: int


PROFILES: dict[str, HistoryPolicy] = {
    # A visitor asks a few short questions: keep requests small and cheap.
    "visitor-qa": HistoryPolicy("drop-oldest", 12_000),
    "standard": HistoryPolicy("drop-oldest", 48_000),
    # Long working sessions on models with large windows.
    "long-authoring": HistoryPolicy("drop-oldest", 150_000),
}


class UnknownHistoryProfile(ValueError):
    pass


def policy_for(profile: str | None = None, *, strategy: str | None = None, max_input_tokens: int | None = None) -> HistoryPolicy:
    if strategy is not None or max_input_tokens is not None:
        if strategy not in ("drop-oldest",) or not max_input_tokens or max_input_tokens <= 0:
            raise UnknownHistoryProfile("an explicit history policy needs strategy 'drop-oldest' and a positive max_input_tokens")
        return HistoryPolicy(strategy, max_input_tokens)  # type: ignore[arg-type]
    name = profile or "standard"
    if name not in PROFILES:
        raise UnknownHistoryProfile(f"unknown history profile {name!r}; known: {', '.join(PROFILES)}")
    return PROFILES[name]


@dataclass
class Shortened:
    outcome: Literal["unchanged", "reduced", "failed"]
    messages: list[Message]
    codes: list[str] = field(default_factory=list)
    reason: str | None = None  # for "failed": compaction_failed | cannot_reduce | overhead_exceeds_limit
    tokens: int = 0
    limit: int = 0
    dropped_messages: int = 0

    def frame(self) -> HistoryFrame:
        return HistoryFrame(outcome=self.outcome, codes=self.codes, tokens=self.tokens, max_input_tokens=self.limit,
                            reason=self.reason or None, dropped_messages=self.dropped_messages)


def _count(system: str, messages: list[Message], tools: list[ToolSpec]) -> int:
    return estimate_request_tokens(ModelRequest(system=system, messages=messages, tools=tools))


def _exchanges(history: list[Message]) -> list[list[Message]]:
    """Earlier turns grouped by question: each group starts at a user turn."""
    groups: list[list[Message]] = []
    for message in history:
        if message.role == "user" or not groups:
            groups.append([message])
        else:
            groups[-1].append(message)
    return groups


def shorten(history: list[Message], question: Message, system: str, tools: list[ToolSpec], policy: HistoryPolicy) -> Shortened:
    """What to send of `history` before `question` so the request fits `policy`."""
    limit = policy.max_input_tokens
    try:
        overhead = _count(system, [], tools)
        if overhead > limit:
            return Shortened("failed", [], ["history.overhead_exceeds_limit"], "overhead_exceeds_limit", overhead, limit)
        total = _count(system, [*history, question], tools)
        if total <= limit:
            return Shortened("unchanged", list(history), [], None, total, limit)
        groups = _exchanges(history)
        while groups:
            groups.pop(0)
            kept = [m for g in groups for m in g]
            total = _count(system, [*kept, question], tools)
            if total <= limit:
                return Shortened("reduced", kept, ["history.dropped_oldest"], None, total, limit,
                                 dropped_messages=len(history) - len(kept))
        alone = _count(system, [question], tools)
        return Shortened("failed", [], ["history.cannot_reduce"], "cannot_reduce", alone, limit, dropped_messages=len(history))
    except Exception:  # a strategy that breaks must not send an unchecked history
        return Shortened("failed", [], ["history.compaction_failed"], "compaction_failed", 0, limit,
                         dropped_messages=len(history))
