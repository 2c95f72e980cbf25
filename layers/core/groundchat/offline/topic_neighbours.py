"""Whether a question is this chat's, judged by the questions it is most like.

The router's word lists (offline/router_topics.py) open the gate on a word: "rules", "EU", "shop",
"product". Those words are as much a GDPR, VAT or returns question's as an accessibility one's, and a
question in unusual words ("words spelt the same but said differently: anything required?") has none
of them. So the offline answerer also asks which questions a new one is most like: a list of questions
this chat answers (the benchmark's data, web content for people with disabilities, the Act's duties)
and of questions it declines (everyday ones, and those near the subject: other laws, site speed,
marketing, design taste, shopping). The margin is the mean likeness (cosine) of the question to its
`NEIGHBOURS` nearest answered examples less that to its nearest declined ones: above zero, it is
more like what the chat answers.

The examples (`topic_examples.json`) were written for this purpose, apart from every evaluation
set. The likeness uses the local embedding model the search uses, so it costs nothing; with another
embedding model configured there is no margin and the word lists decide alone.
"""
from __future__ import annotations

import json
import threading
from functools import lru_cache
from importlib import resources
from typing import Callable

import numpy as np

from groundchat.search.embeddings import Embedder

NEIGHBOURS = 5


def topic_examples() -> dict[str, list[str]]:
    """{"on_topic": [...], "off_topic": [...]}, as shipped with the package."""
    text = resources.files("groundchat.offline").joinpath("topic_examples.json").read_text(encoding="utf-8")
    examples = json.loads(text)
    return {"on_topic": list(examples["on_topic"]), "off_topic": list(examples["off_topic"])}


class TopicNeighbours:
    """`margin(question)`: how much more the question is like the answered examples than the declined."""

    def __init__(self, embedder: Callable[[], Embedder], examples: dict[str, list[str]] | None = None,
                 neighbours: int = NEIGHBOURS) -> None:
        self._make_embedder = embedder
        self._examples = examples
        self._neighbours = neighbours
        self._lock = threading.Lock()
        self._ready: tuple[Embedder, np.ndarray, np.ndarray] | None = None

    def _load(self) -> tuple[Embedder, np.ndarray, np.ndarray]:
        with self._lock:
            if self._ready is None:
                examples = self._examples or topic_examples()
                embedder = self._make_embedder()
                self._ready = (embedder, embedder.embed(examples["on_topic"]), embedder.embed(examples["off_topic"]))
            return self._ready

    def margin(self, question: str) -> float:
        embedder, answered, declined = self._load()
        vector = embedder.embed([question])[0]
        return float(self._nearest(answered @ vector) - self._nearest(declined @ vector))

    def _nearest(self, likeness: np.ndarray) -> float:
        k = min(self._neighbours, len(likeness))
        return float(np.sort(likeness)[-k:].mean())


@lru_cache(maxsize=2)
def local_topic_neighbours(embedding_model: str) -> TopicNeighbours | None:
    """The answerer's judge when the search's embedding model is the local one; None otherwise (a
    paid embedding call per question would make the offline answerer cost money). One per process:
    the model and the examples' vectors load once, on the first question."""
    if not embedding_model.startswith("local:"):
        return None
    from groundchat.search.embeddings import make_embedder

    return TopicNeighbours(lambda: make_embedder(embedding_model))


__all__ = ["NEIGHBOURS", "TopicNeighbours", "local_topic_neighbours", "topic_examples"]
