"""The recall index in AWS: its own OpenSearch index beside the corpus, the owner a keyword field.

Every search and delete this module sends carries a `term` filter on `owner`, set from the signed-in
caller by the server: the model's arguments never reach the filter, and no request exists that
reads across owners. The index is created on first write with the mapping below.
"""
from __future__ import annotations

from typing import Any, Callable

from groundchat.recall.entries import RecallEntry, RecallHit
from groundchat.search.embeddings import Embedder
from groundchat.search.query_text import terms

_FIELDS = ["owner", "conversation_id", "run_id", "question", "answer", "created_at"]


def index_body(dimension: int) -> dict[str, Any]:
    return {
        "settings": {"index": {"knn": True}},
        "mappings": {"dynamic": "strict", "properties": {
            "owner": {"type": "keyword"},
            "conversation_id": {"type": "keyword"},
            "run_id": {"type": "keyword"},
            "question": {"type": "text"},
            "answer": {"type": "text"},
            "created_at": {"type": "double"},
            "model_id": {"type": "keyword"},
            "embedding": {"type": "knn_vector", "dimension": dimension,
                          "method": {"name": "hnsw", "engine": "lucene", "space_type": "cosinesimil"}},
        }},
    }


def owner_filter(owner: str) -> dict[str, Any]:
    return {"term": {"owner": owner}}


def search_body(owner: str, query: str, vector: list[float] | None, k: int) -> dict[str, Any]:
    """Words and meaning in one query, both under the owner's filter."""
    should: list[dict[str, Any]] = [{"multi_match": {"query": " ".join(terms(query)) or query,
                                                     "fields": ["question^2", "answer"]}}]
    if vector is not None:
        should.append({"knn": {"embedding": {"vector": vector, "k": k, "filter": owner_filter(owner)}}})
    return {"size": k, "_source": _FIELDS,
            "query": {"bool": {"filter": [owner_filter(owner)], "should": should, "minimum_should_match": 1}}}


def delete_body(owner: str, conversation_id: str) -> dict[str, Any]:
    return {"query": {"bool": {"filter": [owner_filter(owner), {"term": {"conversation_id": conversation_id}}]}}}


class OpenSearchRecallIndex:
    name = "opensearch"

    def __init__(self, client: Any, index: str, embedder: Callable[[], Embedder]) -> None:
        self.client = client
        self.index = index
        self._make_embedder = embedder
        self._embedder: Embedder | None = None
        self._ready = False

    def _model(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self._make_embedder()
        return self._embedder

    def _ensure_index(self, dimension: int) -> None:
        if self._ready:
            return
        if not self.client.indices.exists(index=self.index):
            self.client.indices.create(index=self.index, body=index_body(dimension))
        self._ready = True

    def add(self, entry: RecallEntry) -> None:
        model = self._model()
        vector = [float(x) for x in model.embed([entry.text()])[0]]
        self._ensure_index(len(vector))
        doc = {"owner": entry.owner, "conversation_id": entry.conversation_id, "run_id": entry.run_id,
               "question": entry.question, "answer": entry.answer, "created_at": entry.created_at,
               "model_id": model.model_id, "embedding": vector}
        self.client.index(index=self.index, id=entry.id, body=doc)

    def search(self, owner: str, query: str, k: int = 5) -> list[RecallHit]:
        if not owner:
            return []
        vector = [float(x) for x in self._model().embed_query(query).vector]
        response = self.client.search(index=self.index, body=search_body(owner, query, vector, k))
        hits = []
        for hit in response["hits"]["hits"]:
            src = hit["_source"]
            if src.get("owner") != owner:  # belt and braces: the filter already guarantees it
                continue
            hits.append(RecallHit(RecallEntry(owner=src["owner"], conversation_id=src["conversation_id"],
                                              run_id=src["run_id"], question=src["question"], answer=src["answer"],
                                              created_at=float(src.get("created_at") or 0)), float(hit["_score"] or 0)))
        return hits

    def remove_conversation(self, owner: str, conversation_id: str) -> int:
        if not self.client.indices.exists(index=self.index):
            return 0
        response = self.client.delete_by_query(index=self.index, body=delete_body(owner, conversation_id),
                                               refresh=True)
        return int(response.get("deleted", 0))
