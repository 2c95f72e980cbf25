"""Follow-ups in the offline answerer: a question read against the conversation it is given.

The set (tests/eval/offline_follow_ups.jsonl, 40 conversations written before the resolver) is
halved by hash of the id; each conversation's earlier turns are replayed with their tool calls run by
the real tools on the sample, and its last question goes through OfflineAnswerer.__call__ as the
loop would send it. Scored: the first tool and its arguments (a docs search by its source), or a
one-sentence question back ("clarify") with no tool call."""
from __future__ import annotations

import hashlib
import json
from types import SimpleNamespace
from typing import Any

import pytest

from groundchat.auth.callers import Caller
from groundchat.models.messages import Message, ModelRequest, TextDelta, ToolCall, ToolCallEvent, tool_result_text
from groundchat.offline import templates
from groundchat.offline.answerer import DISCLAIMER, OfflineAnswerer
from groundchat.offline.router import INTRODUCTION, REFUSAL, RUN_REFUSAL
from groundchat.tools.base import ToolRegistry
from groundchat_cli import sample
from tests.corpus_support import REPO_ROOT

SET = [json.loads(line) for line in (REPO_ROOT / "tests" / "eval" / "offline_follow_ups.jsonl").read_text(
    encoding="utf-8").splitlines() if line.strip()]
# Written after the resolver was decided and run once (0.80); its four misses were read and taught
# "is that …", "which one / which of them", a search continued by new words, runs ranked "of them":
# tuning data since.
SECOND = [json.loads(line) for line in (REPO_ROOT / "tests" / "eval" / "offline_follow_ups_second.jsonl").read_text(
    encoding="utf-8").splitlines() if line.strip()]
FACETS = sample.sample_names()


async def _names() -> dict[str, list[str]]:
    return FACETS


def _registry() -> ToolRegistry:
    from groundchat.tools.data_tools import DATA_TOOLS
    from groundchat.tools.docs_tools import search_docs

    async def allow(permission, caller):
        return True

    return ToolRegistry([*DATA_TOOLS, search_docs], allow)


async def _history(turns: list[dict[str, Any]], registry: ToolRegistry, ctx) -> list[Message]:
    """The earlier turns as the store hands them back: the question, the assistant turn with its tool
    calls, each call's result from the real tool, and the answer the templates write from them."""
    messages: list[Message] = []
    for i, turn in enumerate(turns):
        messages.append(Message(role="user", content=turn["q"]))
        calls = [ToolCall(id=f"t{i}_{j}", name=name, args=args) for j, (name, args) in enumerate(turn["calls"])]
        results = []
        if calls:
            messages.append(Message(role="assistant", tool_calls=calls))
            for call in calls:
                value = await registry.execute(call.name, call.args, ctx)
                messages.append(Message(role="tool", tool_call_id=call.id, name=call.name, content=tool_result_text(value)))
                results.append((call.name, value, False))
            answer = templates.compose(turn["q"], results)
        else:
            answer = INTRODUCTION
        messages.append(Message(role="assistant", content=answer + "\n\n" + DISCLAIMER))
    return messages


async def answered(answerer: OfflineAnswerer, conversation: dict[str, Any], registry: ToolRegistry, ctx) -> tuple[str, dict]:
    """What the answerer does with the conversation's last question: its first tool call, "clarify" for
    a question back without a tool, "none" for a refusal."""
    messages = [*await _history(conversation["turns"], registry, ctx), Message(role="user", content=conversation["q"])]
    specs = [t.spec() for t in await registry.offered(ctx.caller)]
    events = [e async for e in answerer(ModelRequest(system="s", messages=messages, tools=specs))]
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    if calls:
        return calls[0].name, calls[0].args
    text = "".join(e.text for e in events if isinstance(e, TextDelta)).removesuffix("\n\n" + DISCLAIMER)
    return ("none", {}) if text in (REFUSAL, RUN_REFUSAL, INTRODUCTION) else ("clarify", {"text": text})


