"""The serving index's metadata, read and amended in place, for either backend: what the ingest
records between builds (its checks of the official sources, corpus/source_checks.py) without
building an index again."""
from __future__ import annotations

import sqlite3
from contextlib import closing


def record_meta(store: object, meta: dict[str, str]) -> None:
    """Keys written into the serving index's metadata (an ingest store: embedded or OpenSearch)."""
    from groundchat.search.embedded import EmbeddedStore
    from groundchat.search.opensearch import OpenSearchStore

    if isinstance(store, EmbeddedStore):
        with closing(sqlite3.connect(store.path)) as conn, conn:
            conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", list(meta.items()))
    elif isinstance(store, OpenSearchStore):
        name, current = store.reader._named_meta()
        store.client.indices.put_mapping(index=name, body={"_meta": {**current, **meta}})
    else:  # a store of another kind says how, or keeps nothing between builds
        getattr(store, "record_meta", lambda meta: None)(meta)


def serving_meta(backend: object) -> dict[str, str]:
    """What the ingest recorded on the index a search backend serves from; {} when it cannot say."""
    from groundchat.search.embedded import EmbeddedIndex
    from groundchat.search.opensearch import OpenSearchIndex
    from groundchat.search.types import BackendUnavailable

    try:
        if isinstance(backend, EmbeddedIndex):
            return backend.meta()
        if isinstance(backend, OpenSearchIndex):
            return {key: str(value) for key, value in backend._named_meta()[1].items()}
    except BackendUnavailable:
        return {}
    return {}


__all__ = ["record_meta", "serving_meta"]
