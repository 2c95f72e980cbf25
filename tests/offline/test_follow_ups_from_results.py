"""Follow-ups read from the earlier turns' calls and results: a run of the list just shown by what it
alone has, an item of a run's violations by its place, a round by its place beside the one asked
about, the figures asked about before a detour, and a superlative turned round."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from groundchat.auth.callers import Caller
from groundchat.offline.answerer import OfflineAnswerer
from tests.offline.test_follow_ups import _names, _registry, answered


def _turn(q, *calls):
    return {"q": q, "calls": [list(c) for c in calls]}


CASES = [
    # The list has four runs of one round, one per context: the context picks one.
    ([_turn("dune-code runs on the nav header in round 1", ("list_runs", {"model": "dune-code", "task": "nav-header", "label": "round-1"}))],
     "open the guidelines one", ("get_run", {"run_id": "run-round-1-nav-header-dune-code-guidelines"})),
    ([_turn("dune-code runs on the nav header in round 1", ("list_runs", {"model": "dune-code", "task": "nav-header", "label": "round-1"}))],
     "show me the no context one", ("get_run", {"run_id": "run-round-1-nav-header-dune-code-none"})),
    # A run's violations are a list too: the first is the rule the result lists first.
    ([_turn("open run-round-1-signup-form-atlas-large-none", ("get_run", {"run_id": "run-round-1-signup-form-atlas-large-none"}))],
     "what is the third problem in it", ("explain_rule", {"rule_id": "select-name"})),
    ([_turn("how does cedar-mini do in round 2", ("compare_contexts", {"model": "cedar-mini", "label": "round-2"}))],
     "and the previous round?", ("compare_contexts", {"model": "cedar-mini", "label": "round-1"})),
    ([_turn("top rules for birch-pro in round 1", ("top_rules", {"model": "birch-pro", "label": "round-1"}))],
     "and the following round", ("top_rules", {"model": "birch-pro", "label": "round-2"})),
    ([_turn("compare contexts for dune-code on the product grid", ("compare_contexts", {"model": "dune-code", "task": "product-grid"})),
      _turn("explain image-alt", ("explain_rule", {"rule_id": "image-alt"}))],
     "and cedar-mini?", ("compare_contexts", {"model": "cedar-mini", "task": "product-grid"})),
    ([_turn("which context level costs least for atlas-large", ("compare_contexts", {"model": "atlas-large"}))],
     "and the highest?", ("compare_contexts", {"model": "atlas-large"})),
]


@pytest.mark.parametrize(("turns", "question", "expected"), CASES)
async def test_a_follow_up_reads_the_results_before_it(dynamo, topic_margin, turns, question, expected):
    from groundchat.services import Services
    from tests.moto_snapshot import sample_loaded_async

    await sample_loaded_async(dynamo)
    ctx = Services(settings=dynamo.settings, dynamo=dynamo).tool_context(Caller(id="u"))
    answerer = OfflineAnswerer(facets=_names, topic=SimpleNamespace(margin=topic_margin))
    assert await answered(answerer, {"turns": turns, "q": question}, _registry(), ctx) == expected
