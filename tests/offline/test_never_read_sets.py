"""The offline answerer on two sets written for issue 59 before any change it asked for, and never read
question by question: single questions in users' own words (tests/eval/offline_router_ninth.jsonl: 60,
with typos, non-native English, situations that name no text, off-topic questions and requests to
change the data) and conversations (tests/eval/offline_follow_ups_fourth.jsonl: 30, whose last turn
leans on the earlier ones' results, or asks to change them). Only the figures are held."""
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

NINTH_PATH = REPO_ROOT / "tests" / "eval" / "offline_router_ninth.jsonl"
NINTH_ROWS = [json.loads(line) for line in NINTH_PATH.read_text(encoding="utf-8").splitlines() if line.strip()]
NINTH = load_cases(NINTH_PATH)
FOURTH = [json.loads(line) for line in (REPO_ROOT / "tests" / "eval" / "offline_follow_ups_fourth.jsonl").read_text(
    encoding="utf-8").splitlines() if line.strip()]


def test_the_sets_are_new_and_of_every_kind():
    assert len(NINTH) == 60 and len(FOURTH) == 30
    assert {r.get("kind") for r in NINTH_ROWS} >= {"typo", "non-native", "situation", "off-topic", "change"}
    assert {c["kind"] for c in FOURTH} == {"data", "rule", "texts", "clarify", "switch", "change"}
    earlier = set()
    for path in (REPO_ROOT / "tests" / "eval").glob("offline_*.jsonl"):
        if path.name not in (NINTH_PATH.name, "offline_follow_ups_fourth.jsonl"):
            earlier |= {json.loads(line)["q"].strip().lower() for line in path.read_text(encoding="utf-8").splitlines()
                        if line.strip()}
    assert not {c.q.strip().lower() for c in NINTH} & earlier
    assert not {c["q"].strip().lower() for c in FOURTH} & earlier


def _on_topic(rows) -> list[str]:
    return [r["q"] for r in rows if r["tool"] != "none"]


def test_on_the_ninth_router_set(topic_margin, real_search):
    # As the answerer routes: the gate's votes, and the corpus's nearness where they would decline.
    figures = score(NINTH, sample.sample_names(), set(rule_ids()), topic=topic_margin, nearness=real_search.nearness)
    missed = {m["q"]: m["planned"][0] for m in figures["misses"]}
    declined = [q for q in _on_topic(NINTH_ROWS) if missed.get(q) == "none"]
    changes = [r["q"] for r in NINTH_ROWS if r.get("kind") == "change"]
    print("ninth router set", {k: v for k, v in figures.items() if k != "misses"}, "on-topic declined", len(declined),
          "change requests refused", len(changes) - len([q for q in changes if q in missed]), "of", len(changes))
    assert len(declined) <= DECLINED_FLOOR
    assert len([q for q in changes if q in missed]) <= CHANGES_MISSED
    assert figures["tool_and_args"] >= NINTH_FLOOR


async def test_on_the_fourth_follow_up_set(dynamo, topic_margin, real_search):
    from groundchat.services import Services
    from tests.moto_snapshot import sample_loaded_async

    await sample_loaded_async(dynamo)
    ctx = Services(settings=dynamo.settings, dynamo=dynamo).tool_context(Caller(id="u"))
    answerer = OfflineAnswerer(facets=_names, topic=SimpleNamespace(margin=topic_margin), nearness=real_search.nearness)
    registry = _registry()
    misses = []
    for conversation in FOURTH:
        tool, args = await answered(answerer, conversation, registry, ctx)
        if not right(conversation, tool, args):
            misses.append(conversation["id"])
    changes = [c["id"] for c in FOURTH if c["kind"] == "change"]
    print("fourth follow-up set", len(FOURTH) - len(misses), "of", len(FOURTH), "change requests missed",
          len([m for m in misses if m in changes]), "of", len(changes))
    assert len([m for m in misses if m in changes]) <= FOLLOW_UP_CHANGES_MISSED
    assert (len(FOURTH) - len(misses)) / len(FOURTH) >= FOURTH_FLOOR


# Floors under the figures of the one run, after every change of issue 59 (docs/engineering/offline-follow-ups.md):
# the ninth set 0.967 right tool, 0.933 tool and arguments (56 of 60), no on-topic question declined, 9 of 9
# change requests refused; the fourth follow-up set 28 of 30 (0.933), 6 of 6 change requests refused.
# The misses were not read: the target (0.95) is not met on either, and only the figures are held.
# With bge-small-en-v1.5 (the default since) the same code gives the ninth set 0.95 / 0.917 (55 of 60); with
# MiniLM, margins, index and thresholds alike, still 0.967 / 0.933. The one question lost is the model's cosine
# scale, not a change of the router, so the floor is bge's figure.
NINTH_FLOOR = 0.917
DECLINED_FLOOR = 0
CHANGES_MISSED = 0
FOURTH_FLOOR = 0.93
FOLLOW_UP_CHANGES_MISSED = 0
