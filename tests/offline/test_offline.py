"""The offline answerer: routes questions to tools, answers from their results, says what it is."""
import json

import pytest

from groundchat.auth.callers import Caller
from groundchat.chat.loop import run_exchange
from groundchat.offline.answerer import DISCLAIMER, OfflineAnswerer
from groundchat.tools.base import ToolContext, ToolRegistry
from groundchat_testkit.answer_runs import kept_run

ALL = {"compare_contexts", "list_runs", "get_run", "top_rules", "explain_rule", "search_docs"}


@pytest.mark.parametrize("question,first_tool", [
    ("Which context level is best, and what does it cost?", "compare_contexts"),
    ("How expensive is the guidelines context compared to none?", "compare_contexts"),
    ("What do agents get wrong most often?", "top_rules"),
    ("Show me run-round-1-signup-form-atlas-large-none", "get_run"),
    ("Why does color-contrast matter?", "explain_rule"),
    ("What does the European Accessibility Act require of e-commerce services?", "search_docs"),
    ("Tell me something about keyboards", "search_docs"),
    ("list runs please", "list_runs"),
])
def test_routing(question, first_tool):
    plan = OfflineAnswerer().plan(question, ALL)
    assert plan[0][0] == first_tool


def test_only_offered_tools_are_planned():
    assert OfflineAnswerer().plan("Which context level is best?", {"search_docs"}) == [
        ("search_docs", {"query": "Which context level is best?"})]
    assert OfflineAnswerer().plan("Which context level is best?", set()) == []


async def test_answer_copies_figures_from_the_sample_runs_and_says_it_is_offline(dynamo):
    from tests.moto_snapshot import sample_loaded_async
    from groundchat.services import Services
    from groundchat.tools.data_tools import DATA_TOOLS

    await sample_loaded_async(dynamo)
    services = Services(settings=dynamo.settings, dynamo=dynamo)

    async def allow(permission, caller):
        return True

    registry = ToolRegistry(DATA_TOOLS, allow)
    run = await kept_run(OfflineAnswerer(), registry, ctx=services.tool_context(Caller(id="u")),
                         question="What do agents get wrong most often?")
    frames = [f async for f in run_exchange(run)]
    result = next(f.data["result"] for f in frames if f.type == "tool-result")
    text = "".join(f.data["text"] for f in frames if f.type == "text")
    top = result["rules"][0]
    assert f"- {top['rule_id']} ({top['impact']}): broken in {top['count']} runs" in text
    assert f"{top['nodes']} elements" in text
    assert DISCLAIMER in text
    assert frames[-1].data["reason"] == "complete"


async def test_search_answer_cites_refs_the_tool_returned_and_never_says_no_when_unavailable():
    from groundchat.offline.templates import compose

    hit = {"outcome": "hit", "excerpts": [{"ref": "3f9a1b2c", "source": "eaa", "section": "Article 4", "title": "Accessibility requirements", "text": "Member States shall ensure ..."}]}
    text = compose("q", [("search_docs", hit, False)])
    assert "[3f9a1b2c]" in text and "Article 4" in text
    down = compose("q", [("search_docs", {"outcome": "unavailable", "reason": "index_missing", "excerpts": []}, False)])
    assert "could not look this up" in down and "index_missing" in down
    empty = compose("q", [("search_docs", {"outcome": "empty", "excerpts": []}, False)])
    assert "found nothing" in empty


async def test_tool_error_is_reported_not_hidden():
    from groundchat.offline.templates import compose

    text = compose("q", [("get_run", "error: no run with id 'run-x'", True)])
    assert "could not answer" in text and "run-x" in text


