"""Shortening a long conversation for the model, by a named profile. The stored conversation is
never changed: only what one request sends.

The count includes the system prompt and the tool schemas actually sent, counted as high as the
spending reservation counts them, so a history that fits here never surprises the budget.
Whole earlier exchanges (a question with everything that answered it) are dropped oldest first,
so the transcript a provider sees never holds a tool result without its call; the summarising
strategy (`chat/summarise.py`) folds them into a summary instead. A history that still fits but is
near the limit is sent as it is, `warned`, so the reader knows shortening comes next.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from groundchat.chat.steps import ModelStep
from groundchat.config import HISTORY_PROFILE_NAMES
from groundchat.exchange.frames import HistoryFrame
from groundchat.models.messages import Message, ModelRequest, ToolSpec
from groundchat.spending.token_estimate import estimate_request_tokens

Strategy = Literal["drop-oldest", "summarise-oldest"]
STRATEGIES: tuple[str, ...] = ("drop-oldest", "summarise-oldest")
# Past this share of the limit a history that still fits is `warned`: shortening comes next.
WARN_FRACTION = 0.8


@dataclass(frozen=True)
class HistoryPolicy:
    strategy: Strategy
    max_input_tokens: int
    # At most this many earlier exchanges are sent, however few tokens they hold (None: no bound).
    max_exchanges: int | None = None
    # The profile's name, shown in the `history` frame ("custom" for an explicit policy).
    name: str = "custom"


PROFILES: dict[str, HistoryPolicy] = {
    # A visitor asks a few short questions: keep requests small and cheap (the public mode's profile).
    "visitor-qa": HistoryPolicy("drop-oldest", 12_000, max_exchanges=4, name="visitor-qa"),
    "standard": HistoryPolicy("drop-oldest", 48_000, name="standard"),
    # Long working sessions on models with large windows: the oldest exchanges are summarised by
    # the configured model (a charged step), and the person's opening message is kept word for word.
    "long-authoring": HistoryPolicy("summarise-oldest", 150_000, name="long-authoring"),
}
# The settings refuse any other name at load (`config.HISTORY_PROFILE_NAMES`): the two lists are one.
assert tuple(PROFILES) == HISTORY_PROFILE_NAMES


class UnknownHistoryProfile(ValueError):
    pass


def policy_for(profile: str | None = None, *, strategy: str | None = None, max_input_tokens: int | None = None) -> HistoryPolicy:
    if strategy is not None or max_input_tokens is not None:
        if strategy not in STRATEGIES or not max_input_tokens or max_input_tokens <= 0:
            raise UnknownHistoryProfile(f"an explicit history policy needs a strategy ({' or '.join(STRATEGIES)}) "
                                        "and a positive max_input_tokens")
        return HistoryPolicy(strategy, max_input_tokens)  # type: ignore[arg-type]
    name = profile or "standard"
    if name not in PROFILES:
        raise UnknownHistoryProfile(f"unknown history profile {name!r}; valid: {', '.join(PROFILES)}")
    return PROFILES[name]


@dataclass
class Shortened:
    outcome: Literal["unchanged", "warned", "reduced", "failed"]
    messages: list[Message]
    codes: list[str] = field(default_factory=list)
    reason: str | None = None  # for "failed": compaction_failed | cannot_reduce | overhead_exceeds_limit
    tokens: int = 0
    limit: int = 0
    dropped_messages: int = 0
    profile: str = ""
    # How older exchanges are shortened on this path: dropped, or folded into a summary. The page
    # says which ("left out" is not "summarised").
    strategy: Strategy = "drop-oldest"
    # Earlier messages the model sees only as the summary (the summarising strategy).
    summarised_messages: int = 0
    # The summarising model steps this shortening took: charged, and recorded in the run's trace.
    steps: list[ModelStep] = field(default_factory=list)

    def frame(self) -> HistoryFrame:
        return HistoryFrame(outcome=self.outcome, codes=self.codes, tokens=self.tokens, max_input_tokens=self.limit,
                            reason=self.reason or None, dropped_messages=self.dropped_messages,
                            profile=self.profile or None, summarised_messages=self.summarised_messages,
                            strategy=self.strategy)


class Compactor(Protocol):
    """A strategy that needs a model (the summariser): async, charged, and given the whole policy."""

    async def compact(self, history: list[Message], question: Message, system: str, tools: list[ToolSpec],
                      policy: HistoryPolicy) -> Shortened: ...


async def shape_history(history: list[Message], question: Message, system: str, tools: list[ToolSpec],
                        policy: HistoryPolicy, *, summariser: Compactor | None = None) -> Shortened:
    """What the model is sent of `history`, by the policy's strategy, named by its profile. Without
    a summariser (a new conversation, a tool run on its own) the oldest exchanges are dropped."""
    if policy.strategy == "summarise-oldest" and summariser is not None and history:
        shaped = await summariser.compact(history, question, system, tools, policy)
        shaped.strategy = "summarise-oldest"
    else:
        shaped = shorten(history, question, system, tools, policy)
    shaped.profile = policy.name
    return shaped


def near_limit(shaped: Shortened) -> Shortened:
    """`unchanged` becomes `warned` past WARN_FRACTION of the limit (the history still goes whole)."""
    if shaped.outcome == "unchanged" and shaped.tokens > WARN_FRACTION * shaped.limit:
        shaped.outcome = "warned"
        shaped.codes = [*shaped.codes, "history.near_limit"]
    return shaped


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
        groups = _exchanges(history)
        if policy.max_exchanges is not None and len(groups) > policy.max_exchanges:
            groups = groups[len(groups) - policy.max_exchanges:] if policy.max_exchanges else []
            kept = [m for g in groups for m in g]
            total = _count(system, [*kept, question], tools)
            if total <= limit:
                return Shortened("reduced", kept, ["history.dropped_oldest"], None, total, limit,
                                 dropped_messages=len(history) - len(kept))
        total = _count(system, [*history, question], tools)
        if total <= limit:
            return near_limit(Shortened("unchanged", list(history), [], None, total, limit))
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
