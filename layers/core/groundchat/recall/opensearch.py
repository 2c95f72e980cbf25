"""The recall index in AWS: its own OpenSearch index beside the corpus, the owner a keyword field.

Every search and delete this module sends carries a `term` filter on `owner`, set from the signed-in
caller by the server (or, for the sweep, from the entry itself): the model's arguments never reach
the filter. The one request that reads across owners is the sweep's expiry query, and it returns
keys (owner, conversation), never text. The index is created on first write with the mapping below.

Each entry carries its conversation's `expires_at`, so the sweep (`recall.sweep`) finds the entries
of expired conversations with a range query on it instead of reading every entry.

Two kinds of OpenSearch, one interface:
- a managed domain: the entry id is the document id (re-adding an entry overwrites it), and the
  removals and renewals are one `_delete_by_query` / `_update_by_query` each, refreshed at once;
- Serverless (`GROUNDCHAT_OPENSEARCH_SERVICE=aoss`, a VECTORSEARCH collection), which has neither
  by-query API nor `refresh`, and assigns document ids itself (a custom id is refused). The entry id
  is then a keyword field (`entry_id`); removals and renewals search the matching documents' ids
  (bounded pages, `search_after`) and send them to `_bulk` as deletes or updates by id. Re-adding an
  entry updates the document that already carries its `entry_id`; one added twice within the
  collection's refresh interval (up to a minute) shows once (`search` collapses twins) and goes
  with its conversation like any other. Writes become visible to searches only after that
  interval, so the ids the sweep has just settled are left out of its next expiry queries for a
  while (`SETTLED_FOR`): its rounds still make progress and it does not report a false backlog.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable, Iterator

from groundchat.json_shapes import as_object
from groundchat.recall.entries import RecallEntry, RecallHit
from groundchat.search.embeddings import Embedder
from groundchat.search.query_text import terms

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from groundchat.json_shapes import JsonList, JsonObject

_FIELDS = ["owner", "conversation_id", "run_id", "question", "answer", "created_at"]

# Serverless: documents per page of ids (one `_bulk` per page) and pages per call, so one call
# stays bounded; what is left is the next sweep's (every 15 minutes).
PAGE = 500
MAX_PAGES = 20
# Serverless makes writes searchable 10 to 60 seconds after they return: settled ids stay out of
# the expiry query for twice that.
SETTLED_FOR = 120.0


def index_body(dimension: int, serverless: bool = False) -> JsonObject:
    properties: JsonObject = {
        "owner": {"type": "keyword"},
        "conversation_id": {"type": "keyword"},
        "run_id": {"type": "keyword"},
        "question": {"type": "text"},
        "answer": {"type": "text"},
        "created_at": {"type": "double"},
        "expires_at": {"type": "long"},
        "model_id": {"type": "keyword"},
        "embedding": {"type": "knn_vector", "dimension": dimension,
                      "method": {"name": "hnsw", "engine": "lucene", "space_type": "cosinesimil"}},
    }
    if serverless:
        properties["entry_id"] = {"type": "keyword"}  # the document id is the collection's own
    return {"settings": {"index": {"knn": True}}, "mappings": {"dynamic": "strict", "properties": properties}}


# An index made before entries kept their conversation's expiry gains the field (the mapping is
# strict); putting a field that is already mapped the same way changes nothing.
EXPIRY_MAPPING: JsonObject = {"properties": {"expires_at": {"type": "long"}}}
SERVERLESS_MAPPING: JsonObject = {"properties": {"expires_at": {"type": "long"}, "entry_id": {"type": "keyword"}}}

# Sets each live conversation's entries to its expiry, never back (an entry committed since the
# sweep read the conversation keeps its later one): a no-op otherwise, so nothing is rewritten.
RENEW_SCRIPT = ("def e = params.expires[ctx._source.conversation_id]; "
                "if (e == null || (ctx._source.expires_at != null && ctx._source.expires_at >= e)) { ctx.op = 'noop'; } "
                "else { ctx._source.expires_at = e; }")


def owner_filter(owner: str) -> JsonObject:
    return {"term": {"owner": owner}}


def search_body(owner: str, query: str, vector: list[float] | None, k: int) -> JsonObject:
    """Words and meaning in one query, both under the owner's filter."""
    should: list[JsonObject] = [{"multi_match": {"query": " ".join(terms(query)) or query,
                                                     "fields": ["question^2", "answer"]}}]
    if vector is not None:
        should.append({"knn": {"embedding": {"vector": [*vector], "k": k, "filter": owner_filter(owner)}}})
    return {"size": k, "_source": [*_FIELDS],
            "query": {"bool": {"filter": [owner_filter(owner)], "should": [*should], "minimum_should_match": 1}}}


def conversation_query(owner: str, conversation_id: str) -> JsonObject:
    return {"bool": {"filter": [owner_filter(owner), {"term": {"conversation_id": conversation_id}}]}}


def delete_body(owner: str, conversation_id: str) -> JsonObject:
    return {"query": conversation_query(owner, conversation_id)}


