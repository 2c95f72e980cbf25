"""The search service: both legs, fusion, rerank, our ceilings, and the debug record of each search."""
from __future__ import annotations

import time
from datetime import datetime
from typing import TYPE_CHECKING, Iterable, Literal, Protocol

from groundchat.corpus.chunk import SOURCES, Chunk
from groundchat.corpus.dates import as_datetime
from groundchat.search.criterion_leg import CRITERION_LEG, CRITERION_WEIGHT, criterion_leg, criterion_leg_applies
from groundchat.search.diversity import DISTINCT_FIRST, PER_GROUP, spread
from groundchat.search.embeddings import Embedder, EmbeddingError, EmbeddingModelMismatch, QueryVector
from groundchat.search.exact_refs import axe_rule_criteria, exact_chunks
from groundchat.search.fusion import FUSION, RRF_K, SCORE_SHARE, fuse
from groundchat.search.graph_leg import GRAPH_LEG, graph_leg
from groundchat.search.learned_rank import Ranking, packaged_ranker
from groundchat.search.named_source_first import LEAD, already_led, named_first
from groundchat.search.prior import DEMOTE, apply_prior, demoted_kinds, demoted_levels, demoted_source, named_source
from groundchat.search.question_leg import QUESTION_LEG, QUESTION_WEIGHT, ROWS, part_scores, question_leg
from groundchat.search.question_words import QuestionWords, bank_words
from groundchat.search.rank_features import Evidence
from groundchat.search.rerank import NoRerank, Reranker
from groundchat.search.vocabulary import with_texts_words
from groundchat.search.types import BackendUnavailable, Freshness, Leg, LegHit, LegSwitches, Passage, SearchResult

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject

# How many candidates each leg returns before fusion: enough for fusion to matter, few enough
# that the vector leg's exact scan and the BM25 query stay fast.
CANDIDATES_PER_LEG = 30


class Backend(Protocol):
    name: str

    def legs(self, query: str, vector: QueryVector | None, k: int, sources: list[str] | None,
             want: Iterable[str]) -> dict[str, list[LegHit]]: ...

    def get_section(self, source: str, section: str) -> Chunk | None: ...


class Ranker(Protocol):
    threshold: float

    def rank(self, query: str, fused: list[LegHit], evidence: Evidence, keep_first: int = 0) -> Ranking: ...


