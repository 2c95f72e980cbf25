"""Follow-ups in the offline answerer, a third set: 30 conversations in users' own words
(tests/eval/offline_follow_ups_third.jsonl), scored as the first set is (tests/offline/test_follow_ups.py):
the earlier turns replayed with their calls run by the real tools on the sample, the last question
through OfflineAnswerer, the first tool and its arguments (a docs search by its source), a question
back ("clarify") or a refusal ("none")."""
from __future__ import annotations

import json

from tests.corpus_support import REPO_ROOT
from tests.offline.test_follow_ups import SECOND, SET, scored

THIRD = [json.loads(line) for line in (REPO_ROOT / "tests" / "eval" / "offline_follow_ups_third.jsonl").read_text(
    encoding="utf-8").splitlines() if line.strip()]
TOOLS = {"compare_contexts", "top_rules", "list_runs", "get_run", "explain_rule", "search_docs", "clarify", "none"}


def test_the_third_set_is_thirty_new_conversations_of_every_kind():
    assert len(THIRD) == 30 and len({c["id"] for c in THIRD}) == 30
    assert all(c["id"].startswith("fu3-") and c["split"] == "third" for c in THIRD)
    questions = [c["q"].strip().lower() for c in THIRD]
    assert len(set(questions)) == 30
    earlier_sets = {c["q"].strip().lower() for c in [*SET, *SECOND]}
    assert set(questions) & earlier_sets == set()
    assert {c["kind"] for c in THIRD} == {"data", "rule", "texts", "clarify", "switch", "first"}
    assert all(c["tool"] in TOOLS for c in THIRD)
    assert all(c["args"] == {} for c in THIRD if c["tool"] in ("clarify", "none"))
    assert all(len(c["turns"]) == 0 if c["kind"] == "first" else 1 <= len(c["turns"]) <= 2 for c in THIRD)
    assert all(turn["calls"] for c in THIRD for turn in c["turns"])


async def test_on_the_third_set_follow_ups_reach_the_right_tool_and_arguments(dynamo, topic_margin):
    figures = await scored(THIRD, dynamo, topic_margin)
    assert figures["n"] == 30
    # Written without reading the resolver, run once and never tuned on: 0.867 (26 of 30). Only the
    # figure is held; the misses are not to be taught from this set.
    assert figures["right"] >= 0.86, (figures["right"], [m["id"] for m in figures["misses"]])
