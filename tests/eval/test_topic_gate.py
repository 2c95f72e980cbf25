"""Whether the offline answerer takes a question up or declines it, on questions written for that:
everyday ones, ones near the subject (other laws, site speed, marketing, design taste, shopping),
and the chat's own. The gate is the word lists weighed against the likeness margin
(offline/topic_neighbours.py), with the real local model."""
from __future__ import annotations

import json
from pathlib import Path

from groundchat.offline.router import route
from groundchat_cli.router_eval import TOOLS
from tests.offline.test_offline_router import FACETS, RULES

HERE = Path(__file__).parent


def _rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (HERE / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def _share_right(rows: list[dict], kind: str, topic) -> float:
    chosen = [r for r in rows if r["kind"] == kind]
    right = sum(bool(route(r["q"], TOOLS, FACETS, RULES, topic=topic).calls) == r["on_topic"] for r in chosen)
    return right / len(chosen)


def test_the_sets_are_what_the_readme_says():
    held = _rows("topic_gate_heldout.jsonl")
    assert len(held) == 120 and sum(r["on_topic"] for r in held) == 40
    assert {r["kind"] for r in held} == {"benchmark", "wcag", "eaa", "near", "everyday"}
    tune = _rows("topic_gate_tune.jsonl")
    assert len(tune) == 90 and not any(r["on_topic"] for r in tune)
    assert not {r["q"].lower() for r in held} & {r["q"].lower() for r in tune}


def test_on_the_held_out_set_questions_near_the_subject_are_declined_and_the_chats_are_answered(topic_margin):
    held = _rows("topic_gate_heldout.jsonl")
    # Floors under its figures, run once and never read. The word lists alone: near the subject 36 of
    # 55 let in (0.345 declined), everyday 0.92, the chat's own 39 of 40. With bge-small-en-v1.5 and
    # its margins: near 43 of 55, everyday 22 of 25 (MiniLM: 42 and 25), the chat's own all.
    assert _share_right(held, "near", topic_margin) >= 0.78  # 43 of 55
    assert _share_right(held, "everyday", topic_margin) >= 0.88  # 22 of 25
    for kind in ("benchmark", "wcag", "eaa"):
        assert _share_right(held, kind, topic_margin) == 1.0


def test_on_the_probes_it_was_decided_on(topic_margin):
    tune = _rows("topic_gate_tune.jsonl")
    # With bge-small-en-v1.5: near 33 of 40, everyday 43 of 50 (MiniLM: 35 and 46; words alone: 23 and 41).
    assert _share_right(tune, "near", topic_margin) >= 0.825
    assert _share_right(tune, "everyday", topic_margin) >= 0.86


def test_on_the_sixth_set_written_after_the_gate_was_decided(topic_margin):
    sixth = _rows("topic_gate_sixth.jsonl")
    # 60 written; four were word for word questions of earlier sets or of the examples, and were dropped.
    assert len(sixth) == 56 and sum(r["on_topic"] for r in sixth) == 20
    # Floors under its figures as first and only run: near the subject 24 of 29 declined (the word
    # lists alone: 8), everyday 7 of 7, the chat's own 20 of 20 (the word lists alone: 19).
    assert _share_right(sixth, "near", topic_margin) >= 0.82
    for kind in ("everyday", "benchmark", "wcag", "eaa"):
        assert _share_right(sixth, kind, topic_margin) == 1.0