def right(conversation: dict[str, Any], tool: str, args: dict[str, Any]) -> bool:
    if tool != conversation["tool"]:
        return False
    if tool == "search_docs":
        return args.get("source") == conversation["args"].get("source")
    if tool == "clarify":
        return True
    return args == conversation["args"]


async def scored(conversations, dynamo, topic_margin) -> dict[str, Any]:
    from groundchat.services import Services
    from tests.moto_snapshot import sample_loaded_async

    await sample_loaded_async(dynamo)
    ctx = Services(settings=dynamo.settings, dynamo=dynamo).tool_context(Caller(id="u"))
    answerer = OfflineAnswerer(facets=_names, topic=SimpleNamespace(margin=topic_margin))
    registry = _registry()
    misses = []
    for conversation in conversations:
        tool, args = await answered(answerer, conversation, registry, ctx)
        if not right(conversation, tool, args):
            misses.append({"id": conversation["id"], "expected": [conversation["tool"], conversation["args"]],
                           "answered": [tool, args]})
    n = len(conversations)
    return {"n": n, "right": round((n - len(misses)) / n, 3), "misses": misses}


def _half(conversation_id: str) -> str:
    return "tune" if int(hashlib.sha256(("follow-ups-1|" + conversation_id).encode()).hexdigest()[:8], 16) % 2 == 0 else "report"


def test_the_set_is_forty_conversations_halved_by_hash_of_the_id():
    assert len(SET) == 40 and len({c["id"] for c in SET}) == 40
    assert all(c["split"] == _half(c["id"]) for c in SET)
    assert {c["split"] for c in SET} == {"tune", "report"}
    assert all(1 <= len(c["turns"]) <= 2 for c in SET)
    assert {c["kind"] for c in SET} == {"data", "rule", "texts", "clarify", "switch"}
    assert sum(c["tool"] == "clarify" for c in SET) >= 5 and sum(c["kind"] == "switch" for c in SET) >= 5


async def test_on_the_tune_half_follow_ups_reach_the_right_tool_and_arguments(dynamo, topic_margin):
    figures = await scored([c for c in SET if c.get("split") == "tune"], dynamo, topic_margin)
    assert figures["n"] == 21
    assert figures["right"] >= 1.0, figures["misses"]


async def test_on_the_report_half_follow_ups_reach_the_right_tool_and_arguments(dynamo, topic_margin):
    figures = await scored([c for c in SET if c.get("split") == "report"], dynamo, topic_margin)
    assert figures["n"] == 19
    # Never read question by question: only the figure is looked at.
    assert figures["right"] >= 0.90, figures["right"]



async def test_on_the_second_set_follow_ups_reach_the_right_tool_and_arguments(dynamo, topic_margin):
    assert len(SECOND) == 20 and not {c["q"] for c in SECOND} & {c["q"] for c in SET}
    figures = await scored(SECOND, dynamo, topic_margin)
    assert figures["right"] >= 1.0, figures["misses"]


# The example pair and the cases that must ask back, each through the loop as a user would meet it.
# Words of the test's own, standing in for the criterion's text: only its ref is asserted on.
CONTRAST_TEXT = "Stand-in text for criterion 1.4.3, written for this test."
CONTRAST_REF = "1a43c0de"


class _Criteria:
    """The document index as the rule lookup reads it: a criterion's text and ref by its number."""

    def get_section(self, source: str, number: str):
        return {"text": CONTRAST_TEXT, "ref": CONTRAST_REF} if (source, number) == ("wcag22", "1.4.3") else None


def _search_turn(question: str) -> list[Message]:
    """An earlier question answered by a search: the call, and a result whose passage is not 1.4.3."""
    excerpt = {"ref": "4f0c1a2b", "source": "wcag22", "section": "2.4.13", "title": "2.4.13 Focus Appearance",
               "url": "https://www.w3.org/TR/WCAG22/#focus-appearance", "text": "When the keyboard focus indicator is visible …",
               "updated_at": None}
    call = ToolCall(id="t0_0", name="search_docs", args={"query": question})
    return [Message(role="user", content=question), Message(role="assistant", tool_calls=[call]),
            Message(role="tool", tool_call_id="t0_0", name="search_docs",
                    content=json.dumps({"outcome": "hit", "excerpts": [excerpt]})),
            Message(role="assistant", content="… [4f0c1a2b]\n\n" + DISCLAIMER)]


