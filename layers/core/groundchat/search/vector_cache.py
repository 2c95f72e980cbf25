"""Vectors already computed, by (embedding model id, sha256 of the exact text embedded).

A rebuilt index re-embeds only texts no ingest has embedded before: after a new index-text
version, a lost index or a forced re-ingest, unchanged texts come from here, not from the model.
The same model and the same text give the same vector, so a hit is exact, never an approximation;
the key carries the model id, and a row of the wrong size is ignored rather than served.

Local only, a SQLite file beside the embedded index. It is a cache: bounded (least recently used
rows go first), and unreadable means empty (the file is deleted and started again), never a failed
ingest. docs/engineering/ingest.md says why AWS has none.
"""
from __future__ import annotations

import hashlib
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np

if TYPE_CHECKING:
    from groundchat.search.embeddings import Embedder

MAX_ROWS = 20_000  # ≈ 30 MB at 384 dimensions; the corpus is under 1,000 texts per version
_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
  model TEXT NOT NULL, text_sha256 TEXT NOT NULL, vector BLOB NOT NULL, used REAL NOT NULL,
  PRIMARY KEY (model, text_sha256)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS vectors_used ON vectors(used);
"""


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_path_beside(index_path: Path) -> Path:
    return index_path.with_name(index_path.name + ".vectors")


class VectorCache:
    def __init__(self, path: Path, *, model_id: str, dimension: int, max_rows: int = MAX_ROWS) -> None:
        self.path = Path(path)
        self.model_id = model_id
        self.dimension = dimension
        self.max_rows = max_rows
        self.rebuilt = False  # set when an unreadable file was thrown away

    def get_many(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors of those texts that have one, by text."""
        keys = {text_key(t): t for t in texts}
        found: dict[str, np.ndarray] = {}
        rows = self._attempt(lambda conn: self._select(conn, list(keys)))
        for key, blob in rows or []:
            vector = np.frombuffer(blob, dtype=np.float32)
            if vector.shape == (self.dimension,):  # another size is not this model's vector
                found[keys[key]] = vector.copy()
        return found

    def put_many(self, pairs: Iterable[tuple[str, np.ndarray]]) -> None:
        now = time.time()
        rows = [(self.model_id, text_key(t), np.asarray(v, dtype=np.float32).tobytes(), now) for t, v in pairs]
        if rows:
            self._attempt(lambda conn: self._write(conn, rows))

    def count(self) -> int:
        return self._attempt(lambda conn: conn.execute("SELECT count(*) FROM vectors").fetchone()[0]) or 0

    # -- storage ---------------------------------------------------------------------------------

    def _select(self, conn: sqlite3.Connection, keys: list[str]) -> list[tuple[str, bytes]]:
        out: list[tuple[str, bytes]] = []
        for start in range(0, len(keys), 500):  # under SQLite's limit of bound parameters
            part = keys[start:start + 500]
            out += conn.execute(
                f"SELECT text_sha256, vector FROM vectors WHERE model = ? AND text_sha256 IN ({','.join('?' * len(part))})",
                [self.model_id, *part]).fetchall()
        if out:
            # Read means used: what the current corpus needs is the last to be evicted.
            conn.executemany("UPDATE vectors SET used = ? WHERE model = ? AND text_sha256 = ?",
                             [(time.time(), self.model_id, key) for key, _ in out])
        return out

    def _write(self, conn: sqlite3.Connection, rows: list[tuple[str, str, bytes, float]]) -> None:
        conn.executemany("INSERT OR REPLACE INTO vectors (model, text_sha256, vector, used) VALUES (?, ?, ?, ?)", rows)
        excess = conn.execute("SELECT count(*) FROM vectors").fetchone()[0] - self.max_rows
        if excess > 0:
            conn.execute("DELETE FROM vectors WHERE (model, text_sha256) IN "
                         "(SELECT model, text_sha256 FROM vectors ORDER BY used LIMIT ?)", (excess,))

    def _attempt(self, work):
        """Runs work in one transaction; an unreadable file is deleted and the work tried once on a
        new one. A cache that still fails is no cache (None), not a failed ingest."""
        for attempt in range(2):
            try:
                conn = self._connect()
                try:
                    with conn:
                        return work(conn)
                finally:
                    conn.close()
            except sqlite3.DatabaseError:
                if attempt == 0:
                    self._discard()
            except OSError:
                return None
        return None

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=30)
        conn.executescript(_SCHEMA)
        return conn

    def _discard(self) -> None:
        self.rebuilt = True
        for suffix in ("", "-journal", "-wal", "-shm"):
            Path(str(self.path) + suffix).unlink(missing_ok=True)


def vector_cache_for(store: object, embedder: Embedder) -> VectorCache | None:
    """A local index keeps its cache in a file beside it; OpenSearch has none (docs/engineering/ingest.md)."""
    from groundchat.search.embedded import EmbeddedStore

    if isinstance(store, EmbeddedStore):
        return VectorCache(cache_path_beside(store.path), model_id=embedder.model_id, dimension=embedder.dimension)
    return None
