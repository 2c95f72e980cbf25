"""The embedded index: one SQLite file with an FTS5 table (porter stemming, BM25) and the vectors.

The FTS table is contentless: it indexes the keyword fields derived from each chunk
(corpus/index_text.py: a heading in the `title` column, the body in `text`), and a search joins
its rowids to `chunks` for what is shown and cited.

Serving and building are separate files: a build writes `<name>.building-<id>` and, only when it
is complete, renames it over the serving file (an atomic rename is the alias swap). A reader
notices the new file on its next search; a failed build leaves the serving file untouched.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import uuid
from pathlib import Path
from typing import Iterable, Literal, Sequence

import numpy as np

from groundchat.corpus.chunk import QUESTIONS, Chunk, Source
from groundchat.corpus.index_text import keyword_fields
from groundchat.search.embeddings import EmbeddingModelMismatch, QueryVector
from groundchat.search.graph import Graph
from groundchat.search.query_text import KEYWORD_WEIGHTS, fts_match, terms
from groundchat.search.question_leg import QUESTION_ROWS, ROWS
from groundchat.search.types import BackendUnavailable, LegHit

# The stored vectors, their rowids and their sources, row for row.
_Stored = tuple[np.ndarray, np.ndarray, np.ndarray]

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE chunks (
  rowid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, ref TEXT NOT NULL, source TEXT NOT NULL,
  section TEXT NOT NULL, title TEXT NOT NULL, text TEXT NOT NULL, url TEXT NOT NULL,
  updated_at TEXT, meta TEXT NOT NULL, vector BLOB NOT NULL
);
CREATE INDEX chunks_source_section ON chunks(source, section);
CREATE VIRTUAL TABLE chunks_fts USING fts5(
  title, section, text, content='', tokenize='porter unicode61'
);
CREATE TABLE graph (body TEXT NOT NULL);
"""
_COLUMNS = "c.id, c.ref, c.source, c.section, c.title, c.text, c.url, c.updated_at, c.meta"


# A value of a row as sqlite3 returns it.
SqlValue = str | int | float | bytes | None
# A row of `_COLUMNS`, typed as the schema declares them, then whatever a query selects after them.
ChunkRow = tuple[str, str, Source, str, str, str, str, str | None, str, *tuple[SqlValue, ...]]


def _chunk(row: ChunkRow) -> Chunk:
    return Chunk(id=row[0], ref=row[1], source=row[2], section=row[3], title=row[4], text=row[5],
                 url=row[6], updated_at=row[7], meta=json.loads(row[8]))


