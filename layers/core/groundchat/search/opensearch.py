"""The OpenSearch backend: both legs (and the question bank's nearest questions) in one `_msearch`,
documents loaded with `helpers.bulk` into a new index created from the index template, then the
alias swapped in one request.

The template is package data (`opensearch_template.json` beside this module), so it is there inside
a Lambda; `infra/opensearch/index-template.json` is the deployable copy, kept identical by a test.
Each document also carries the keyword fields derived from its chunk (corpus/index_text.py), which
the BM25 leg searches instead of the cited title and text.

The index's mapping `_meta` records the embedding model and the source hashes, so the ingest and
the query side read them from the index itself.
"""
from __future__ import annotations

import copy
import hashlib
import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np

from groundchat.corpus.chunk import QUESTIONS, Chunk
from groundchat.corpus.index_text import keyword_fields
from groundchat.search.embeddings import EmbeddingModelMismatch, QueryVector
from groundchat.search.graph import Graph
from groundchat.search.opensearch_graph import GRAPH_DOC, GRAPH_SOURCE, StoredPassage, read_graph, read_sources
from groundchat.search.query_text import KEYWORD_WEIGHTS, terms
from groundchat.search.question_leg import QUESTION_ROWS, ROWS
from groundchat.search.types import BackendUnavailable, LegHit

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from groundchat.config import Settings
    from groundchat.json_shapes import JsonList, JsonObject

TEMPLATE_PATH = Path(__file__).resolve().parent / "opensearch_template.json"
TEMPLATE_NAME = "groundchat-corpus"
KEYWORD_FIELD = "keyword_text"
_FIELDS = ["id", "ref", "source", "section", "title", "text", "url", "updated_at", "meta"]


def load_template(dimension: int) -> JsonObject:
    template = json.loads(TEMPLATE_PATH.read_text(encoding="utf-8"))
    template["template"]["mappings"]["properties"]["embedding"]["dimension"] = dimension
    return template


def make_client(settings: Settings) -> OpenSearch:
    """SigV4-signed client for a managed domain (`es`) or Serverless collection (`aoss`) at an
    https endpoint; a plain one for an `http://` endpoint, which only a node on this machine has
    (the local stack's, security off, bound to loopback)."""
    import boto3
    from opensearchpy import AWSV4SignerAuth, OpenSearch, RequestsHttpConnection

    if settings.opensearch_endpoint.startswith("http://"):
        return OpenSearch(hosts=[settings.opensearch_endpoint], timeout=10, max_retries=1, retry_on_timeout=False)
    credentials = boto3.Session().get_credentials()
    auth = AWSV4SignerAuth(credentials, settings.aws_region, settings.opensearch_service)
    host = settings.opensearch_endpoint.removeprefix("https://").rstrip("/")
    return OpenSearch(hosts=[{"host": host, "port": 443}], http_auth=auth, use_ssl=True, verify_certs=True,
                      connection_class=RequestsHttpConnection, timeout=10, max_retries=1, retry_on_timeout=False)


# HNSW candidates per k-NN leg (the engine's `k`; `size` is what we keep). With the leg's own 30,
# Lucene's graph returned 98.6 % of the exact top 30 on this corpus; from 100 on, all of it, so the
# vector leg ranks as the embedded backend's exact scan does (docs/engineering/opensearch-local.md).
KNN_CANDIDATES = 100


