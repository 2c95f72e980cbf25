"""An in-memory stand-in for an OpenSearch Serverless VECTORSEARCH collection, at the client's level,
holding to the rules the recall index must live with there:
- no `_delete_by_query`, no `_update_by_query`, no `refresh` parameter: each raises;
- no custom document id on index: the collection assigns one; `_bulk` deletes and updates by id;
- writes reach searches only at `refresh()` (the collection's 10 to 60 s interval): until then a
  search sees the documents as they were, while writes by id see the latest ones.
It evaluates only the query shapes the recall index sends (bool, term, range, exists, ids,
multi_match as "any word", knn as its filter)."""
from __future__ import annotations

import copy
import itertools
from typing import Any


class Unsupported(Exception):
    """What Serverless answers (an error) to an operation it does not have."""


def _no_refresh(params: dict[str, Any]) -> None:
    if "refresh" in params:
        raise Unsupported("refresh")


class _Indices:
    def __init__(self, fake: ServerlessCollection) -> None:
        self.fake = fake

    def exists(self, index: str, **params: Any) -> bool:
        self.fake.calls.append(("exists", index))
        return index in self.fake.mappings

    def create(self, index: str, body: dict[str, Any], **params: Any) -> dict[str, Any]:
        self.fake.calls.append(("create", index))
        self.fake.mappings[index] = copy.deepcopy(body["mappings"])
        return {"acknowledged": True}

    def put_mapping(self, index: str, body: dict[str, Any], **params: Any) -> dict[str, Any]:
        self.fake.calls.append(("put_mapping", index))
        self.fake.mappings[index]["properties"].update(copy.deepcopy(body["properties"]))
        return {"acknowledged": True}


class ServerlessCollection:
    def __init__(self) -> None:
        self.docs: dict[str, dict[str, Any]] = {}  # what writes by id see
        self.visible: dict[str, dict[str, Any]] = {}  # what searches see, as of the last refresh
        self.mappings: dict[str, dict[str, Any]] = {}
        self.calls: list[tuple[str, str]] = []
        self.indices = _Indices(self)
        self._ids = (f"auto-{n:06d}" for n in itertools.count(1))

    def refresh(self) -> None:
        self.visible = copy.deepcopy(self.docs)

    # ---- writes ----

    def index(self, index: str, body: dict[str, Any], id: str | None = None, **params: Any) -> dict[str, Any]:
        self.calls.append(("index", index))
        _no_refresh(params)
        if id is not None:
            raise Unsupported("a custom document id in a vector search collection")
        unknown = set(body) - set(self.mappings[index]["properties"])
        assert not unknown, f"strict mapping refuses {unknown}"
        doc_id = next(self._ids)
        self.docs[doc_id] = copy.deepcopy(body)
        return {"_id": doc_id, "result": "created"}

    def bulk(self, body: list[dict[str, Any]], index: str, **params: Any) -> dict[str, Any]:
        self.calls.append(("bulk", index))
        _no_refresh(params)
        items, lines = [], iter(body)
        for line in lines:
            (action, meta), = line.items()
            doc_id = meta["_id"]
            if action == "delete":
                found = self.docs.pop(doc_id, None)
                items.append({"delete": {"_id": doc_id, "result": "deleted" if found else "not_found",
                                         "status": 200 if found else 404}})
            elif action == "update":
                change = next(lines)["doc"]
                if doc_id not in self.docs:
                    items.append({"update": {"_id": doc_id, "status": 404, "error": {"type": "document_missing_exception"}}})
                    continue
                before = dict(self.docs[doc_id])
                self.docs[doc_id].update(copy.deepcopy(change))
                items.append({"update": {"_id": doc_id, "result": "noop" if before == self.docs[doc_id] else "updated",
                                         "status": 200}})
            else:
                raise Unsupported(f"bulk {action} with an id")
        return {"errors": any("error" in next(iter(i.values())) for i in items), "items": items}

    def delete_by_query(self, *args: Any, **kwargs: Any) -> Any:
        raise Unsupported("_delete_by_query")

    def update_by_query(self, *args: Any, **kwargs: Any) -> Any:
        raise Unsupported("_update_by_query")

    # ---- searches: the last refresh's view ----

    def search(self, index: str, body: dict[str, Any], **params: Any) -> dict[str, Any]:
        self.calls.append(("search", index))
        _no_refresh(params)
        found = [(doc_id, doc) for doc_id, doc in self.visible.items() if _matches(doc_id, doc, body["query"])]
        sort = body.get("sort")
        found.sort(key=lambda pair: -_score(pair[1], body["query"]))
        if sort:
            keys = [next(iter(s)) for s in sort]
            found.sort(key=lambda pair: [pair[1].get(k) for k in keys])
            if "search_after" in body:
                found = [p for p in found if [p[1].get(k) for k in keys] > body["search_after"]]
        hits = []
        for doc_id, doc in found[: body.get("size", 10)]:
            hit: dict[str, Any] = {"_id": doc_id, "_score": _score(doc, body["query"])}
            source = body.get("_source", True)
            if source is not False:
                hit["_source"] = {k: v for k, v in doc.items() if source is True or k in source}
            if sort:
                hit["sort"] = [doc.get(k) for k in keys]
            hits.append(hit)
        return {"hits": {"hits": hits}}

    def close(self) -> None:
        pass


def _matches(doc_id: str, doc: dict[str, Any], query: dict[str, Any]) -> bool:
    (kind, spec), = query.items()
    if kind == "bool":
        musts = spec.get("filter", []) + spec.get("must", [])
        if not all(_matches(doc_id, doc, q) for q in musts):
            return False
        if any(_matches(doc_id, doc, q) for q in spec.get("must_not", [])):
            return False
        should = spec.get("should", [])
        needed = spec.get("minimum_should_match", 0 if musts else 1) if should else 0
        return sum(_matches(doc_id, doc, q) for q in should) >= needed
    if kind == "term":
        (field, value), = spec.items()
        return doc.get(field) == value
    if kind == "range":
        (field, bounds), = spec.items()
        return doc.get(field) is not None and doc[field] <= bounds["lte"]
    if kind == "exists":
        return doc.get(spec["field"]) is not None
    if kind == "ids":
        return doc_id in spec["values"]
    if kind == "multi_match":
        words = set(spec["query"].lower().split())
        text = " ".join(str(doc.get(f.split("^")[0], "")) for f in spec["fields"]).lower().split()
        return bool(words & set(text))
    if kind == "knn":
        (_, knn), = spec.items()
        return _matches(doc_id, doc, knn["filter"]) if "filter" in knn else True
    raise Unsupported(f"query {kind}")


def _score(doc: dict[str, Any], query: dict[str, Any]) -> float:
    """A word match outranks a match by meaning alone (the knn leg matches every document under its
    filter, as the k nearest of a small index do)."""
    should = query.get("bool", {}).get("should", [])
    return 1.0 + sum(1.0 if "multi_match" in q else 0.1 for q in should if _matches("", doc, q))
