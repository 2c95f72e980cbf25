"""The graph (search/graph.py) on OpenSearch: one document of the index, of a source no search asks
for, so it is swapped in with the passages by the same alias and never found by a leg; and the
graph leg's hydration, the passages of chunk ids in one `_mget`."""
from __future__ import annotations

from typing import TYPE_CHECKING, NotRequired, TypedDict

from groundchat.search.graph import Graph

if TYPE_CHECKING:
    from opensearchpy import OpenSearch

    from groundchat.corpus.chunk import Source

GRAPH_DOC = GRAPH_SOURCE = "graph"
_FIELDS = ["id", "ref", "source", "section", "title", "text", "url", "updated_at", "meta"]


class StoredPassage(TypedDict):
    """A passage's `_source` as the index returns it (`_FIELDS`): a chunk's fields, as ingested."""
    id: str
    ref: str
    source: Source
    section: str
    title: str
    text: str
    url: str
    updated_at: NotRequired[str | None]
    meta: NotRequired[dict[str, str]]


def read_graph(client: OpenSearch, alias: str) -> tuple[str, Graph | None]:
    """(the index it was read from, the graph); None where the index answers without one.
    Any other failure is raised as the client raised it, for the caller to name."""
    from opensearchpy.exceptions import NotFoundError

    try:
        doc = client.get(index=alias, id=GRAPH_DOC)
    except NotFoundError as exc:
        # A missing document answers {"found": false}; a missing index has no such field.
        if not isinstance(exc.info, dict) or exc.info.get("found") is not False:
            raise
        return "", None
    return doc["_index"], Graph.from_data(doc["_source"]["graph"])


def read_sources(client: OpenSearch, alias: str, ids: list[str]) -> list[StoredPassage]:
    """The stored passages of these chunk ids (the graph document never among them)."""
    # `params`: the typed form of the client's `_source=` keyword, which its signature does not declare.
    docs = client.mget(index=alias, body={"ids": ids}, params={"_source": ",".join(_FIELDS)})["docs"]
    return [d["_source"] for d in docs if d.get("found") and d["_source"].get("source") != GRAPH_SOURCE]