class SearchService:
    def __init__(self, backend: Backend, embedder: Embedder, *, reranker: Reranker | None = None,
                 max_excerpts: int = 8, max_excerpt_chars: int = 1200,
                 weights: dict[str, float] | None = None, expand: bool = True,
                 question_words: QuestionWords | None = None, graph: bool = False,
                 ranker: Ranker | None | Literal["packaged"] = "packaged") -> None:
        self.backend = backend
        self.embedder = embedder
        self.reranker = reranker or NoRerank()
        self.max_excerpts = max_excerpts
        self.max_excerpt_chars = max_excerpt_chars
        # A leg with no weight here counts 1 in fusion, so the question leg's is always set. The graph
        # leg has none: it places passages under its seeds rather than voting (search/graph_leg.py).
        self.weights = {QUESTION_LEG: QUESTION_WEIGHT, **(weights or {"bm25": 1.0, "vector": 1.0})}
        # Whether a hybrid search walks the graph when it is not told (GROUNDCHAT_SEARCH_GRAPH).
        self.graph = graph
        self.expand = expand
        # The package's bank words unless given; read on the first hybrid search, not at start-up.
        self._question_words = question_words
        # The learned ranking step (search/learned_rank.py): the packaged model when it is switched on.
        if ranker == "packaged":
            packaged = packaged_ranker()
            ranker = packaged if (packaged is not None and packaged.enabled
                                  and packaged.embedding_model in (None, embedder.model_id)) else None
        self.ranker = ranker

    def search(self, query: str, *, k: int | None = None, sources: list[str] | None = None,
               leg: Leg = "hybrid", include_vector: bool = True, include_sparse: bool = True,
               include_graph: bool | None = None) -> SearchResult:
        """`include_*` switch a leg off for this search (search/types.py `LegSwitches`); the graph
        leg's None is the service's default, True or False forces it either way."""
        from groundchat import telemetry  # with the first search, not at a cold start (the ingest's)
        from groundchat.telemetry import search_spans

        span = search_spans.retrieval(self.backend.name, query, min(k or self.max_excerpts, self.max_excerpts))
        with telemetry.active(span), telemetry.ended_on_error(span):
            result = self._search(query, k=k, sources=sources, leg=leg, include_vector=include_vector,
                                  include_sparse=include_sparse, include_graph=include_graph)
        search_spans.finished(span, result.outcome, len(result.passages), result.reason)
        return result

    def _search(self, query: str, *, k: int | None, sources: list[str] | None, leg: Leg, include_vector: bool,
                include_sparse: bool, include_graph: bool | None) -> SearchResult:
        started = time.perf_counter()
        graph = self.graph if include_graph is None else include_graph
        switches = LegSwitches(include_vector=include_vector, include_sparse=include_sparse, include_graph=graph)
        timings: dict[str, float] = {}
        limit = min(k or self.max_excerpts, self.max_excerpts)
        debug = self._debug_record(leg, sources, switches, timings)
        want = _wanted(leg, switches)

        def unavailable(reason: str, detail: str) -> SearchResult:
            debug["error"] = detail
            timings["total"] = _ms(started)
            return SearchResult(outcome="unavailable", reason=reason, query=query, debug=debug)

        if sources:
            unknown = [s for s in sources if s not in SOURCES]
            if unknown:
                raise ValueError(f"unknown source(s) {unknown}; known: {list(SOURCES)}")
        # Both legs read the question with the texts' words for what it says (search/vocabulary.py).
        expanded = with_texts_words(query) if self.expand else query
        debug["expanded"] = expanded if expanded != query else None
        vector = None
        if "vector" in want:
            t = time.perf_counter()
            try:
                vector = self.embedder.embed_query(expanded)
            except EmbeddingError as exc:
                return unavailable("embedding_unavailable", str(exc))
            except Exception as exc:  # a provider outage: we could not look, which is not "nothing found"
                return unavailable("embedding_unavailable", f"{type(exc).__name__}: {exc}")
            timings["embed"] = _ms(t)
        t, legs_started = time.perf_counter(), time.time_ns()
        try:
            # Named, so the index's question rows (corpus/question_bank.py) are never a passage.
            legs = self.backend.legs(expanded, vector, CANDIDATES_PER_LEG, sources or list(SOURCES), want)
        except EmbeddingModelMismatch as exc:
            return unavailable("embedding_model_mismatch", str(exc))
        except BackendUnavailable as exc:
            return unavailable(exc.reason, exc.detail)
        timings["legs"] = _ms(t)
        # The nearest questions are not a leg: they lend their parts' likeness to the legs' passages.
        # The bank's words are matched against the question as asked: the bank is in users' words.
        question_rows = legs.pop(ROWS, [])
        words = (self._question_words or bank_words()).scores(query) if question_rows else {}
        debug["question_words"] = sorted(words, key=lambda part: -words[part])[:5]
        parts = part_scores(question_rows, words)
        if parts:
            legs[QUESTION_LEG] = question_leg(parts, legs)
        for name, hits in legs.items():
            debug["legs"][name] = _leg_debug(hits)
        from groundchat.telemetry.search_spans import legs as search_legs  # loaded by `search` already

        search_legs(legs_started, legs_started + int(timings["legs"] * 1e6), debug["legs"], self.backend.name)
        t = time.perf_counter()
        fused = self._fused(query, legs, leg, sources, debug)
        timings["fuse"] = _ms(t)
        debug["legs_ran"] = sorted(debug["legs"])
        named = named_source(query) if leg == "hybrid" and not sources else None
        if named is not None and not already_led(fused, named, len(debug.get("exact", []))):
            t = time.perf_counter()
            fused = self._named_text_first(query, expanded, vector, want, named, fused, debug, parts)
            timings["named_text"] = _ms(t)
        fused, best_match = self._learned_order(query, leg, fused, Evidence(legs, parts, words, named_source=named), debug)
        t = time.perf_counter()
        try:
            ranked = self.reranker.rerank(query, fused[: max(limit * 3, limit)])
        except Exception as exc:  # a failed rerank still leaves a usable fused order
            debug["rerank_error"] = f"{type(exc).__name__}: {exc}"
            ranked = fused
        ranked = spread(ranked, named=len(debug.get("exact", [])))
        debug["distinct_first"], debug["per_group"] = DISTINCT_FIRST, PER_GROUP
        timings["rerank"] = _ms(t)
        passages, dropped_chars = self._excerpts(ranked[:limit])
        timings["total"] = _ms(started)
        return SearchResult(
            outcome="hit" if passages else "empty", query=query, passages=passages,
            freshness=_freshness(passages), dropped={"passages": max(0, len(fused) - limit), "chars": dropped_chars},
            debug=debug, best_match=best_match if passages else None,
        )

    def _learned_order(self, query: str, leg: Leg, fused: list[LegHit], evidence: Evidence,
                       debug: JsonObject) -> tuple[list[LegHit], str | None]:
        """The learned ranking step's order (search/learned_rank.py) and its word on the first
        passage; a search of one leg, or a service without the step, keeps its order and says nothing."""
        if leg != "hybrid" or self.ranker is None or not fused:
            return fused, None
        t = time.perf_counter()
        evidence.graph_placed = frozenset(debug["legs"].get(GRAPH_LEG, {}).get("top", []))
        ranking = self.ranker.rank(query, fused, evidence, keep_first=len(debug.get("exact", [])))
        best_match = "weak" if ranking.weak else "strong"
        debug["ranker"] = {"confidence": round(ranking.confidence, 4), "threshold": self.ranker.threshold,
                           "best_match": best_match}
        debug["timings_ms"]["rank"] = _ms(t)
        return ranking.hits, best_match

    def nearness(self, query: str, sources: list[str] | None = None) -> float | None:
        """How near the corpus comes to a question: the highest cosine of its vector to a passage or to
        a question of the question bank (both backends give cosines for these). None when the index or
        the embedding model cannot answer: "could not look" is not "nothing near"."""
        try:
            vector = self.embedder.embed_query(with_texts_words(query) if self.expand else query)
            legs = self.backend.legs(query, vector, 5, sources or list(SOURCES), {"vector", ROWS})
        except Exception:  # an outage or a mismatched index: the caller decides without this figure
            return None
        scores = [hit.score for hits in legs.values() for hit in hits[:5]]
        return max(scores) if scores else None

    def _debug_record(self, leg: Leg, sources: list[str] | None, switches: LegSwitches,
                      timings: dict[str, float]) -> JsonObject:
        return {
            "backend": self.backend.name, "leg": leg, "fusion": FUSION if leg == "hybrid" else "none",
            "rrf_k": RRF_K, "score_share": SCORE_SHARE, "weights": self.weights, "rerank": self.reranker.model,
            "embedding_model": self.embedder.model_id, "sources": sources or list(SOURCES),
            "legs": {}, "timings_ms": timings, "switches": switches.model_dump(),
            "graph_default": self.graph,  # GROUNDCHAT_SEARCH_GRAPH: whether an unswitched search walks it
            "graph_enabled": False,  # true once the graph leg has run (search/graph_leg.py)
        }

    def _excerpts(self, kept: list[LegHit]) -> tuple[list[Passage], int]:
        """The passages as served, each cut at our ceiling, and how many characters were cut."""
        passages, dropped_chars = [], 0
        for hit in kept:
            text = hit.chunk.text
            cut = len(text) > self.max_excerpt_chars
            if cut:
                dropped_chars += len(text) - self.max_excerpt_chars
                text = text[: self.max_excerpt_chars].rstrip() + " …"
            c = hit.chunk
            passages.append(Passage(ref=c.ref, source=c.source, section=c.section, title=c.title, url=c.url,
                                    text=text, updated_at=c.updated_at, score=round(hit.score, 6), truncated=cut))
        return passages, dropped_chars

    def _fused(self, query: str, legs: dict[str, list[LegHit]], leg: Leg, sources: list[str] | None,
               debug: JsonObject) -> list[LegHit]:
        """The legs as one list: fused (hybrid) or the one leg asked for, then the kind prior and,
        for hybrid, the passages the question names first."""
        walk = leg == "hybrid" and bool(debug["switches"]["include_graph"])
        fused = self._ranked(query, legs, leg, debug, (sources or list(SOURCES)) if walk else None)
        debug["prior"] = {"demoted": sorted(demoted_kinds(query)), "demoted_source": demoted_source(query),
                          "demoted_levels": sorted(demoted_levels(query)), "factor": DEMOTE}
        if leg == "hybrid":
            fused = self._exact_first(query, fused, sources, debug)
        return fused

    def _ranked(self, query: str, legs: dict[str, list[LegHit]], leg: Leg, debug: JsonObject,
                graph_scope: list[str] | None = None) -> list[LegHit]:
        """Fused (hybrid) or the one leg asked for, ordered by the prior; with `graph_scope`, the
        graph leg's passages of those sources fused in too."""
        # The prior on kinds and on the text a question names (search/prior.py) orders whatever
        # list is served, fused or one leg.
        fused = apply_prior(query, fuse(legs, weights=self.weights) if leg == "hybrid" else legs.get(leg, []))
        weights = self.weights
        if leg == "hybrid" and criterion_leg_applies(fused):
            # A question about WCAG: how well each criterion matches as a whole (search/criterion_leg.py).
            legs[CRITERION_LEG] = criterion_leg(legs.get("vector", []))
            debug["legs"][CRITERION_LEG] = _leg_debug(legs[CRITERION_LEG])
            weights = {**self.weights, CRITERION_LEG: CRITERION_WEIGHT}
            fused = apply_prior(query, fuse(legs, weights=weights))
        if leg == "hybrid" and graph_scope is not None and fused:
            fused = self._with_graph(fused, graph_scope, debug)
        return fused

    def _with_graph(self, fused: list[LegHit], scope: list[str], debug: JsonObject) -> list[LegHit]:
        """`fused` with the graph leg's passages under their seeds (search/graph_leg.py), its counters
        in the debug record. An index without a graph, or one that fails to read it, leaves the
        search as it was."""
        t = time.perf_counter()
        try:
            graph = self.backend.graph() if hasattr(self.backend, "graph") else None
        except BackendUnavailable as exc:
            debug["graph_error"] = exc.reason
            return fused
        if graph is None:
            debug["graph_error"] = "no_graph"
            return fused
        result = graph_leg(graph, fused, scope)
        debug["graph_enabled"] = True
        debug.update(result.counters())
        debug["legs"][GRAPH_LEG] = _leg_debug(result.inserted)
        debug["timings_ms"]["graph"] = _ms(t)
        return result.hits

    def _named_text_first(self, query: str, expanded: str, vector: QueryVector | None, want: set[str],
                          named: str, fused: list[LegHit], debug: JsonObject,
                          parts: dict[str, float]) -> list[LegHit]:
        """The text the question names, searched on its own (with our docs): its first passages lead
        (search/named_source_first.py). If that search fails, the mixed list still serves."""
        scope = [named, "docs"]
        try:
            own_legs = self.backend.legs(expanded, vector, CANDIDATES_PER_LEG, scope, want - {ROWS})
        except (BackendUnavailable, EmbeddingModelMismatch) as exc:
            debug["named_text"] = {"source": named, "error": str(exc)}
            return fused
        if parts:
            own_legs[QUESTION_LEG] = question_leg(parts, own_legs)
        # Ranked without the exact path: the passages the question names by number already lead `fused`.
        own = self._ranked(query, own_legs, "hybrid", {"legs": {}})
        exact = len(debug.get("exact", []))
        out = named_first(fused, own, exact)
        debug["named_text"] = {"source": named, "lead": [h.chunk.ref for h in out[exact: exact + LEAD]]}
        return out

    def _exact_first(self, query: str, fused: list[LegHit], sources: list[str] | None, debug: JsonObject) -> list[LegHit]:
        """The passages the question names (a criterion, article, annex, recital, axe rule) go first."""
        named = exact_chunks(query, self.get_section, sources, axe_rule_criteria)
        debug["exact"] = [c.section for c in named]
        if not named:
            return fused
        top = max((h.score for h in fused), default=0.0)
        ids = {c.id for c in named}
        first = [LegHit(chunk=c, score=top + 1.0 + (len(named) - i) * 1e-6) for i, c in enumerate(named)]
        return first + [h for h in fused if h.chunk.id not in ids]

    def get_section(self, source: str, section: str) -> Chunk | None:
        """Exact lookup (e.g. a criterion's normative text for `explain_rule`); None if absent."""
        try:
            return self.backend.get_section(source, section)
        except BackendUnavailable:
            return None


