"""What the offline answerer's second opinion on a question costs (offline/topic_neighbours.py).

The first question of a process loads the local model and embeds the shipped examples; every later
question embeds itself once and compares with them. Prints the first call and the median and p95 of
later ones over the questions of tests/eval/topic_gate_heldout.jsonl (asked in turn, `ROUNDS` times).
Prints figures, asserts nothing.
"""
from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from groundchat.config import get_settings
from groundchat.offline.topic_neighbours import TopicNeighbours, topic_examples
from groundchat.search.embeddings import make_embedder

ROUNDS = 5
QUESTIONS = Path(__file__).resolve().parent.parent / "tests" / "eval" / "topic_gate_heldout.jsonl"


def main() -> None:
    questions = [json.loads(line)["q"] for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    examples = topic_examples()
    judge = TopicNeighbours(lambda: make_embedder(get_settings().embedding_model))  # the configured local model
    start = time.perf_counter()
    judge.margin(questions[0])
    first = (time.perf_counter() - start) * 1000
    times = []
    for _ in range(ROUNDS):
        for question in questions:
            start = time.perf_counter()
            judge.margin(question)
            times.append((time.perf_counter() - start) * 1000)
    times.sort()
    print(f"examples: {len(examples['on_topic'])} answered, {len(examples['off_topic'])} declined")
    print(f"first question (model load + examples embedded): {first:.0f} ms")
    print(f"later questions: median {statistics.median(times):.1f} ms, p95 {times[int(len(times) * 0.95) - 1]:.1f} ms "
          f"({len(times)} calls)")


if __name__ == "__main__":
    main()
