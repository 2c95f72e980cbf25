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