def _wanted(leg: Leg, switches: LegSwitches) -> set[str]:
    """What the backend is asked for. Hybrid also asks for the question bank's nearest questions, in
    the same request; they need the query's vector, so they go with the vector leg."""
    if leg != "hybrid":
        if (leg == "vector" and not switches.include_vector) or (leg == "bm25" and not switches.include_sparse):
            raise ValueError(f"the {leg} leg was asked for and switched off")
        return {leg}
    want = ({"bm25"} if switches.include_sparse else set()) | ({"vector", ROWS} if switches.include_vector else set())
    if not want:
        raise ValueError("a search needs the BM25 or the vector leg; both were switched off")
    return want


def _leg_debug(hits: list[LegHit]) -> JsonObject:
    """What one leg found, for the debug record: how many, and the refs of its first five."""
    return {"hits": len(hits), "top": [h.chunk.ref for h in hits[:5]]}


def _freshness(passages: list[Passage]) -> Freshness:
    """The oldest date among the excerpts and how many have none. Dates are compared as moments; one
    that is not strict UTC (an index built before the ingest refused such dates) counts as undated."""
    dated: list[tuple[datetime, str]] = []
    for p in passages:
        if not p.updated_at:
            continue
        try:
            dated.append((as_datetime(p.updated_at), p.updated_at))
        except ValueError:
            continue
    return Freshness(oldest_updated_at=min(dated)[1] if dated else None, undated=len(passages) - len(dated))


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)
