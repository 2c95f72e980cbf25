"""The offline answerer: a deterministic stand-in for a model on machines with none configured.

It picks tools from the question, calls them through the same loop as a real model, and writes
its answer from their results with templates. It writes no prose of its own, says on every answer
that it is the offline answerer, and costs nothing. It is not a language model.
"""
from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, AsyncIterator, Awaitable, Callable, Protocol

from groundchat.offline import templates as answers
from groundchat.offline.earlier_turns import exchanges
from groundchat.offline.follow_up import resolve as resolve_follow_up
from groundchat.offline.router_changes import CHANGE_REFUSAL, DATA_TOOLS, acts_on_the_data, changes_what_came_before
from groundchat.offline.summary import offline_summary
from groundchat.offline.router import EVERYDAY_RULES, REFUSAL, Facets, Plan, known_names, route
from groundchat.offline.typed_names import corrected
from groundchat.models.messages import Message, ModelEvent, ModelRequest, StopEvent, TextDelta, ToolCallEvent, UsageEvent

if TYPE_CHECKING:
    from groundchat.config import Settings
    from groundchat.offline.earlier_turns import Call
    from groundchat.offline.templates import ToolOutcome

DISCLAIMER = "(This is the offline answerer: a deterministic stand-in that calls the tools and fills templates; it is not a language model.)"
# It reads no images: a question with images is refused before it runs (attachments.question), and
# one that reaches it anyway is answered in words that say the images were not looked at.
IMAGES_REFUSED = ("The offline answerer reads no images: ask in words, or set GROUNDCHAT_MODEL to a model "
                  "that accepts images (one with a published image token bound).")

log = logging.getLogger("groundchat.models")


class TopicJudge(Protocol):
    """How much more a question is like those the chat answers than those it declines
    (offline/topic_neighbours.py)."""

    def margin(self, question: str) -> float: ...


def _known_rules() -> set[str]:
    try:
        from groundchat.benchmark.axe_rules import rule_ids
    except ImportError:  # the facts table is not in this build
        return set()
    return set(rule_ids())


