"""Helpers for the corpus and search tests: where the shared corpus is, a small deterministic embedder,
and the real corpus indexed once per session (cached across sessions by the ingest's own no-op)."""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def corpus_dir() -> Path:
    from groundchat.config import Settings

    configured = Settings.model_fields["corpus_dir"].default
    return (REPO_ROOT / configured).resolve()


def require_corpus() -> Path:
    path = corpus_dir()
    if not (path / "wcag22" / "guidelines" / "index.html").is_file():
        pytest.skip(f"the shared corpus is not at {path} (it is not part of the repository)")
    return path


class WordHashEmbedder:
    """Bag of words hashed into 64 dimensions: deterministic, instant, and similar texts are close."""

    dimension = 64

    def __init__(self, model_id: str = "test-hash-64") -> None:
        self.model_id = model_id
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dimension] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.clip(norms, 1e-12, None)

    def embed_query(self, text):
        from groundchat.search.embeddings import QueryVector

        return QueryVector(self.model_id, self.embed([text])[0])
