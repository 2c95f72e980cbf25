"""Every figure in the answer's words is checked against what this answer's tools returned, with the
rules views use; numbers that name things are not figures."""
from __future__ import annotations

import pytest

from groundchat.auth.callers import Caller
from groundchat.chat.loop import run_exchange
from groundchat.grounding.citations import citation_check
from groundchat.grounding.text_numbers import figures, unverified_numbers
from groundchat.tools.base import Tool, ToolContext, ToolRegistry
from groundchat_testkit.answer_runs import kept_run
from groundchat_testkit.scripted import ScriptedModel, Step
from pydantic import BaseModel

ROWS = {"rows": [{"context": "guidelines", "mean_violations": 3.5167, "completion_rate": 0.875, "runs": 12,
                  "mean_cost": "0.01256", "mean_cost_text": "$0.0126"}]}
EXCERPT = {"outcome": "hit", "excerpts": [{"ref": "3f9a1b2c", "section": "1.4.3",
                                           "text": "body copy needs 4.5:1 against its background"}]}
RESULTS = [{"id": "a", "name": "compare_contexts", "grounding": "figures", "result": ROWS}, {"id": "b", "name": "search_docs", "grounding": "text", "result": EXCERPT}]


@pytest.mark.parametrize("sentence", [
    "The guidelines context had 3.52 violations per run.",      # rounded to the places shown
    "It completed 87.5% of its runs, about 88%.",              # a fraction shown as a percentage
    "A run cost $0.0126 on average.",                          # a cost quoted from its cost_text
    "That is over 12 runs.",
    "Text needs 4.5:1 contrast [3f9a1b2c].",                    # a figure from a returned excerpt
    "See 1.4.3 and Article 31 of Directive (EU) 2019/882, in force since 2019.",  # names and a year
    "1. First point\n2. Second point",                          # list ordinals
])
def test_grounded_figures_and_names_pass(sentence):
    assert unverified_numbers(sentence, "Which context is best?", RESULTS) == []


def test_a_garbled_figure_is_flagged_once_with_why():
    found = unverified_numbers("It had 3.61 violations; yes, 3.61, at $0.02 a run.", "q", RESULTS)
    assert found == [
        {"text": "3.61", "status": "unverified", "why": "no tool returned this figure in this answer"},
        {"text": "$0.02", "status": "unverified", "why": "no tool returned this figure in this answer"},
    ]


def test_a_passages_search_score_grounds_no_figure():
    scored = {"outcome": "hit", "excerpts": [{**EXCERPT["excerpts"][0], "score": 3.381225}]}
    results = [{"id": "b", "name": "search_docs", "grounding": "text", "result": scored}]
    assert [f["text"] for f in unverified_numbers("About 3.4 of them, or 3.", "q", results)] == ["3.4", "3"]
    assert unverified_numbers("Text needs 4.5:1 [3f9a1b2c].", "q", results) == []  # the passage's own figures still do


def test_a_number_the_question_gave_is_not_the_answers_invention():
    assert unverified_numbers("Here are the top 5 rules.", "What are the top 5 rules?", RESULTS) == []
    assert [f.text for f in figures("Here are the top 5 rules.")] == ["5"]


class NoArgs(BaseModel):
    pass


async def test_through_the_loop_the_citations_frame_lists_the_unverified_figures_and_stores_them():
    async def compare(ctx, args):
        return ROWS

    async def allow(permission, caller):
        return True

    registry = ToolRegistry([Tool(name="compare_contexts", grounding="figures", drawer="contexts", offline_template="contexts", description="d", input_model=NoArgs, permission="runs.read",
                                  handler=compare)], allow)
    model = ScriptedModel([Step(tool_calls=[("compare_contexts", {})]),
                           Step(text="Guidelines: 3.52 violations per run at $0.0126, not 4.1.")])
    run = await kept_run(model, registry, checks=[citation_check])
    frames = [f async for f in run_exchange(run)]
    citations = next(f for f in frames if f.type == "citations").data
    assert [n["text"] for n in citations["unverified_numbers"]] == ["4.1"]
    assert run.committed[0].annotations["citations"]["unverified_numbers"] == citations["unverified_numbers"]


async def test_the_offline_answerers_answers_pass_by_construction(dynamo):
    from groundchat.services import Services
    from groundchat.offline.answerer import OfflineAnswerer
    from groundchat.tools.data_tools import DATA_TOOLS
    from tests.moto_snapshot import sample_loaded_async

    await sample_loaded_async(dynamo)
    services = Services(settings=dynamo.settings, dynamo=dynamo)

    async def allow(permission, caller):
        return True

    questions = ["Which context level is best, and what does it cost?", "What do agents get wrong most often?",
                 "list runs please", "Which model is cheapest?", "what goes wrong on the checkout flow?",
                 "Which axe rule covers missing alt text?"]
    for question in questions:
        run = await kept_run(OfflineAnswerer(), ToolRegistry(DATA_TOOLS, allow), question=question,
                             ctx=services.tool_context(Caller(id="u")), checks=[citation_check])
        frames = [f async for f in run_exchange(run)]
        citations = next(f for f in frames if f.type == "citations").data
        assert citations["unverified_numbers"] == [], question


async def test_the_trace_counts_what_the_checks_found(make_env):
    from tests.chat_function.conftest import parse_sse

    env = make_env(ScriptedModel([Step(tool_calls=[("compare_contexts", {})]), Step(text="It had 9.99 violations [deadbeef].")]))
    async with env.client() as c:
        r = await c.post("/api/chat", json={"stream": True, "message": "q"}, headers=env.token("alice"))
        trace = (await c.get("/api/traces/latest", headers=env.token("alice"))).json()
    assert parse_sse(r.text)[-1][1]["reason"] == "complete"
    assert trace["checks"] == {"verified_refs": 0, "unverified_refs": 1, "unverified_numbers": 1,
                               "support_checked": 0, "weak_support": 0, "support_state": "nothing-to-check"}
