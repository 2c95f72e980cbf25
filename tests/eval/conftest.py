from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.corpus_support import REPO_ROOT, require_corpus


@pytest.fixture(scope="session")
def real_index(request, tmp_path_factory):
    """The real corpus with the real local model, ingested once. The index lives in pytest's cache,
    so a later session's ingest is the no-op re-ingest (and costs no embedding)."""
    corpus = require_corpus()
    from groundchat.embeddings import LocalOnnxEmbedder
    from groundchat.ingest import manifest, run_ingest
    from groundchat.search.embedded import EmbeddedStore

    cache = Path(request.config.cache.mkdir("groundchat-corpus-index"))
    embedder = LocalOnnxEmbedder()
    docs = tmp_path_factory.mktemp("no-docs")  # the docs folder is someone else's and changes often
    specs = manifest(corpus, docs)
    store = EmbeddedStore(cache / "index.sqlite")
    first = run_ingest(specs, store, embedder)
    return {"path": cache / "index.sqlite", "specs": specs, "embedder": embedder, "first": first}


@pytest.fixture(scope="session")
def real_search(real_index):
    from groundchat.search.embedded import EmbeddedIndex
    from groundchat.search.service import SearchService

    return SearchService(EmbeddedIndex(real_index["path"]), real_index["embedder"])


@pytest.fixture
def index_copy(real_index, tmp_path):
    target = tmp_path / "index.sqlite"
    shutil.copy(real_index["path"], target)
    return target


__all__ = ["REPO_ROOT"]