def test_an_invented_ref_is_refused_and_the_real_sources_offered():
    from groundchat.offline.templates import compose

    hit = {"outcome": "hit", "excerpts": [{"ref": "3f9a1b2c", "source": "wcag22", "section": "1.4.3", "title": "Contrast", "text": "..."}]}
    text = compose("Quote [deadbeef] for me", [("search_docs", hit, False)])
    assert text.startswith("I cannot cite [deadbeef]")
    assert "The sources I can cite for this question are [3f9a1b2c]" in text
    assert "I cannot cite" not in compose("Quote [3f9a1b2c] for me", [("search_docs", hit, False)])


def test_a_data_answer_says_which_filter_it_read_from_the_question():
    from groundchat.offline.templates import compose

    top = {"filter": {"model": "cedar-mini", "task": "checkout-flow"}, "graded_runs": 11,
           "rules": [{"rule_id": "region", "impact": "moderate", "count": 3, "nodes": 5, "share_of_graded_runs": 0.2727,
                      "wcag": []},
                     {"rule_id": "color-contrast", "impact": "serious", "count": 2, "nodes": 4,
                      "share_of_graded_runs": 0.1818, "wcag": ["1.4.3"]}]}
    text = compose("top rules cedar breaks on the checkout", [("top_rules", top, False)])
    assert text.splitlines()[0] == ("The rules broken most often for model cedar-mini, task checkout-flow "
                                    "(from top_rules, over 11 graded runs):")
    assert text.splitlines()[1].endswith("5 elements; no WCAG criterion (best practice)")
    assert text.splitlines()[2].endswith("4 elements; WCAG 1.4.3")
    listed = compose("q", [("list_runs", {"filter": {}, "runs": [{"run_id": "run-a", "model": "m"}]}, False)])
    assert listed.startswith("The latest runs (from list_runs):")


def test_an_articles_heading_line_is_not_repeated_after_its_title():
    from groundchat.offline.templates import compose

    article = {"ref": "9fe72dbf", "source": "eaa", "section": "Article 4(5)",
               "title": "Article 4 Accessibility requirements, paragraph 5", "score": 2.0,
               "text": "Article 4 Accessibility requirements (Chapter II), paragraph 5\n5. Microenterprises are exempt."}
    criterion = {"ref": "0e4b814d", "source": "wcag22", "section": "2.4.7", "title": "2.4.7 Focus Visible", "score": 2.0,
                 "text": "Success Criterion 2.4.7 Focus Visible (Level AA)\nThe focus indicator is visible."}
    text = compose("q", [("search_docs", {"outcome": "hit", "excerpts": [article, criterion]}, False)])
    assert text.startswith('Article 4 Accessibility requirements, paragraph 5 (the European Accessibility Act) says: '
                           '"Microenterprises are exempt." [9fe72dbf]')  # its number is in the name
    # A criterion's heading line names what its title names: the sentence quoted is what it says.
    assert '- 2.4.7 Focus Visible (WCAG 2.2): "The focus indicator is visible." [0e4b814d]' in text


def test_a_question_on_cost_or_models_leads_with_the_rows_it_asks_for():
    from groundchat.offline.templates import compose

    rows = [{"model": "m-big", "context": "none", "mean_violations": 2.5, "mean_cost": "0.30", "mean_cost_text": "$0.30",
             "completion_rate": 0.9},
            {"model": "m-big", "context": "axe", "mean_violations": 0.5, "mean_cost": "0.40", "mean_cost_text": "$0.40",
             "completion_rate": 0.8},
            {"model": "m-small", "context": "none", "mean_violations": 6.0, "mean_cost": "0.01", "mean_cost_text": "$0.01",
             "completion_rate": 0.7},
            {"model": "m-small", "context": "axe", "mean_violations": 1.5, "mean_cost": "0.02", "mean_cost_text": "$0.02",
             "completion_rate": 1.0}]
    text = compose("which model is cheapest but still good?", [("compare_contexts", {"rows": rows}, False)])
    assert text.splitlines()[:4] == [
        "Cheapest per run: m-small with 'none' at $0.01 per run (6.0 violations per run, completion 70.0%).",
        "Each model at its fewest violations (from compare_contexts):",
        "- m-small with 'axe' at $0.02 per run (1.5 violations per run, completion 100.0%)",
        "- m-big with 'axe' at $0.40 per run (0.5 violations per run, completion 80.0%)",
    ]
    # Asked about neither, the answer starts as before.
    plain = compose("which context level is best?", [("compare_contexts", {"rows": rows}, False)])
    assert plain.startswith("Best single model and context: m-big with 'axe'")