def msearch_body(query: str, vector: QueryVector | None, k: int, sources: list[str] | None,
                 want: Iterable[str]) -> list[JsonObject]:
    """The `_msearch` lines: a header and a body per leg, BM25 first, then the vector leg, then the
    nearest questions of the question bank (search/question_leg.py)."""
    filters: JsonList = [{"terms": {"source": list(sources)}}] if sources else []
    lines: list[JsonObject] = []
    if "bm25" in want:
        lines += [{}, {
            "size": k, "_source": _FIELDS,
            "query": {"bool": {
                # The embedded backend's FTS5 query: any of the topic words (question frame dropped),
                # each a phrase of its tokens ("1.4.3" is 1 4 3 in that order), their scores summed.
                "should": [_phrase(word) for word in terms(query) or [query]],
                "minimum_should_match": 1,
                "filter": filters,
            }},
        }]
    floats: JsonList = [float(x) for x in vector.vector] if vector is not None else []
    if "vector" in want and vector is not None:
        knn: JsonObject = {"vector": floats, "k": max(k, KNN_CANDIDATES)}
        if filters:
            knn["filter"] = {"bool": {"filter": filters}}
        lines += [{}, {"size": k, "_source": _FIELDS, "query": {"knn": {"embedding": knn}}}]
    if ROWS in want and vector is not None:
        rows = {"vector": floats, "k": max(QUESTION_ROWS, KNN_CANDIDATES), "filter": {"bool": {"filter": [{"terms": {"source": [QUESTIONS]}}]}}}
        lines += [{}, {"size": QUESTION_ROWS, "_source": _FIELDS, "query": {"knn": {"embedding": rows}}}]
    return lines


# A phrase of two or three tokens is one token of a shingle subfield, so its idf is that of the
# passages holding the phrase, as FTS5 counts it; a phrase query in Lucene sums its words' idfs,
# which ranks "check-in" or "1.4.3" by how common "in" or "1" are (docs/engineering/opensearch-local.md).
SHINGLE_FIELDS = {2: f"{KEYWORD_FIELD}.pairs", 3: f"{KEYWORD_FIELD}.triples"}
# The template's tokenizer: runs of letters and digits.
_TOKEN = re.compile(r"[^\W_]+")


def _phrase(word: str) -> JsonObject:
    shingles = SHINGLE_FIELDS.get(len(_TOKEN.findall(word)))
    if shingles is not None:
        return {"match": {shingles: word}}
    return {"match_phrase": {KEYWORD_FIELD: word}}


def cosine_from_knn_score(score: float) -> float:
    """The inner product (a cosine: the vectors are unit length) behind a k-NN score of the
    `innerproduct` space, which the engine maps to 1 + ip when ip ≥ 0, else 1 / (1 − ip)."""
    return score - 1.0 if score >= 1.0 else 1.0 - 1.0 / score


def _chunk(source: StoredPassage) -> Chunk:
    return Chunk(id=source["id"], ref=source["ref"], source=source["source"], section=source["section"],
                 title=source["title"], text=source["text"], url=source["url"],
                 updated_at=source.get("updated_at"), meta=source.get("meta") or {})


def _unavailable(exc: Exception) -> BackendUnavailable:
    from opensearchpy.exceptions import ConnectionError as OSConnectionError
    from opensearchpy.exceptions import ConnectionTimeout, NotFoundError, TransportError

    if isinstance(exc, ConnectionTimeout):
        return BackendUnavailable("upstream_timeout", str(exc))
    if isinstance(exc, OSConnectionError):
        return BackendUnavailable("upstream_unreachable", str(exc))
    if isinstance(exc, NotFoundError):
        return BackendUnavailable("index_missing", str(exc))
    if isinstance(exc, TransportError):
        status = exc.status_code if isinstance(exc.status_code, int) else 0
        return BackendUnavailable(_status_reason(status), str(exc))
    return BackendUnavailable("upstream_error", f"{type(exc).__name__}: {exc}")


def _status_reason(status: int) -> str:
    """A failed request named by its status: a deleted index (and with it the alias) 404, a shard
    that is not allocated 503, a blocked index 403, a full search queue 429."""
    if status == 404:
        return "index_missing"
    return "upstream_5xx" if status >= 500 else f"upstream_{status or 'error'}"


def _item_reason(status: int) -> str:
    """One failed search inside `_msearch`, named as a failed request's would be; only a 400 there
    says our query was wrong."""
    return "query_error" if status == 400 else _status_reason(status)


