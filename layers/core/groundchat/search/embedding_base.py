"""What every embedder shares: the vector tagged with its model, the interface, the failures, and
unit length. The embedders (search/embeddings.py, search/titan_embeddings.py) are built on it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np


class EmbeddingError(RuntimeError):
    """The embedding model could not be loaded or called."""


class EmbeddingModelMismatch(EmbeddingError):
    """A query vector made by a different model from the one that built the index."""

    def __init__(self, index_model: str, query_model: str) -> None:
        super().__init__(f"index built with {index_model!r}, query embedded with {query_model!r}")
        self.index_model = index_model
        self.query_model = query_model


@dataclass(frozen=True)
class QueryVector:
    model_id: str
    vector: np.ndarray


class Embedder(Protocol):
    model_id: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        ...

    def embed_query(self, text: str) -> QueryVector:
        """One query, tagged with this model's id."""
        ...


class _QueryMixin:
    model_id: str

    def embed_query(self, text: str) -> QueryVector:
        return QueryVector(self.model_id, self.embed([text])[0])  # type: ignore[attr-defined]


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.clip(norms, 1e-12, None)).astype(np.float32)
