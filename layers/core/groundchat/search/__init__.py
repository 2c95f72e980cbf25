"""Hybrid search over the corpus: BM25 and vector legs fused by reciprocal rank, two backends."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from groundchat.search.types import BackendUnavailable, Passage, SearchResult

if TYPE_CHECKING:
    from groundchat.config import Settings
    from groundchat.search.service import SearchService


def __getattr__(name: str):
    # The service (and numpy with the model's runtime under it) loads when a search is built, not
    # when a module only needs the request's preferences (search/preferences.py) at import.
    if name == "SearchService":
        from groundchat.search.service import SearchService

        return SearchService
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def backend_kind(settings: "Settings") -> str:
    if settings.search_backend in ("embedded", "opensearch"):
        return settings.search_backend
    return "opensearch" if settings.opensearch_endpoint else "embedded"


def embedded_index_path(settings: "Settings") -> Path:
    return Path(settings.home) / "index.sqlite"


def open_index_store(settings: "Settings"):
    """The configured index as the ingest writes it (the serving side is `open_default_search`)."""
    if backend_kind(settings) == "opensearch":
        from groundchat.search.opensearch import OpenSearchStore, make_client

        return OpenSearchStore(make_client(settings), settings.opensearch_index_alias)
    from groundchat.search.embedded import EmbeddedStore

    return EmbeddedStore(embedded_index_path(settings))


def open_default_search(settings: "Settings") -> "SearchService":
    """The configured search service: the embedded file by default, OpenSearch when an endpoint is set."""
    from groundchat.search.service import SearchService
    from groundchat.search.embeddings import make_embedder
    from groundchat.search.rerank import make_reranker

    embedder = make_embedder(settings.embedding_model, region=settings.aws_region)
    if backend_kind(settings) == "opensearch":
        from groundchat.search.opensearch import OpenSearchIndex, make_client

        backend = OpenSearchIndex(make_client(settings), settings.opensearch_index_alias)
    else:
        from groundchat.search.embedded import EmbeddedIndex

        backend = EmbeddedIndex(embedded_index_path(settings))
    return SearchService(
        backend, embedder, reranker=make_reranker(settings.rerank, region=settings.aws_region),
        max_excerpts=settings.search_max_excerpts, max_excerpt_chars=settings.search_max_excerpt_chars,
        graph=settings.search_graph == "on",
    )


__all__ = ["BackendUnavailable", "Passage", "SearchResult", "SearchService", "open_default_search"]