class OpenSearchIndex:
    name = "opensearch"

    def __init__(self, client: OpenSearch, alias: str) -> None:
        self.client = client
        self.alias = alias
        # The index behind the alias when its model id was read, and that id: a search's hits name
        # their index, so a swap to another index is noticed without a request of its own.
        self._serving: tuple[str, str | None] | None = None
        # The graph and the index it was read from; dropped when a search's hits come from another.
        self._graph: tuple[str, Graph | None] | None = None

    def _named_meta(self) -> tuple[str, dict[str, str]]:
        """The index behind the alias and its `_meta` (written by `OpenSearchBuild`: strings only)."""
        mapping = self.client.indices.get_mapping(index=self.alias)
        name, index = next(iter(mapping.items()))
        return name, index["mappings"].get("_meta", {})

    def model_id(self) -> str | None:
        if self._serving is None:
            try:
                name, meta = self._named_meta()
            except Exception as exc:
                raise _unavailable(exc) from exc
            self._serving = (name, meta.get("model_id"))
        return self._serving[1]

    def _check_model(self, vector: QueryVector) -> None:
        index_model = self.model_id() or ""
        if vector.model_id != index_model:
            raise EmbeddingModelMismatch(index_model, vector.model_id)

    def legs(self, query: str, vector: QueryVector | None, k: int, sources: list[str] | None,
             want: Iterable[str]) -> dict[str, list[LegHit]]:
        want = list(want)
        # The vector whose model must match the index's: None when no leg reads the vector.
        checked = vector if vector is not None and ("vector" in want or ROWS in want) else None
        if checked is not None:
            self._check_model(checked)
        body = msearch_body(query, vector, k, sources, want)
        try:
            response = self.client.msearch(body=body, index=self.alias)
        except Exception as exc:
            raise _unavailable(exc) from exc
        names = [n for n in ("bm25", "vector", ROWS) if n in want and (n == "bm25" or vector is not None)]
        out: dict[str, list[LegHit]] = {}
        answered: set[str | None] = set()
        for name, item in zip(names, response["responses"]):
            if "error" in item:
                raise BackendUnavailable(_item_reason(item.get("status", 0)), json.dumps(item["error"])[:300])
            # The k-NN scores are mapped back to the cosine the embedded index gives, so the question
            # bank's likeness (a cosine plus a words bonus) means the same on both backends.
            score = (lambda s: s) if name == "bm25" else cosine_from_knn_score
            out[name] = [LegHit(_chunk(h["_source"]), score(float(h["_score"]))) for h in item["hits"]["hits"]]
            answered.update(h.get("_index") for h in item["hits"]["hits"])
        if self._graph is not None and answered - {self._graph[0], None}:
            self._graph = None
        if checked is not None and self._serving is not None and answered - {self._serving[0], None}:
            # The alias was swapped since the model id was read (a re-ingest while this process
            # served): the new index's model decides whether these vectors meant anything.
            self._serving = None
            self._check_model(checked)
        return out

    def graph(self) -> Graph | None:
        """The graph document of the index behind the alias, None for an index built without one."""
        if self._graph is None:
            try:
                self._graph = read_graph(self.client, self.alias)
            except Exception as exc:
                raise _unavailable(exc) from exc
        return self._graph[1]

    def chunks_by_id(self, ids: list[str]) -> list[Chunk]:
        """The passages of these chunk ids that the index holds, in one `_mget`."""
        try:
            return [_chunk(source) for source in read_sources(self.client, self.alias, ids)] if ids else []
        except Exception as exc:
            raise _unavailable(exc) from exc

    def get_section(self, source: str, section: str) -> Chunk | None:
        try:
            response = self.client.search(index=self.alias, body={
                "size": 1, "_source": _FIELDS,
                "query": {"bool": {"filter": [{"term": {"source": source}}, {"term": {"section": section}}]}},
            })
        except Exception as exc:
            raise _unavailable(exc) from exc
        hits = response["hits"]["hits"]
        return _chunk(hits[0]["_source"]) if hits else None


def bulk_actions(index: str, chunks: Sequence[Chunk], vectors: np.ndarray) -> list[dict[str, object]]:
    """The bulk helper's actions: one document per chunk, its fields, keyword field and vector."""
    return [
        {"_op_type": "index", "_index": index, "_id": c.id,
         "_source": {**c.model_dump(), **_keyword_doc(c), "embedding": [float(x) for x in v]}}
        for c, v in zip(chunks, vectors)
    ]