async def _exchange(history: list[Message], question: str):
    from groundchat.chat.loop import run_exchange
    from groundchat.grounding.citations import check_citations
    from groundchat_testkit.answer_runs import kept_run
    from groundchat.tools.base import ToolContext
    from groundchat.tools.docs_tools import search_docs
    from groundchat.tools.rule_tool import explain_rule

    async def allow(permission, caller):
        return True

    ex = []

    async def commit(exchange):
        ex.append(exchange)

    run = await kept_run(OfflineAnswerer(facets=_names), ToolRegistry([explain_rule, search_docs], allow),
                         ctx=ToolContext(caller=Caller(id="u"), docs=_Criteria()), history=history, question=question,
                         on_commit=commit)
    frames = [f async for f in run_exchange(run)]
    calls = [(f.data["name"], f.data["args"]) for f in frames if f.type == "tool-call"]
    text = "".join(f.data["text"] for f in frames if f.type == "text")
    cited = check_citations(text, ex[0].answer.tool_results) if ex else None
    return calls, text, cited, frames[-1].data["reason"]


async def test_which_criterion_after_why_low_contrast_matters_is_1_4_3_through_the_rule_lookup_cited():
    calls, text, cited, reason = await _exchange(_search_turn("Why does low color contrast matter?"),
                                                 "And which criterion is it?")
    assert calls == [("explain_rule", {"rule_id": "color-contrast"})]
    assert "- 1.4.3 Contrast (Minimum) (Level AA)" in text and f"[{CONTRAST_REF}]" in text
    assert [(s["ref"], s["section"], s["status"]) for s in cited["sources"]] == [(CONTRAST_REF, "1.4.3", "verified")]
    assert cited["unverified"] == [] and "4.1.1" not in text and reason == "complete"


async def test_why_does_it_matter_after_a_rule_lookup_searches_that_criterion_instead_of_declining():
    _, looked_up, _, _ = await _exchange([], "what does the color-contrast rule check?")
    history = [Message(role="user", content="what does the color-contrast rule check?"),
               Message(role="assistant", tool_calls=[ToolCall(id="t0_0", name="explain_rule", args={"rule_id": "color-contrast"})]),
               Message(role="tool", tool_call_id="t0_0", name="explain_rule", content=json.dumps({
                   "rule_id": "color-contrast", "criteria": [{"number": "1.4.3", "handle": "Contrast (Minimum)", "level": "AA"}]})),
               Message(role="assistant", content=looked_up)]
    calls, text, _, reason = await _exchange(history, "And why does it matter?")
    assert calls == [("search_docs", {"query": "And why does it matter? (color contrast: 1.4.3 Contrast (Minimum))",
                                      "source": "wcag22"})]
    assert REFUSAL not in text and reason == "complete"


