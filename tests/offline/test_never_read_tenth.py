"""The offline answerer on the sets written for issue 59's second half before the router learned from
its labelled sets, never read question by question: single questions in users' own words
(tests/eval/offline_router_tenth.jsonl: 60, with typos, non-native English, situations that name no
text, off-topic questions and requests to change the data) and conversations
(tests/eval/offline_follow_ups_fifth.jsonl: 21, with change requests first, last and in the middle).
Only the figures are held."""
from __future__ import annotations

import json
from types import SimpleNamespace

from groundchat.auth.callers import Caller
from groundchat.benchmark.axe_rules import rule_ids
from groundchat.offline.answerer import OfflineAnswerer
from groundchat_cli import sample
from groundchat_cli.router_eval import load_cases, score
from tests.corpus_support import REPO_ROOT
from tests.offline.test_follow_ups import _names, _registry, answered, right

TENTH_PATH = REPO_ROOT / "tests" / "eval" / "offline_router_tenth.jsonl"
FIFTH_PATH = REPO_ROOT / "tests" / "eval" / "offline_follow_ups_fifth.jsonl"
TENTH_ROWS = [json.loads(line) for line in TENTH_PATH.read_text(encoding="utf-8").splitlines() if line.strip()]
TENTH = load_cases(TENTH_PATH)
FIFTH = [json.loads(line) for line in FIFTH_PATH.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_sets_are_new_and_of_every_kind():
    assert len(TENTH) == 60 and len(FIFTH) == 21
    assert {r.get("kind") for r in TENTH_ROWS} >= {"typo", "non-native", "situation", "off-topic", "change"}
    assert {c["kind"] for c in FIFTH} == {"data", "rule", "texts", "clarify", "switch", "change"}
    earlier = set()
    for path in (REPO_ROOT / "tests" / "eval").glob("offline_*.jsonl"):
        if path not in (TENTH_PATH, FIFTH_PATH):
            earlier |= {json.loads(line)["q"].strip().lower() for line in path.read_text(encoding="utf-8").splitlines()
                        if line.strip()}
    assert not {c.q.strip().lower() for c in TENTH} & earlier
    assert not {c["q"].strip().lower() for c in FIFTH} & earlier


def test_on_the_tenth_router_set(topic_margin, real_search):
    figures = score(TENTH, sample.sample_names(), set(rule_ids()), topic=topic_margin, nearness=real_search.nearness)
    missed = {m["q"]: m["planned"][0] for m in figures["misses"]}
    declined = [r["q"] for r in TENTH_ROWS if r["tool"] != "none" and missed.get(r["q"]) == "none"]
    changes = [r["q"] for r in TENTH_ROWS if r.get("kind") == "change"]
    changes_missed = [q for q in changes if q in missed]
    print("tenth router set", {k: v for k, v in figures.items() if k != "misses"}, "on-topic declined", len(declined),
          "change requests refused", len(changes) - len(changes_missed), "of", len(changes))
    assert len(declined) <= DECLINED_AT_MOST
    assert len(changes_missed) <= CHANGES_MISSED_AT_MOST
    assert figures["tool_and_args"] >= TENTH_FLOOR


async def test_on_the_fifth_follow_up_set(dynamo, topic_margin, real_search):
    from groundchat.services import Services
    from tests.moto_snapshot import sample_loaded_async

    await sample_loaded_async(dynamo)
    ctx = Services(settings=dynamo.settings, dynamo=dynamo).tool_context(Caller(id="u"))
    answerer = OfflineAnswerer(facets=_names, topic=SimpleNamespace(margin=topic_margin), nearness=real_search.nearness)
    registry = _registry()
    misses = [c["id"] for c in FIFTH if not right(c, *await answered(answerer, c, registry, ctx))]
    # The change requests themselves (one change conversation goes on with a question after a refused request).
    changes = [c["id"] for c in FIFTH if c["kind"] == "change" and c["tool"] == "none"]
    print("fifth follow-up set", len(FIFTH) - len(misses), "of", len(FIFTH), "change requests not refused",
          len([m for m in misses if m in changes]), "of", len(changes))
    assert len([m for m in misses if m in changes]) <= FOLLOW_UP_CHANGES_MISSED_AT_MOST
    assert (len(FIFTH) - len(misses)) / len(FIFTH) >= FIFTH_FLOOR


# Floors under the figures of the one run, after every change of issue 59's second half
# (docs/engineering/offline-follow-ups.md): the tenth set 0.917 right tool, 0.85 tool and arguments (51 of 60),
# no on-topic question declined, 8 of 8 change requests refused; the fifth follow-up set 18 of 21 (0.857), 2 of
# its 4 change requests not refused. The misses were not read: the target (0.95, every change refused) is not met.
# With bge-small-en-v1.5 (the default since) the same code gives the tenth set 0.867 / 0.80 (48 of 60), no
# on-topic question declined and 8 of 8 changes refused; with MiniLM, margins, index and thresholds alike, still
# 0.917 / 0.85. The three questions lost are the model's cosine scale, so the floor is bge's figure.
TENTH_FLOOR = 0.80
DECLINED_AT_MOST = 0
CHANGES_MISSED_AT_MOST = 0
FIFTH_FLOOR = 0.85
FOLLOW_UP_CHANGES_MISSED_AT_MOST = 2
