"""The offline answerer's second opinion on whether a question is the chat's: its likeness to
questions the chat answers and to questions it declines (offline/topic_neighbours.py)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from groundchat.offline.answerer import OfflineAnswerer
from groundchat.offline.router import REFUSAL, route
from groundchat.search.embedding_models import thresholds_in_use
from groundchat.offline.topic_neighbours import TopicNeighbours, local_topic_neighbours, topic_examples
from groundchat_cli.router_eval import TOOLS
from tests.offline.test_offline_router import FACETS, RULES

EVAL = Path(__file__).resolve().parents[1] / "eval"
# The configured model's margins, from its row of search/embedding_models.json.
CLOSE_MARGIN = thresholds_in_use().topic_close_margin
OPEN_MARGIN = thresholds_in_use().topic_open_margin


class AxisEmbedder:
    """Each known text on an axis of its own, anything else a fixed blend: likeness is exact."""

    model_id = "axes"
    dimension = 4

    def __init__(self, axes: dict[str, list[float]]) -> None:
        self.axes = {text: np.array(v, dtype=np.float32) / np.linalg.norm(v) for text, v in axes.items()}
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        return np.stack([self.axes[t] for t in texts])


def test_the_margin_is_the_mean_likeness_to_the_nearest_answered_less_the_nearest_declined():
    embedder = AxisEmbedder({"a1": [1, 0, 0, 0], "a2": [0, 1, 0, 0], "d1": [0, 0, 1, 0], "d2": [0, 0, 0, 1],
                             "q": [3, 1, 2, 0]})
    judge = TopicNeighbours(lambda: embedder, {"on_topic": ["a1", "a2"], "off_topic": ["d1", "d2"]}, neighbours=1)
    norm = np.sqrt(14)
    # nearest answered: a1 (3/√14); nearest declined: d1 (2/√14)
    assert judge.margin("q") == pytest.approx((3 - 2) / norm, abs=1e-6)
    two = TopicNeighbours(lambda: embedder, {"on_topic": ["a1", "a2"], "off_topic": ["d1", "d2"]}, neighbours=2)
    assert two.margin("q") == pytest.approx(((3 + 1) / 2 - (2 + 0) / 2) / norm, abs=1e-6)


def test_the_examples_are_embedded_once_whatever_the_number_of_questions():
    embedder = AxisEmbedder({"a": [1, 0, 0, 0], "d": [0, 1, 0, 0], "q": [1, 1, 0, 0]})
    judge = TopicNeighbours(lambda: embedder, {"on_topic": ["a"], "off_topic": ["d"]})
    for _ in range(3):
        judge.margin("q")
    assert embedder.calls == 2 + 3  # the two example lists, then one call per question


def test_only_the_local_model_judges_a_paid_embedding_would_make_the_offline_answerer_cost_money():
    assert local_topic_neighbours("bedrock:amazon.titan-embed-text-v2:0") is None
    assert isinstance(local_topic_neighbours("local:minilm-int8"), TopicNeighbours)


def test_the_shipped_examples_are_many_distinct_and_apart_from_every_evaluation_set():
    examples = topic_examples()
    assert len(examples["on_topic"]) >= 120 and len(examples["off_topic"]) >= 120
    every = [q.lower().strip() for q in examples["on_topic"] + examples["off_topic"]]
    assert len(set(every)) == len(every)
    evaluated = set()
    for path in EVAL.glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                evaluated.add(str(row.get("q", row.get("sentence", ""))).lower().strip())
    assert not set(every) & evaluated


@pytest.mark.parametrize(("margin", "question", "answered"), [
    # The word lists let in "EU" and "rules"; a margin under CLOSE_MARGIN declines it all the same.
    (CLOSE_MARGIN - 0.01, "what are the rules for returning goods bought online in the EU?", False),
    (CLOSE_MARGIN + 0.01, "what are the rules for returning goods bought online in the EU?", True),
    # No word list knows it; a margin over OPEN_MARGIN lets it in, a smaller one does not.
    (OPEN_MARGIN + 0.01, "words spelt the same but said differently: anything required?", True),
    (OPEN_MARGIN - 0.01, "words spelt the same but said differently: anything required?", False),
    # Without a margin the word lists decide alone.
    (None, "what are the rules for returning goods bought online in the EU?", True),
    (None, "a recipe for banana bread", False),
])
def test_the_margin_weighs_against_the_word_lists(margin, question, answered):
    plan = route(question, TOOLS, FACETS, RULES, topic=lambda _: margin)
    assert bool(plan.calls) is answered
    assert (plan.refusal == REFUSAL) is not answered


def test_a_question_that_names_the_datas_things_is_never_declined_on_likeness():
    plan = route("how did birch-pro do on the signup-form?", TOOLS, FACETS, RULES, topic=lambda _: -1.0)
    assert plan.calls and plan.calls[0][0] == "compare_contexts"


@pytest.mark.parametrize("question", [
    "what's the VAT rate for e-books in Germany?", "what are the rules for returning goods bought online in the EU?",
    "how do I write a good product description?", "what's a good color scheme for a bakery website?",
])
def test_with_the_real_model_questions_near_the_subject_are_declined(topic_margin, question):
    plan = route(question, TOOLS, FACETS, RULES, topic=topic_margin)
    assert plan.calls == [] and plan.refusal == REFUSAL


@pytest.mark.parametrize("question", [
    "words spelt the same but said differently, like 'lead' or 'read' - anything required?",
    "Which context level is best, and what does it cost?", "do forms need labels?",
    "we're a 6-person web shop, does the accessibility act apply to us?",
])
def test_with_the_real_model_the_chats_questions_are_answered(topic_margin, question):
    assert route(question, TOOLS, FACETS, RULES, topic=topic_margin).calls != []


class BrokenJudge:
    def margin(self, question: str) -> float:
        raise RuntimeError("model file unreadable")


async def test_a_broken_judge_leaves_the_word_lists_to_decide(caplog):
    answerer = OfflineAnswerer(topic=BrokenJudge())
    assert await answerer._margin("Which context level is best?") is None
    assert "topic likeness unavailable: RuntimeError: model file unreadable" in caplog.text


def test_the_answerer_built_from_settings_judges_with_the_local_model(settings):
    assert isinstance(OfflineAnswerer(settings)._topic, TopicNeighbours)
    assert OfflineAnswerer()._topic is None
