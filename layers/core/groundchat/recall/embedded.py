"""The local recall index: one SQLite file (FTS5 for words, stored vectors for meaning), keyed by owner.

Every search and delete names the owner in its SQL: there is no query that could return another
person's entry (the sweep's expiry query reads across owners, and returns keys, never text). Each
entry carries its conversation's expiry, so the sweep finds the entries of expired conversations by
an index on it (`due_conversations`), not by reading them all. The embedding model is loaded on the
first write or search, not at start.
"""
from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Callable

import numpy as np

from groundchat.recall.entries import RecallEntry, RecallHit
from groundchat.search.embeddings import Embedder
from groundchat.search.query_text import fts_match, terms

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
  rowid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, owner TEXT NOT NULL, conversation_id TEXT NOT NULL,
  run_id TEXT NOT NULL, question TEXT NOT NULL, answer TEXT NOT NULL, created_at REAL NOT NULL,
  model_id TEXT NOT NULL, vector BLOB NOT NULL, expires_at INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS entries_owner ON entries(owner, conversation_id);
CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5(question, answer, tokenize='porter unicode61');
"""
# An entry's conversation's expiry; 0 when not known (entries written before expiries were kept, in
# files that gain the column here): the next sweep looks at those at once.
_EXPIRY_COLUMN = "ALTER TABLE entries ADD COLUMN expires_at INTEGER NOT NULL DEFAULT 0"
# The sweep's range query reads this index, never the whole table.
_EXPIRY_INDEX = "CREATE INDEX IF NOT EXISTS entries_expiry ON entries(expires_at)"
_COLUMNS = "e.owner, e.conversation_id, e.run_id, e.question, e.answer, e.created_at"


def _forget(db: sqlite3.Connection) -> None:
    """A deleted entry's words leave the file, not only the index: SQLite keeps deleted rows in
    free pages and FTS5 keeps their terms in old segments until a merge. The merge ('optimize')
    and VACUUM rewrite both without them (the file is a person's own past, a few MB at most)."""
    db.execute("INSERT INTO entries_fts(entries_fts) VALUES('optimize')")
    db.commit()
    db.execute("VACUUM")
RRF_K = 60  # reciprocal-rank fusion of the word and meaning rankings, k as in search/fusion.py's rank part


def _entry(row: tuple) -> RecallEntry:
    return RecallEntry(owner=row[0], conversation_id=row[1], run_id=row[2], question=row[3], answer=row[4],
                       created_at=float(row[5]))


class EmbeddedRecallIndex:
    name = "embedded"

    def __init__(self, path: Path, embedder: Callable[[], Embedder]) -> None:
        self.path = Path(path)
        self._make_embedder = embedder
        self._embedder: Embedder | None = None
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, check_same_thread=False)
            conn.executescript(_SCHEMA)
            if "expires_at" not in {row[1] for row in conn.execute("PRAGMA table_info(entries)")}:
                conn.execute(_EXPIRY_COLUMN)
            conn.execute(_EXPIRY_INDEX)
            conn.commit()
            self._conn = conn
        return self._conn

    def _model(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self._make_embedder()
        return self._embedder

    def add(self, entry: RecallEntry) -> None:
        model = self._model()
        vector = np.asarray(model.embed([entry.text()])[0], dtype=np.float32)
        with self._lock:
            db = self._db()
            old = db.execute("SELECT rowid FROM entries WHERE id = ?", (entry.id,)).fetchone()
            if old:  # the same exchange indexed again replaces itself
                self._delete_rowids(db, [old[0]])
            cur = db.execute(
                "INSERT INTO entries (id, owner, conversation_id, run_id, question, answer, created_at, model_id, vector, "
                "expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (entry.id, entry.owner, entry.conversation_id, entry.run_id, entry.question, entry.answer,
                 entry.created_at, model.model_id, vector.tobytes(), int(entry.expires_at or 0)))
            db.execute("INSERT INTO entries_fts (rowid, question, answer) VALUES (?, ?, ?)",
                       (cur.lastrowid, entry.question, entry.answer))
            db.commit()

    def search(self, owner: str, query: str, k: int = 5) -> list[RecallHit]:
        if not owner:
            return []
        with self._lock:
            db = self._db()
            words = self._words(db, owner, query, k * 4)
            rows = db.execute(f"SELECT e.rowid, {_COLUMNS}, e.model_id, e.vector FROM entries e WHERE e.owner = ?",
                              (owner,)).fetchall()
        if not rows:
            return []
        meaning = self._meaning(rows, query)
        fused: dict[int, float] = {}
        for ranking in (words, meaning):
            for rank, rowid in enumerate(ranking):
                fused[rowid] = fused.get(rowid, 0.0) + 1.0 / (RRF_K + rank + 1)
        by_rowid = {r[0]: _entry(r[1:7]) for r in rows}
        best = sorted(fused.items(), key=lambda item: -item[1])[:k]
        return [RecallHit(by_rowid[rowid], score) for rowid, score in best if rowid in by_rowid]

    @staticmethod
    def _words(db: sqlite3.Connection, owner: str, query: str, k: int) -> list[int]:
        found = terms(query)
        if not found:
            return []
        match = fts_match(found)
        sql = ("SELECT e.rowid FROM entries_fts JOIN entries e ON e.rowid = entries_fts.rowid "
               "WHERE entries_fts MATCH ? AND e.owner = ? ORDER BY bm25(entries_fts, 2.0, 1.0) LIMIT ?")
        return [r[0] for r in db.execute(sql, (match, owner, k))]

    def _meaning(self, rows: list[tuple], query: str) -> list[int]:
        model = self._model()
        same = [r for r in rows if r[7] == model.model_id]  # vectors of another model are not comparable
        if not same or not query.strip():
            return []
        matrix = np.frombuffer(b"".join(r[8] for r in same), dtype=np.float32).reshape(len(same), -1)
        scores = matrix @ model.embed_query(query).vector.astype(np.float32)
        return [same[i][0] for i in np.argsort(-scores)[:20]]

    def remove_conversation(self, owner: str, conversation_id: str) -> int:
        with self._lock:
            db = self._db()
            rowids = [r[0] for r in db.execute("SELECT rowid FROM entries WHERE owner = ? AND conversation_id = ?",
                                               (owner, conversation_id))]
            self._delete_rowids(db, rowids)
            db.commit()
        return len(rowids)

    # ---- the sweep (recall.sweep): by expiry, never a scan of every entry ----

    def due_conversations(self, now: int, limit: int) -> list[tuple[str, str]]:
        """Up to `limit` (owner, conversation id) pairs with an entry whose expiry has come (or is
        not known), longest due first: the conversations the sweep must look at."""
        with self._lock:
            # The inner range query is what reads the expiry index; a DISTINCT straight on the table
            # would have SQLite walk the owner index instead, every entry of it.
            rows = self._db().execute(
                "SELECT DISTINCT owner, conversation_id FROM "
                "(SELECT owner, conversation_id FROM entries WHERE expires_at <= ? ORDER BY expires_at) LIMIT ?",
                (int(now), int(limit))).fetchall()
        return [(r[0], r[1]) for r in rows]

    def remove_conversations(self, pairs: list[tuple[str, str]]) -> int:
        """Every entry of each (owner, conversation id), whatever its expiry; returns how many went."""
        with self._lock:
            db = self._db()
            rowids = [r[0] for owner, conversation_id in pairs for r in db.execute(
                "SELECT rowid FROM entries WHERE owner = ? AND conversation_id = ?", (owner, conversation_id))]
            self._delete_rowids(db, rowids)
            db.commit()
        return len(rowids)

    def renew(self, expiries: dict[tuple[str, str], int]) -> int:
        """Moves the entries of each live (owner, conversation id) forward to its conversation's
        expiry; never back, so an entry committed since the sweep read the conversation keeps its
        later one. Returns how many entries moved."""
        moved = 0
        with self._lock:
            db = self._db()
            for (owner, conversation_id), expires in expiries.items():
                moved += db.execute(
                    "UPDATE entries SET expires_at = ? WHERE owner = ? AND conversation_id = ? AND expires_at < ?",
                    (int(expires), owner, conversation_id, int(expires))).rowcount
            db.commit()
        return moved

    @staticmethod
    def _delete_rowids(db: sqlite3.Connection, rowids: list[int]) -> None:
        for rowid in rowids:
            db.execute("DELETE FROM entries_fts WHERE rowid = ?", (rowid,))
            db.execute("DELETE FROM entries WHERE rowid = ?", (rowid,))
        if rowids:
            db.commit()
            _forget(db)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