class OfflineAnswerer:
    model_id = "offline"
    price_id = "offline"
    images_refused = IMAGES_REFUSED

    def __init__(self, settings: Settings | None = None, facets: Callable[[], Awaitable[Facets]] | None = None,
                 topic: TopicJudge | None = None, nearness: Callable[[str], float | None] | None = None) -> None:
        self._rules = _known_rules()
        # The names the data holds (models, contexts, tasks, labels, rules), read when a question
        # comes: the router spells arguments as the data does.
        self._facets = facets
        # Whether a question is like those the chat answers (offline/topic_neighbours.py): given, or the
        # local embedding model's when the settings name it; without one the word lists decide alone.
        if topic is None and settings is not None:
            from groundchat.offline.topic_neighbours import local_topic_neighbours

            topic = local_topic_neighbours(settings.embedding_model)
        self._topic = topic
        # How near the corpus comes to a question (search/service.py `nearness`): a question the gate's
        # votes would decline is searched when the corpus has something near it.
        self._nearness = nearness

    def plan(self, question: str, offered: set[str], facets: Facets | None = None) -> list[Call]:
        """Which tools to call for a question, in order (only tools this caller is offered)."""
        topic = self._topic.margin if self._topic is not None else None
        return route(question, offered, facets or {}, self._rules, topic=topic).calls

    async def _known_names(self) -> Facets:
        if self._facets is None:
            return {}
        try:
            return await self._facets()
        except Exception:  # names help arguments; without them the router still picks the tool
            return {}

    async def _margin(self, question: str) -> float | None:
        if self._topic is None:
            return None
        try:  # the model runs off the event loop: its first call loads it and embeds the examples
            return await asyncio.to_thread(self._topic.margin, question)
        except Exception as exc:  # the word lists still decide; a broken model is not an outage here
            log.warning("topic likeness unavailable: %s: %s", type(exc).__name__, exc)
            return None

    async def _near(self, question: str) -> float | None:
        try:  # an embedding and a scan of the index: off the event loop
            return await asyncio.to_thread(self._nearness, question)
        except Exception as exc:  # the votes still decide; an index that is down is not an outage here
            log.warning("corpus nearness unavailable: %s: %s", type(exc).__name__, exc)
            return None

    async def __call__(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if request.purpose == "summary":  # a long conversation's oldest exchanges, to summarise
            yield TextDelta(text=offline_summary(request))
            yield UsageEvent(input_tokens=0, output_tokens=0)
            yield StopEvent(reason="end_turn")
            return
        offered = {t.name for t in request.tools}
        last_user = max(i for i, m in enumerate(request.messages) if m.role == "user")
        turn = request.messages[last_user:]
        question = turn[0].content
        if turn[0].images:
            yield TextDelta(text=IMAGES_REFUSED + "\n\n" + DISCLAIMER)
            yield UsageEvent(input_tokens=0, output_tokens=0)
            yield StopEvent(reason="end_turn")
            return
        called = [c.name for m in turn if m.role == "assistant" for c in m.tool_calls]
        if not called:
            names = await self._known_names()
            # Names as users type them, read the same way by the router and the follow-up reader.
            question = corrected(question, known_names(names, self._rules))
            margin = await self._margin(question)
            routed = route(question, offered, names, self._rules, topic=lambda _: margin)
            if routed.refusal == REFUSAL and self._nearness is not None:
                near = await self._near(question)
                routed = route(question, offered, names, self._rules, topic=lambda _: margin, nearness=lambda _: near)
            # A question that leans on the conversation ("and in round 3?", "which criterion is it?") is
            # read against the earlier turns' calls and results; one that cannot be pinned down is
            # answered with a question back, and nothing is called. The router's refusals of a request
            # to run, change or write something stand; its off-topic refusal does not bind a follow-up
            # ("and why does it matter?" says nothing of its subject alone).
            if routed.refusal in (None, REFUSAL) and _changes_the_data_shown(question, request.messages[:last_user]):
                routed = Plan(refusal=CHANGE_REFUSAL)
            follow_up = None
            if routed.refusal is None or routed.refusal == REFUSAL:
                follow_up = resolve_follow_up(question, request.messages[:last_user], offered, names, EVERYDAY_RULES,
                                              off_topic_alone=routed.refusal is not None)
            # An order is judged by what it acts on as the follow-up reads it: "drop the checklist one" is
            # the run the last list showed, and "nuke all of those" the runs themselves.
            if follow_up is not None and acts_on_the_data(question.lower(), follow_up.calls, follow_up.clarify is not None):
                routed, follow_up = Plan(refusal=CHANGE_REFUSAL), None
            if follow_up is not None and follow_up.clarify is not None:
                yield TextDelta(text=follow_up.clarify + "\n\n" + DISCLAIMER)
                yield UsageEvent(input_tokens=0, output_tokens=0)
                yield StopEvent(reason="end_turn")
                return
            if follow_up is not None:
                for j, (name, args) in enumerate(follow_up.calls):
                    yield ToolCallEvent(id=f"offline_{last_user}_{j}", name=name, args=args)
                yield UsageEvent(input_tokens=0, output_tokens=0)
                yield StopEvent(reason="tool_use")
                return
            if routed.refusal is not None:
                yield TextDelta(text=routed.refusal + "\n\n" + DISCLAIMER)
                yield UsageEvent(input_tokens=0, output_tokens=0)
                yield StopEvent(reason="end_turn")
                return
            plan = routed.calls
            if plan:
                for j, (name, args) in enumerate(plan):
                    yield ToolCallEvent(id=f"offline_{last_user}_{j}", name=name, args=args)
                yield UsageEvent(input_tokens=0, output_tokens=0)
                yield StopEvent(reason="tool_use")
                return
        results = _tool_results(turn)
        # Step 2, where the caller may be shown views: one view of the figures, tried once; a
        # refused view changes nothing, the text answer follows either way.
        view = answers.compose_view(results) if "show_view" in offered and "show_view" not in called else None
        if view is not None:
            yield ToolCallEvent(id=f"offline_{last_user}_view", name="show_view", args=view)
            yield UsageEvent(input_tokens=0, output_tokens=0)
            yield StopEvent(reason="tool_use")
            return
        text = answers.compose(question, results) + "\n\n" + DISCLAIMER
        yield TextDelta(text=text)
        yield UsageEvent(input_tokens=0, output_tokens=0)
        yield StopEvent(reason="end_turn")


def _changes_the_data_shown(question: str, earlier: list[Message]) -> bool:
    """"Ok delete those" after runs were listed: an order whose object points back, where the last
    exchange with tool calls called a data tool."""
    before = [e for e in exchanges(earlier) if e.calls]
    return bool(before) and any(name in DATA_TOOLS for name, _ in before[-1].calls) and \
        changes_what_came_before(question.lower())


def _tool_results(turn: list[Message]) -> list[ToolOutcome]:
    out = []
    for m in turn:
        if m.role != "tool":
            continue
        try:
            value = json.loads(m.content)
        except (json.JSONDecodeError, TypeError):
            value = m.content
        out.append((m.name or "", value, m.is_error))
    return out
