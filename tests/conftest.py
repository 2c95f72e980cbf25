"""Shared fixtures: settings isolated per test, and a moto-backed DynamoDB store."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path):
    """No test sees the developer's credentials, model, local stack or OpenTelemetry collector. The
    embedding model chosen for a run is kept: the session's index and likeness margins are built with
    it before this runs, and the thresholds on its cosine scale must be read from the same model."""
    for key in list(os.environ):
        if key.startswith(("GROUNDCHAT_", "AWS_", "OTEL_")) and key != "GROUNDCHAT_EMBEDDING_MODEL":
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    monkeypatch.setenv("GROUNDCHAT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GROUNDCHAT_DEV_SECRET", "test-secret-for-hs256-signing-0123456789")
    monkeypatch.setenv("GROUNDCHAT_CORPUS_DIR", str(REPO_ROOT.parent / "shared" / "corpus"))
    monkeypatch.setenv("GROUNDCHAT_DOCS_DIR", str(REPO_ROOT / "docs"))
    # The scripted model is priced like any model: entered deliberately, at nothing.
    prices = tmp_path / "test-prices.json"
    prices.write_text('{"scripted": {"input_per_mtok": "0", "output_per_mtok": "0", "trust_provider_cost": false}}')
    monkeypatch.setenv("GROUNDCHAT_PRICES_FILE", str(prices))
    from groundchat.config import reset_settings_cache

    reset_settings_cache()
    yield
    reset_settings_cache()


@pytest.fixture
def settings():
    from groundchat.config import get_settings

    return get_settings()


@pytest.fixture
def dynamo(settings):
    """A DynamoDB on moto with every table created."""
    from moto import mock_aws

    from groundchat_cli.moto_store import make_moto_faithful
    from groundchat.store.dynamo import Dynamo, create_tables

    make_moto_faithful()  # the local stack's moto, as faithful to DynamoDB as it runs there
    with mock_aws():
        d = Dynamo(settings)
        create_tables(d)
        yield d


@pytest.fixture
def corpus_dir(settings):
    path = Path(settings.corpus_dir)
    if not (path / "README.md").exists():
        pytest.skip(f"the source corpus is not at {path} (it sits beside the repo as ../shared/corpus on dev machines and CI)")
    return path


# ---- the real corpus, indexed once per session (corpus, search and eval tests share it) --------


@pytest.fixture(scope="session")
def real_index(request, tmp_path_factory):
    """The real corpus with the real local model, ingested once. The index lives in the tools' cache
    outside the checkout (as the OpenSearch node does), so a later session's ingest, a fresh clone's
    included, is the no-op re-ingest or embeds only what changed."""
    from tests.corpus_support import require_corpus

    corpus = require_corpus()
    from groundchat.search.embeddings import shared_local_embedder
    from groundchat.search.ingest import manifest, run_ingest
    from groundchat.search.embedded import EmbeddedStore

    from groundchat_cli.opensearch_node import tools_cache

    from groundchat.search.embedding_models import configured_local_key

    # One index per model: a checkout on another model (a branch, an older clone) keeps its own
    # instead of re-embedding the shared one back and forth.
    cache = tools_cache() / f"test-corpus-index-{configured_local_key()}"
    cache.mkdir(parents=True, exist_ok=True)
    embedder = shared_local_embedder()  # the copy the support check and the gate use too, as in the chat
    docs = tmp_path_factory.mktemp("no-docs")  # the docs folder is someone else's and changes often
    specs = manifest(corpus, docs)
    # Test workers run side by side (pytest-xdist) and share the cache: one ingests, the others wait
    # and then find nothing to do.
    from filelock import FileLock

    with FileLock(str(cache / "ingest.lock")):
        store = EmbeddedStore(cache / "index.sqlite")
        first = run_ingest(specs, store, embedder)
    return {"path": cache / "index.sqlite", "specs": specs, "embedder": embedder, "first": first}


@pytest.fixture(scope="session")
def real_search(real_index):
    from groundchat.search.embedded import EmbeddedIndex
    from groundchat.search.service import SearchService

    return SearchService(EmbeddedIndex(real_index["path"]), QueriesEmbeddedOnce(real_index["embedder"]))


class QueriesEmbeddedOnce:
    """The session's model, each query embedded once: the retrieval sets search every question with
    each leg and again for their floors, and embedding the query is most of a search's time. The
    vectors are the model's own (the same text gives the same vector), so no figure moves."""

    def __init__(self, embedder) -> None:
        self._embedder = embedder
        self._queries: dict[str, object] = {}
        self.model_id = embedder.model_id
        self.dimension = embedder.dimension

    def embed(self, texts):
        return self._embedder.embed(texts)

    def embed_query(self, text: str):
        if text not in self._queries:
            self._queries[text] = self._embedder.embed_query(text)
        return self._queries[text]


@pytest.fixture
def index_copy(real_index, tmp_path):
    target = tmp_path / "index.sqlite"
    shutil.copy(real_index["path"], target)
    return target


@pytest.fixture(scope="session")
def topic_margin():
    """The offline answerer's likeness margin with the configured local model."""
    from groundchat.config import get_settings
    from groundchat.offline.topic_neighbours import local_topic_neighbours

    return local_topic_neighbours(get_settings().embedding_model).margin


@pytest.fixture(scope="session")
def opensearch_node(tmp_path_factory):
    """The worker's real OpenSearch node (tests/opensearch_node_support.py), stopped at the end."""
    from tests.opensearch_node_support import node_or_skip

    node = node_or_skip(tmp_path_factory)
    yield node
    node.stop()