def keyword_values(chunk: Chunk) -> list[str] | None:
    """The keyword field's values: the heading, the section and the body, each as many times as its
    weight. Lucene's BM25 on one field then counts a word as SQLite's bm25() does with column
    weights: the weighted occurrences summed before saturation, over the length of the whole row.
    The values of an array are kept apart (the mapping's position gap), so no phrase spans two."""
    fields = keyword_fields(chunk)
    if fields is None:
        return None
    heading, body = fields
    by_part = {"heading": heading, "section": chunk.section, "body": body}
    return [by_part[part] for part, weight in KEYWORD_WEIGHTS.items() for _ in range(weight) if by_part[part]]


def _keyword_doc(chunk: Chunk) -> dict[str, list[str]]:
    values = keyword_values(chunk)
    # A question of the question bank has no keyword field: the keyword leg's statistics stay the texts'.
    return {KEYWORD_FIELD: values} if values else {}


class OpenSearchBuild:
    def __init__(self, client: OpenSearch, alias: str, *, model_id: str, dimension: int, stamp: str | None = None) -> None:
        self.client = client
        self.alias = alias
        stamp = stamp or datetime.now(timezone.utc).strftime("%Y%m%d%H%M%S%f")
        self.index = f"{alias}-{stamp}"
        self._meta = {"model_id": model_id, "dimension": str(dimension)}
        template = load_template(dimension)
        template["index_patterns"] = [f"{alias}-*"]
        client.indices.put_index_template(name=alias, body=template)
        client.indices.create(index=self.index, body={"mappings": {"_meta": self._meta}})

    def add(self, chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
        from opensearchpy import helpers

        helpers.bulk(self.client, bulk_actions(self.index, chunks, vectors), raise_on_error=True, refresh=False)

    def add_graph(self, graph: Graph) -> None:
        self.client.index(index=self.index, id=GRAPH_DOC, body={"id": GRAPH_DOC, "source": GRAPH_SOURCE, "graph": graph.to_data()})

    def commit(self, meta: dict[str, str]) -> None:
        self.client.indices.put_mapping(index=self.index, body={"_meta": {**self._meta, **meta}})
        self.client.indices.refresh(index=self.index)
        actions: list[JsonObject] = [{"add": {"index": self.index, "alias": self.alias}}]
        if self.client.indices.exists_alias(name=self.alias):
            for old in self.client.indices.get_alias(name=self.alias):
                actions.insert(0, {"remove": {"index": old, "alias": self.alias}})
        # One request: readers see the old index or the new one, never none. A refused swap (a full
        # disk's flood stage blocks the old index's aliases with 429) leaves the old one serving; the
        # index begun here is then deleted, not left behind to fill the disk further.
        try:
            self.client.indices.update_aliases(body={"actions": actions})
        except Exception:
            self.abort()
            raise

    def abort(self) -> None:
        try:
            self.client.indices.delete(index=self.index, params={"ignore_unavailable": "true"})
        except Exception:
            pass  # the half-built index is unreachable by the alias either way


class OpenSearchStore:
    layout = hashlib.sha256(TEMPLATE_PATH.read_bytes()).hexdigest()[:12]

    def __init__(self, client: OpenSearch, alias: str) -> None:
        self.client = client
        self.alias = alias
        self.reader = OpenSearchIndex(client, alias)

    def serving_meta(self) -> dict[str, str] | None:
        if not self.client.indices.exists_alias(name=self.alias):
            return None
        return copy.deepcopy(self.reader._named_meta()[1])

    def serving_chunks(self, source: str) -> list[tuple[Chunk, np.ndarray]]:
        from opensearchpy import helpers

        out = []
        for hit in helpers.scan(self.client, index=self.alias, query={"query": {"term": {"source": source}}}):
            doc = hit["_source"]
            out.append((_chunk(doc), np.array(doc["embedding"], dtype=np.float32)))
        return out

    def begin(self, *, model_id: str, dimension: int) -> OpenSearchBuild:
        return OpenSearchBuild(self.client, self.alias, model_id=model_id, dimension=dimension)