class EmbeddedIndex:
    """Reads the serving file; reopens it when a build has swapped a new one in."""

    name = "embedded"

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._stamp: tuple[int, int] | None = None
        self._vectors: np.ndarray | None = None
        self._vector_rowids: np.ndarray | None = None
        self._masks: dict[tuple[str, ...], np.ndarray] = {}
        self._questions: dict[int, Chunk] | None = None
        self._meta: dict[str, str] = {}
        # The graph of the file now serving, read on the first search that walks it; False: it has none.
        self._graph: Graph | Literal[False] | None = None

    # -- opening -----------------------------------------------------------------------------

    def _current(self) -> sqlite3.Connection:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            raise BackendUnavailable("index_missing", f"no index at {self.path}; run `groundchat ingest`") from None
        stamp = (st.st_ino, st.st_mtime_ns)
        with self._lock:
            if self._conn is None or stamp != self._stamp:
                try:
                    conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
                    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
                except sqlite3.Error as exc:
                    raise BackendUnavailable("index_unreadable", str(exc)) from exc
                if self._conn is not None:
                    self._conn.close()
                self._conn, self._stamp, self._meta = conn, stamp, meta
                self._vectors, self._masks, self._questions, self._graph = None, {}, None, None
            return self._conn

    def model_id(self) -> str | None:
        try:
            self._current()
        except BackendUnavailable:
            return None
        return self._meta.get("model_id")

    def meta(self) -> dict[str, str]:
        self._current()
        return dict(self._meta)

    # -- searching ---------------------------------------------------------------------------

    def legs(self, query: str, vector: QueryVector | None, k: int, sources: list[str] | None,
             want: Iterable[str]) -> dict[str, list[LegHit]]:
        conn = self._current()
        out: dict[str, list[LegHit]] = {}
        try:
            if "bm25" in want:
                out["bm25"] = self._bm25(conn, query, k, sources)
            if vector is not None and ("vector" in want or ROWS in want):
                # One snapshot of the stored vectors and one scan serve the vector leg and the questions.
                stored = self._load_vectors(conn)
                scores = self._scores(stored[0], vector)
                if "vector" in want:
                    out["vector"] = self._knn(conn, stored, scores, k, sources)
                if ROWS in want:
                    out[ROWS] = self._nearest_questions(conn, stored, scores)
        except sqlite3.Error as exc:
            raise BackendUnavailable("index_error", str(exc)) from exc
        return out

    def _bm25(self, conn: sqlite3.Connection, query: str, k: int, sources: list[str] | None) -> list[LegHit]:
        words = terms(query)
        if not words:
            return []
        match = fts_match(words)
        weights = ", ".join(f"{float(w)}" for w in KEYWORD_WEIGHTS.values())  # the columns' order
        sql = (f"SELECT {_COLUMNS}, bm25(chunks_fts, {weights}) AS rank FROM chunks_fts "
               "JOIN chunks c ON c.rowid = chunks_fts.rowid WHERE chunks_fts MATCH ?")
        params: list[str | int] = [match]
        if sources:
            sql += f" AND c.source IN ({','.join('?' * len(sources))})"
            params.extend(sources)
        sql += " ORDER BY rank LIMIT ?"
        params.append(k)
        # bm25() is lower-is-better; negated so every leg's score is higher-is-better.
        return [LegHit(_chunk(r), -float(r[9])) for r in conn.execute(sql, params)]

    def _scores(self, matrix: np.ndarray, vector: QueryVector) -> np.ndarray:
        """The query's cosine with every stored vector (all are unit length)."""
        index_model = self._meta.get("model_id", "")
        if vector.model_id != index_model:
            raise EmbeddingModelMismatch(index_model, vector.model_id)
        return matrix @ vector.vector.astype(np.float32)

    def _knn(self, conn: sqlite3.Connection, stored: _Stored, scores: np.ndarray, k: int,
             sources: list[str] | None) -> list[LegHit]:
        _, rowids, row_sources = stored
        if sources:
            scores = np.where(self._mask(row_sources, sources), scores, -np.inf)
        top = np.argsort(-scores)[:k]
        top = [i for i in top if np.isfinite(scores[i])]
        if not top:
            return []
        wanted = [int(rowids[i]) for i in top]
        rows = {r[9]: r for r in conn.execute(
            f"SELECT {_COLUMNS}, c.rowid FROM chunks c WHERE c.rowid IN ({','.join('?' * len(wanted))})", wanted)}
        return [LegHit(_chunk(rows[int(rowids[i])]), float(scores[i])) for i in top]

    def _nearest_questions(self, conn: sqlite3.Connection, stored: _Stored, scores: np.ndarray) -> list[LegHit]:
        """The question bank's `QUESTION_ROWS` nearest questions. The bank is small and read on every
        search, so its rows are kept in memory (until the file changes) rather than read each time."""
        _, rowids, row_sources = stored
        positions = np.flatnonzero(self._mask(row_sources, [QUESTIONS]))
        if not positions.size:
            return []
        questions = self._questions  # read once: a swap to a new file may reset it meanwhile
        if questions is None:
            questions = {r[9]: _chunk(r) for r in conn.execute(
                f"SELECT {_COLUMNS}, c.rowid FROM chunks c WHERE c.source = ?", (QUESTIONS,))}
            self._questions = questions
        nearest = positions[np.argsort(-scores[positions])[:QUESTION_ROWS]]
        return [LegHit(questions[int(rowids[i])], float(scores[i])) for i in nearest if int(rowids[i]) in questions]

    def _mask(self, row_sources: np.ndarray, sources: list[str]) -> np.ndarray:
        """Which stored vectors belong to `sources`, kept per set of sources until the file changes (a
        mask of another file's length, cached by a search that ran across a swap, is made again)."""
        key = tuple(sorted(sources))
        mask = self._masks.get(key)
        if mask is None or mask.shape != row_sources.shape:
            mask = self._masks[key] = np.isin(row_sources, list(key))
        return mask

    def _load_vectors(self, conn: sqlite3.Connection) -> _Stored:
        if self._vectors is None:
            rows = conn.execute("SELECT rowid, source, vector FROM chunks ORDER BY rowid").fetchall()
            dim = int(self._meta.get("dimension", "0"))
            self._vectors = (np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), dim)
                             if rows else np.zeros((0, dim), dtype=np.float32))
            self._vector_rowids = np.array([r[0] for r in rows], dtype=np.int64)
            self._vector_sources = np.array([r[1] for r in rows])
        return self._vectors, self._vector_rowids, self._vector_sources  # type: ignore[return-value]

    def graph(self) -> Graph | None:
        """The graph stored with the index (search/graph.py), None for a file built without one."""
        conn = self._current()
        graph = self._graph  # read once: a swap to a new file may reset it meanwhile
        if graph is None:
            try:
                row = conn.execute("SELECT body FROM graph").fetchone()
            except sqlite3.Error as exc:
                raise BackendUnavailable("index_error", str(exc)) from exc
            graph = Graph.from_json(row[0]) if row else False
            self._graph = graph
        return graph or None

    def chunks_by_id(self, ids: list[str]) -> list[Chunk]:
        """The passages of these chunk ids that the index holds (the graph leg's hydration)."""
        if not ids:
            return []
        conn = self._current()
        try:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM chunks c WHERE c.id IN ({','.join('?' * len(ids))})", ids)
            return [_chunk(r) for r in rows]
        except sqlite3.Error as exc:
            raise BackendUnavailable("index_error", str(exc)) from exc

    def get_section(self, source: str, section: str) -> Chunk | None:
        conn = self._current()
        row = conn.execute(f"SELECT {_COLUMNS} FROM chunks c WHERE c.source = ? AND c.section = ?",
                           (source, section)).fetchone()
        return _chunk(row) if row else None

    # -- what the ingest reuses --------------------------------------------------------------

    def stored(self, source: str | None = None) -> list[tuple[Chunk, np.ndarray]]:
        try:
            conn = self._current()
        except BackendUnavailable:
            return []
        sql = f"SELECT {_COLUMNS}, c.vector FROM chunks c"
        rows = conn.execute(sql + (" WHERE c.source = ?" if source else ""), (source,) if source else ()).fetchall()
        return [(_chunk(r), np.frombuffer(r[9], dtype=np.float32)) for r in rows]

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def remove_abandoned_builds(target: Path) -> list[Path]:
    """The half-built files (and their SQLite journals) of builds whose process is gone: a killed
    ingest never renames its file over the serving one, so nothing else would ever remove it."""
    removed: list[Path] = []
    for leftover in target.parent.glob(f"{target.name}.building-*"):
        builder = leftover.name[len(target.name) + len(".building-"):].split("-", 1)[0]
        if builder.isdigit() and _alive(int(builder)):
            continue
        leftover.unlink(missing_ok=True)
        removed.append(leftover)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