def entry_query(owner: str, entry_id: str) -> JsonObject:
    return {"bool": {"filter": [owner_filter(owner), {"term": {"entry_id": entry_id}}]}}


def due_body(now: int, limit: int, settled: list[str] | None = None) -> JsonObject:
    """Entries whose conversation's expiry has come (or that carry none yet): owner and conversation
    only, `limit` at most; `settled` ids (Serverless, not yet refreshed) left out."""
    query: JsonObject = {"should": [{"range": {"expires_at": {"lte": int(now)}}},
                                        {"bool": {"must_not": [{"exists": {"field": "expires_at"}}]}}],
                             "minimum_should_match": 1}
    if settled:
        query["must_not"] = [{"ids": {"values": [*settled]}}]
    return {"size": limit, "_source": ["owner", "conversation_id"], "query": {"bool": query}}


def conversations_query(pairs: list[tuple[str, str]]) -> JsonObject:
    """Every entry of these (owner, conversation id) pairs, each pair matched whole."""
    return {"bool": {"should": [conversation_query(owner, conversation_id) for owner, conversation_id in pairs],
                     "minimum_should_match": 1}}


def renew_body(expiries: dict[tuple[str, str], int]) -> JsonObject:
    return {"query": conversations_query(list(expiries)),
            "script": {"lang": "painless", "source": RENEW_SCRIPT,
                       "params": {"expires": {conversation_id: int(e) for (_, conversation_id), e in expiries.items()}}}}


def page_body(query: JsonObject, source: list[str] | bool, size: int, after: JsonList | None = None) -> JsonObject:
    """One page of matching documents in a stable order (`search_after` needs a total order: the
    entry id breaks ties), ids only unless `source` names fields."""
    body: JsonObject = {"size": size, "_source": [*source] if isinstance(source, list) else source, "query": query,
                            "sort": [{"created_at": "asc"}, {"entry_id": "asc"}]}
    if after is not None:
        body["search_after"] = after
    return body


def delete_lines(ids: list[str]) -> list[JsonObject]:
    return [{"delete": {"_id": doc_id}} for doc_id in ids]


def update_lines(docs: dict[str, JsonObject]) -> list[JsonObject]:
    lines: list[JsonObject] = []
    for doc_id, doc in docs.items():
        lines += [{"update": {"_id": doc_id}}, {"doc": doc}]
    return lines


