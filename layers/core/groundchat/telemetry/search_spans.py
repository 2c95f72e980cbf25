"""A search's spans: a `retrieval` span for the search (the conventions' operation for fetching
passages from a data source), a span for the backend's call that runs the legs, and one child per
leg with what it found.

The legs run in one backend request (a single `_msearch` on OpenSearch, one pass over the embedded
index), so each leg's span covers that request's window: its own figure is its hits, not a time.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from groundchat import telemetry
from groundchat.telemetry import attributes as attr
from groundchat.telemetry import content

if TYPE_CHECKING:
    from groundchat.telemetry import AnySpan


def retrieval(backend: str, query: str, limit: int) -> AnySpan:
    """The search's span, current while it runs: the caller ends it with `finished`."""
    if not telemetry.enabled():
        return telemetry.NO_SPAN
    span = telemetry.start(f"{attr.OP_RETRIEVAL} {backend}", {
        attr.OPERATION: attr.OP_RETRIEVAL, attr.DATA_SOURCE: backend, "gen_ai.retrieval.top_k": limit,
    })
    if span.recording:
        span.set(attr.RETRIEVAL_QUERY, content.text(query))
    return span


def finished(span: AnySpan, outcome: str, passages: int, reason: str | None) -> None:
    if not span.recording:
        return
    span.set_many({attr.SEARCH_OUTCOME: outcome, attr.SEARCH_PASSAGES: passages, attr.SEARCH_REASON: reason})
    if outcome == "unavailable":
        span.fail(reason or "unavailable")
    span.end()


def legs(started_ns: int, ended_ns: int, found: Mapping[str, Mapping[str, object]], backend: str) -> None:
    """The backend's call (`started_ns`..`ended_ns`) and one span per leg under it, from the debug
    record's legs (name → {hits, …}); nothing when export is off."""
    if not telemetry.enabled():
        return
    call = telemetry.start("groundchat.search.legs", {attr.DATA_SOURCE: backend}, start_time_ns=started_ns)
    for name, leg in found.items():
        hits = leg.get("hits")
        telemetry.start(f"groundchat.search.leg {name}", {attr.SEARCH_LEG: name, attr.SEARCH_HITS: hits},
                        parent=call, start_time_ns=started_ns).end(ended_ns)
    call.end(ended_ns)
