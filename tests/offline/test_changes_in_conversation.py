"""Requests to change the data are refused with no tool wherever they come: asking for code that
changes it, leaving runs out of the figures, and an order that points back at what earlier turns
showed ("ok remove those")."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from groundchat.auth.callers import Caller
from groundchat.offline.answerer import OfflineAnswerer
from groundchat.offline.router import route
from groundchat.offline.router_changes import CHANGE_REFUSAL
from tests.offline.test_follow_ups import _names, _registry, answered
from tests.offline.test_offline_router import FACETS, RULES, TOOLS


@pytest.mark.parametrize("question", [
    "give me a query that drops the timed out runs",
    "what SQL would remove round 1 from the table?",
    "a script that purges every failed run please",
    "exclude birch-pro's timeouts from the averages",
    "don't count the failed runs in the numbers any more",
])
def test_code_that_changes_the_data_and_runs_left_out_of_the_figures_are_refused(question):
    plan = route(question, TOOLS, FACETS, RULES)
    assert (plan.calls, plan.refusal) == ([], CHANGE_REFUSAL)


@pytest.mark.parametrize("question", [
    "which runs are excluded from the averages?",
    "how does the benchmark count failed runs in the averages?",
    "what query does the runs page use to filter by model?",
])
def test_asking_how_the_figures_are_made_is_not_a_change(question):
    assert route(question, TOOLS, FACETS, RULES).refusal != CHANGE_REFUSAL


EARLIER_RUNS = [{"q": "show atlas-small's failed runs", "calls": [["list_runs", {"model": "atlas-small", "outcome": "failed"}]]}]
EARLIER_RULE = [{"q": "explain image-alt", "calls": [["explain_rule", {"rule_id": "image-alt"}]]}]


@pytest.mark.parametrize(("turns", "question", "refused"), [
    (EARLIER_RUNS, "right, wipe them", True),
    (EARLIER_RUNS, "ok remove those please, useless", True),
    (EARLIER_RUNS, "delete it", True),
    (EARLIER_RUNS, "and which of them cost the most?", False),
    (EARLIER_RULE, "how do I fix it", False),
])
async def test_an_order_pointing_back_at_data_shown_is_refused(dynamo, topic_margin, turns, question, refused):
    from groundchat.services import Services
    from tests.moto_snapshot import sample_loaded_async

    await sample_loaded_async(dynamo)
    ctx = Services(settings=dynamo.settings, dynamo=dynamo).tool_context(Caller(id="u"))
    answerer = OfflineAnswerer(facets=_names, topic=SimpleNamespace(margin=topic_margin))
    tool, _ = await answered(answerer, {"turns": turns, "q": question}, _registry(), ctx)
    assert (tool == "none") is refused


@pytest.mark.parametrize("question", [
    "toss the dune-code timeouts",
    "clean up the failed ones for cedar-mini",
    "weed out the timeouts in round 2",
    "can we not count the failed runs for atlas-small",
    "i'd like the failed runs removed",
])
def test_orders_in_everyday_verbs_on_the_data_are_refused(question):
    assert route(question, TOOLS, FACETS, RULES).refusal == CHANGE_REFUSAL


@pytest.mark.parametrize("question", [
    "correct me if I'm wrong, is birch-pro cheaper than cedar-mini?",
    "update me on how dune-code did in round 2",
    "which runs need to be rerun?",
    "take a look at birch-pro's runs in round 1",
    "pull up the runs for cedar-mini",
    "ok move on to round 3",
])
def test_an_order_to_the_one_asking_or_a_question_about_changes_reads(question):
    assert route(question, TOOLS, FACETS, RULES).refusal is None


EARLIER_LIST = [{"q": "cedar-mini on the checkout flow", "calls": [["list_runs", {"model": "cedar-mini", "task": "checkout-flow"}]]}]
EARLIER_RUN = [{"q": "open run-round-2-modal-dialog-birch-pro-checklist",
                "calls": [["get_run", {"run_id": "run-round-2-modal-dialog-birch-pro-checklist"}]]}]
EARLIER_TOP = [{"q": "what does dune-code break most", "calls": [["top_rules", {"model": "dune-code"}]]}]


@pytest.mark.parametrize(("turns", "question", "refused"), [
    # The object is what the follow-up reads it as: a run of the list, the list, the run shown, a rule's count.
    (EARLIER_LIST, "drop the none one", True),
    (EARLIER_LIST, "just nuke all of those", True),
    (EARLIER_LIST, "I'd like those removed before Friday", True),
    (EARLIER_RUN, "this one is wrong, mark it as failed", True),
    (EARLIER_TOP, "that region count is off, correct it to 2", True),
    # Reading the same things is not a change.
    (EARLIER_LIST, "open the none one", False),
    (EARLIER_LIST, "which of them had the fewest violations?", False),
    (EARLIER_TOP, "what's the second one?", False),
])
async def test_an_order_is_judged_by_what_the_follow_up_reads_it_as(dynamo, topic_margin, turns, question, refused):
    from groundchat.services import Services
    from tests.moto_snapshot import sample_loaded_async

    await sample_loaded_async(dynamo)
    ctx = Services(settings=dynamo.settings, dynamo=dynamo).tool_context(Caller(id="u"))
    answerer = OfflineAnswerer(facets=_names, topic=SimpleNamespace(margin=topic_margin))
    tool, _ = await answered(answerer, {"turns": turns, "q": question}, _registry(), ctx)
    assert (tool == "none") is refused