class EmbeddedBuild:
    """A new index file being filled; `commit` swaps it in, `abort` throws it away."""

    def __init__(self, path: Path, *, model_id: str, dimension: int) -> None:
        self.target = Path(path)
        self.target.parent.mkdir(parents=True, exist_ok=True)
        remove_abandoned_builds(self.target)
        # The builder's pid in the name: a later build can tell a file whose builder was killed
        # (removed) from one another ingest is still writing (left alone).
        self.path = self.target.with_name(f"{self.target.name}.building-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        self._conn = sqlite3.connect(self.path)
        self._conn.executescript(_SCHEMA)
        self._dimension = dimension
        self._meta = {"model_id": model_id, "dimension": str(dimension)}
        self.count = 0

    def add(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        if len(chunks) != len(vectors):
            raise ValueError("one vector per chunk")
        for chunk, vec in zip(chunks, vectors):
            if vec.shape != (self._dimension,):
                raise ValueError(f"vector of {chunk.ref} has shape {vec.shape}, index dimension is {self._dimension}")
            cur = self._conn.execute(
                "INSERT INTO chunks (id, ref, source, section, title, text, url, updated_at, meta, vector) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (chunk.id, chunk.ref, chunk.source, chunk.section, chunk.title, chunk.text, chunk.url,
                 chunk.updated_at, json.dumps(chunk.meta), np.asarray(vec, dtype=np.float32).tobytes()),
            )
            fields = keyword_fields(chunk)
            if fields is not None:
                self._conn.execute("INSERT INTO chunks_fts (rowid, title, section, text) VALUES (?, ?, ?, ?)",
                                   (cur.lastrowid, fields[0], chunk.section, fields[1]))
            self.count += 1

    def add_graph(self, graph: Graph) -> None:
        self._conn.execute("DELETE FROM graph")
        self._conn.execute("INSERT INTO graph (body) VALUES (?)", (graph.to_json(),))

    def commit(self, meta: dict[str, str]) -> None:
        self._meta.update(meta)
        self._conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", sorted(self._meta.items()))
        self._conn.commit()
        self._conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('optimize')")
        self._conn.commit()
        self._conn.close()
        os.replace(self.path, self.target)

    def abort(self) -> None:
        try:
            self._conn.close()
        finally:
            self.path.unlink(missing_ok=True)


class EmbeddedStore:
    """The ingest's view of the embedded backend: what is serving, and how to build a new one."""

    layout = hashlib.sha256(_SCHEMA.encode()).hexdigest()[:12]

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.reader = EmbeddedIndex(self.path)

    def serving_meta(self) -> dict[str, str] | None:
        try:
            return self.reader.meta()
        except BackendUnavailable:
            return None

    def serving_chunks(self, source: str) -> list[tuple[Chunk, np.ndarray]]:
        return self.reader.stored(source)

    def begin(self, *, model_id: str, dimension: int) -> EmbeddedBuild:
        return EmbeddedBuild(self.path, model_id=model_id, dimension=dimension)
