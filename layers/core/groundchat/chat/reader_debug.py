"""What a reader sees of a search's debug record, under the answer's "Details" on the page.

The trace keeps the whole record for the operator. The reader gets how the search worked (the
backend, each leg's hits and top refs, the fusion and its parameters, the rerank, the timings),
never the text of an error, which may name an endpoint, an index or a table.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject

SHOWN = ("backend", "leg", "fusion", "rrf_k", "score_share", "weights", "rerank", "embedding_model", "sources", "legs",
         "timings_ms", "expanded", "exact", "prior", "recall_plan", "hits",
         # The graph leg's own accounting (search/graph_leg.py), named as the tri-brid system we follow names it.
         "graph_enabled", "graph_seeds", "graph_entities", "graph_expansion_hits", "graph_hydrated", "graph_inserted",
         "legs_ran",
         # Seed 002's names for which legs this search runs, how it fuses and weighs them, and the
         # learned ranking step's threshold (search/debug.py).
         "legs_enabled", "vector_enabled", "sparse_enabled", "fusion_method", "vector_weight", "sparse_weight",
         "confidence_threshold",
         # Which legs this search was allowed, and what the request narrowed (search/preferences.py).
         "switches", "request")


def for_reader(debug: JsonObject | None) -> JsonObject | None:
    if not debug:
        return None
    shown = {key: debug[key] for key in SHOWN if key in debug}
    if "error" in debug:
        shown["failed"] = True  # the result's outcome and reason say what; the detail stays in the trace
    if "graph_error" in debug:
        # An index built without a graph says so; any other reason stays in the trace.
        shown["graph_failed"] = "no_graph" if debug["graph_error"] == "no_graph" else True
    if "rerank_error" in debug:
        shown["rerank_failed"] = True
    named = debug.get("named_text")
    if isinstance(named, dict) and named:  # the text a question names, searched on its own (search/named_source_first.py)
        shown["named_text"] = ({"source": named["source"], "failed": True} if "error" in named
                               else {"source": named["source"], "lead": named.get("lead", [])})
    return shown