def test_a_question_on_failed_or_timed_out_runs_leads_with_how_they_ended():
    from groundchat.offline.templates import compose

    row = {"model": "birch-pro", "context": "guidelines-axe", "runs": 24, "completed": 18, "failed": 2, "timeout": 4,
           "mean_violations": 0.89, "mean_cost": "0.298", "mean_cost_text": "$0.298", "completion_rate": 0.75}
    text = compose("How many runs timed out with birch-pro under guidelines-axe?",
                   [("compare_contexts", {"rows": [row]}, False)])
    assert text.splitlines()[:2] == ["How the runs ended (from compare_contexts):",
                                     "- birch-pro · guidelines-axe: 18 completed, 2 failed, 4 timed out, of 24 runs"]
    assert "How the runs ended" not in compose("Which context is best?", [("compare_contexts", {"rows": [row]}, False)])


def test_per_context_figures_say_whose_they_are():
    from groundchat.offline.templates import compose

    ctx = {"model": "all models", "context": "none", "runs": 24, "mean_violations": 4.09, "mean_cost_text": "$0.0468",
           "completion_rate": 0.9167}
    filtered = compose("q", [("compare_contexts", {"filter": {"model": "birch-pro"}, "by_context": [ctx]}, False)])
    assert "By context level for model birch-pro (from compare_contexts):" in filtered
    everyone = compose("q", [("compare_contexts", {"filter": {}, "by_context": [ctx]}, False)])
    assert "By context level, over every model (from compare_contexts):" in everyone


def test_what_something_costs_is_not_asked_as_the_cheapest():
    from groundchat.offline.templates import compose

    row = {"model": "m", "context": "axe", "mean_violations": 0.5, "mean_cost": "0.40", "mean_cost_text": "$0.40",
           "completion_rate": 0.8}
    assert "Cheapest per run" not in compose("Which context level is best, and what does it cost?",
                                             [("compare_contexts", {"rows": [row]}, False)])
    assert "Cheapest per run" in compose("what's the best value?", [("compare_contexts", {"rows": [row]}, False)])


@pytest.mark.parametrize("question", ["how much did we spend?", "what did the runs cost in total?",
                                      "how much has birch-pro cost us altogether?"])
def test_a_question_on_what_was_spent_leads_with_the_tools_totals(question):
    from groundchat.offline.templates import compose

    ctx = [{"model": "all models", "context": c, "runs": 12, "mean_violations": 1.0, "mean_cost_text": "$0.10",
            "total_cost_text": t, "completion_rate": 1.0} for c, t in (("none", "$1.20"), ("checklist", "$2.40"))]
    value = {"filter": {"model": "birch-pro"}, "total_runs": 24, "total_cost": "3.60", "total_cost_text": "$3.60",
             "by_context": ctx}
    assert compose(question, [("compare_contexts", value, False)]).splitlines()[:3] == [
        "Spent in all for model birch-pro: $3.60 over 24 runs (from compare_contexts).",
        "- none: $1.20 over 12 runs", "- checklist: $2.40 over 12 runs"]
    assert "Spent in all" not in compose("what does a run cost?", [("compare_contexts", value, False)])


@pytest.mark.parametrize("question", ["what's the total we've spent on the benchmark so far?",
                                      "how much has the benchmark cost us in total?"])
def test_what_the_benchmark_cost_in_all_is_its_figures_not_its_docs(question):
    assert OfflineAnswerer().plan(question, ALL) == [("compare_contexts", {})]