class OpenSearchRecallIndex:
    name = "opensearch"

    def __init__(self, client: OpenSearch, index: str, embedder: Callable[[], Embedder], *, serverless: bool = False,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.index = index
        self.serverless = serverless
        self._make_embedder = embedder
        self._embedder: Embedder | None = None
        self._ready = False
        self._expiry_mapped = False
        self._clock = clock
        self._settled: dict[str, float] = {}  # Serverless: document id -> when the sweep settled it

    def _model(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self._make_embedder()
        return self._embedder

    def _ensure_index(self, dimension: int) -> None:
        if self._ready:
            return
        if not self.client.indices.exists(index=self.index):
            self.client.indices.create(index=self.index, body=index_body(dimension, self.serverless))
            self._expiry_mapped = True
        else:
            self._map_expiry()
        self._ready = True

    def _map_expiry(self) -> None:
        if not self._expiry_mapped:
            self.client.indices.put_mapping(index=self.index,
                                            body=SERVERLESS_MAPPING if self.serverless else EXPIRY_MAPPING)
            self._expiry_mapped = True

    def add(self, entry: RecallEntry) -> None:
        model = self._model()
        vector = [float(x) for x in model.embed([entry.text()])[0]]
        self._ensure_index(len(vector))
        doc = {"owner": entry.owner, "conversation_id": entry.conversation_id, "run_id": entry.run_id,
               "question": entry.question, "answer": entry.answer, "created_at": entry.created_at,
               "model_id": model.model_id, "embedding": vector}
        if entry.expires_at is not None:
            doc["expires_at"] = int(entry.expires_at)
        if not self.serverless:
            self.client.index(index=self.index, id=entry.id, body=doc)
            return
        doc["entry_id"] = entry.id
        found = self.client.search(index=self.index, body={"size": 1, "_source": False,
                                                          "query": entry_query(entry.owner, entry.id)})
        hits = found["hits"]["hits"]
        if hits:  # added before (and visible): updated in place, not a second document
            self._bulk(update_lines({hits[0]["_id"]: doc}), "update")
        else:
            self.client.index(index=self.index, body=doc)

    def search(self, owner: str, query: str, k: int = 5) -> list[RecallHit]:
        if not owner:
            return []
        vector = [float(x) for x in self._model().embed_query(query).vector]
        response = self.client.search(index=self.index, body=search_body(owner, query, vector, k))
        hits, seen = [], set()
        for hit in response["hits"]["hits"]:
            src = hit["_source"]
            if src.get("owner") != owner:  # belt and braces: the filter already guarantees it
                continue
            entry = RecallEntry(owner=src["owner"], conversation_id=src["conversation_id"], run_id=src["run_id"],
                                question=src["question"], answer=src["answer"],
                                created_at=float(src.get("created_at") or 0))
            if entry.id in seen:  # Serverless: an entry added twice before a refresh shows once
                continue
            seen.add(entry.id)
            hits.append(RecallHit(entry, float(hit["_score"] or 0)))
        return hits

    def remove_conversation(self, owner: str, conversation_id: str) -> int:
        if not self.client.indices.exists(index=self.index):
            return 0
        if self.serverless:
            return self._delete_matching(conversation_query(owner, conversation_id))
        response = self.client.delete_by_query(index=self.index, body=delete_body(owner, conversation_id),
                                               params={"refresh": "true"})
        return int(response.get("deleted", 0))

    # ---- the sweep (recall.sweep): a range query on the expiry, never a scan of every entry ----

    def due_conversations(self, now: int, limit: int) -> list[tuple[str, str]]:
        """Up to `limit` (owner, conversation id) pairs with an entry whose expiry has come."""
        if not self.client.indices.exists(index=self.index):
            return []  # nothing was ever indexed
        settled = self._recently_settled() if self.serverless else None
        response = self.client.search(index=self.index, body=due_body(now, limit, settled))
        pairs = (((hit.get("_source") or {}).get("owner"), (hit.get("_source") or {}).get("conversation_id"))
                 for hit in response["hits"]["hits"])
        return list(dict.fromkeys((o, c) for o, c in pairs if o and c))

    def remove_conversations(self, pairs: list[tuple[str, str]]) -> int:
        """Every entry of each pair, whatever its expiry: on a domain one delete by query, refreshed
        so the sweep's next range query no longer sees them; on Serverless by id, in pages."""
        if not pairs:
            return 0
        if self.serverless:
            return self._delete_matching(conversations_query(pairs))
        response = self.client.delete_by_query(index=self.index, body={"query": conversations_query(pairs)},
                                               params={"refresh": "true", "conflicts": "proceed"})
        return int(response.get("deleted", 0))

    def renew(self, expiries: dict[tuple[str, str], int]) -> int:
        """Live conversations' entries moved forward to their conversation's expiry (on a domain one
        update by query; on Serverless updates by id of the entries that are behind); returns how
        many moved."""
        if not expiries:
            return 0
        self._map_expiry()
        if self.serverless:
            return self._renew_by_id(expiries)
        response = self.client.update_by_query(index=self.index, body=renew_body(expiries),
                                               params={"refresh": "true", "conflicts": "proceed"})
        return int(response.get("updated", 0))

    def close(self) -> None:
        close = getattr(self.client, "close", None)
        if close is not None:
            close()

    # ---- Serverless: ids found by search, then `_bulk` by id ----

    def _pages(self, query: JsonObject, source: list[str] | bool) -> Iterator[list[JsonObject]]:
        after = None
        for _ in range(MAX_PAGES):
            hits = self.client.search(index=self.index, body=page_body(query, source, PAGE, after))["hits"]["hits"]
            if hits:
                yield hits
            if len(hits) < PAGE:
                return
            after = hits[-1]["sort"]

    def _delete_matching(self, query: JsonObject) -> int:
        return sum(self._bulk(delete_lines([str(hit["_id"]) for hit in hits]), "delete") for hits in self._pages(query, False))

    def _renew_by_id(self, expiries: dict[tuple[str, str], int]) -> int:
        moved = 0
        for hits in self._pages(conversations_query(list(expiries)), ["owner", "conversation_id", "expires_at"]):
            behind: dict[str, JsonObject] = {}
            for hit in hits:
                src = as_object(hit.get("_source"))
                expires = expiries.get((str(src.get("owner")), str(src.get("conversation_id"))))
                stamp = src.get("expires_at")
                # Never back: an entry committed since the sweep read its conversation keeps its later expiry.
                if expires is not None and (stamp is None or (isinstance(stamp, (int, float)) and int(stamp) < expires)):
                    behind[str(hit["_id"])] = {"expires_at": int(expires)}
            if behind:
                moved += self._bulk(update_lines(behind), "update")
        return moved

    def _bulk(self, lines: list[JsonObject], action: str) -> int:
        """Sends one `_bulk`; returns how many documents it changed. The ids it settled (deleted,
        already gone, updated or already up to date) are remembered for the expiry query."""
        response = self.client.bulk(index=self.index, body=lines)
        changed, now = 0, self._clock()
        for item in response.get("items", []):
            result = item.get(action) or {}
            if result.get("result") in ("deleted", "updated"):
                changed += 1
            if result.get("result") in ("deleted", "not_found", "updated", "noop"):
                self._settled[result["_id"]] = now
        return changed

    def _recently_settled(self) -> list[str]:
        now = self._clock()
        self._settled = {doc_id: at for doc_id, at in self._settled.items() if now - at < SETTLED_FOR}
        return sorted(self._settled)