@pytest.mark.parametrize(("history", "question", "sentence"), [
    # Two rules were looked up: "it" is either.
    ([Message(role="user", content="explain link-name and button-name"),
      Message(role="assistant", tool_calls=[ToolCall(id="a", name="explain_rule", args={"rule_id": "link-name"}),
                                            ToolCall(id="b", name="explain_rule", args={"rule_id": "button-name"})]),
      Message(role="tool", tool_call_id="a", name="explain_rule", content='{"rule_id": "link-name"}'),
      Message(role="tool", tool_call_id="b", name="explain_rule", content='{"rule_id": "button-name"}'),
      Message(role="assistant", content="…")],
     "why does it matter?", "Which rule do you mean: link-name or button-name?"),
    # Nothing earlier names a rule.
    ([], "and which criterion is it?",
     "Which rule or criterion do you mean? Nothing earlier in this conversation names one, so say it by name."),
    # "atlas" is two models.
    ([Message(role="user", content="how much does birch-pro cost per run"),
      Message(role="assistant", tool_calls=[ToolCall(id="a", name="compare_contexts", args={"model": "birch-pro"})]),
      Message(role="tool", tool_call_id="a", name="compare_contexts", content='{"filter": {"model": "birch-pro"}}'),
      Message(role="assistant", content="…")],
     "and atlas?", "Which model do you mean: atlas-large or atlas-small?"),
])
async def test_a_follow_up_the_conversation_does_not_pin_down_asks_which_is_meant_and_calls_nothing(history, question, sentence):
    calls, text, _, reason = await _exchange(history, question)
    assert calls == [] and text == sentence + "\n\n" + DISCLAIMER and reason == "complete"


def test_the_previous_call_is_repeated_with_the_arguments_the_follow_up_changes():
    from groundchat.offline.follow_up import resolve

    history = [Message(role="user", content="show me the latest 5 runs for atlas-large"),
               Message(role="assistant", tool_calls=[ToolCall(id="a", name="list_runs", args={"model": "atlas-large", "limit": 5})]),
               Message(role="tool", tool_call_id="a", name="list_runs", content='{"runs": []}'),
               Message(role="assistant", content="…")]
    offered = {"list_runs", "compare_contexts", "top_rules"}
    assert resolve("and for cedar?", history, offered, FACETS).calls == [("list_runs", {"model": "cedar-mini", "limit": 5})]
    assert resolve("and what does it cost?", history, offered, FACETS).calls == [("compare_contexts", {"model": "atlas-large"})]
    assert resolve("and the timeouts?", history, offered, FACETS).calls == [
        ("list_runs", {"model": "atlas-large", "limit": 5, "outcome": "timeout"})]
    # A question that does not lean on the conversation is the router's.
    assert resolve("Which model is the cheapest to run?", history, offered, FACETS) is None
    assert resolve("and a recipe for banana bread?", history, offered, FACETS, off_topic_alone=True) is None


@pytest.mark.parametrize("question", [
    "Which context level is best, and what does it cost?",
    "What does the color-contrast rule check and why does it matter?",
    "which rules break most and how do I fix them?",
    "show me cedar-mini's runs and what they cost",
])
def test_a_first_question_whose_pointing_word_points_inside_it_is_the_routers(question):
    """With nothing earlier, "it" or "them" after the question's own subject needs no conversation."""
    from groundchat.offline.follow_up import resolve

    assert resolve(question, [], {"compare_contexts", "list_runs", "top_rules", "explain_rule", "search_docs"}, FACETS) is None


@pytest.mark.parametrize("question", ["and which criterion is it?", "why does it fail so often?", "what went wrong in that run?",
                                      "what is the second one?"])
def test_a_first_question_whose_pointing_word_points_at_nothing_asks_which_is_meant(question):
    from groundchat.offline.follow_up import resolve

    plan = resolve(question, [], {"compare_contexts", "list_runs", "top_rules", "explain_rule", "search_docs"}, FACETS)
    assert plan is not None and plan.calls == [] and "Nothing earlier in this conversation names one" in plan.clarify


async def test_a_request_to_run_something_stays_refused_after_a_listing():
    history = [Message(role="user", content="list runs please"),
               Message(role="assistant", tool_calls=[ToolCall(id="a", name="list_runs", args={})]),
               Message(role="tool", tool_call_id="a", name="list_runs", content='{"runs": [{"run_id": "run-1"}]}'),
               Message(role="assistant", content="…")]
    from groundchat.offline.router import route

    refusal = route("run it again", {"list_runs"}, FACETS, set()).refusal
    assert refusal is not None and refusal != REFUSAL
    calls, text, _, _ = await _exchange(history, "run it again")
    assert calls == [] and text == refusal + "\n\n" + DISCLAIMER
