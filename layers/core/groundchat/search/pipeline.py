"""The search, as one list of steps read top to bottom (`STEPS`):

    expand    the question with the texts' words (search/vocabulary.py), and its vector if a leg needs it
    legs      the backend's one request, then every leg of `LEGS` in order (search/leg.py)
    fuse      the order the legs made: the voting legs fused, the placing legs' placements in it
    place     the passages the question names by number first (search/exact_refs.py), then the
              first of the text it names (search/named_source_first.py)
    rank      the learned ranking step (search/learned_rank.py), then a configured rerank
    spread    the first excerpts from distinct articles or criteria (search/diversity.py)
    excerpts  the passages as served, cut at our ceiling

Every step has one shape: a function of the search in flight (`Search`), timed under its name in
the debug record (search/debug.py). A step that cannot look raises `Unavailable`, and the search
answers `unavailable`, never `empty`. A new leg is one module and one line in `LEGS`.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Literal, Protocol

from groundchat.corpus.chunk import SOURCES, Chunk
from groundchat.search.criterion_leg import CriterionLeg
from groundchat.search.debug import LegFound, NamedTextRecord, PriorRecord, RankerRecord, SearchDebug
from groundchat.search.diversity import DISTINCT_FIRST, PER_GROUP, spread as spread_out
from groundchat.search.embeddings import Embedder, EmbeddingError, EmbeddingModelMismatch, QueryVector
from groundchat.search.exact_refs import axe_rule_criteria, exact_chunks
from groundchat.search.excerpts import excerpts as cut_excerpts, freshness
from groundchat.search.fusion import fuse as fuse_legs
from groundchat.search.graph_leg import GraphLeg
from groundchat.search.leg import BM25, VECTOR, Found, Leg, SearchPlan
from groundchat.search.learned_rank import Ranking
from groundchat.search.named_source_first import LEAD, already_led, named_first
from groundchat.search.preferences import SearchPreferences
from groundchat.search.prior import DEMOTE, apply_prior, demoted_kinds, demoted_levels, demoted_source, named_source
from groundchat.search.question_leg import QUESTION_LEG, ROWS, BankEvidence, QuestionLeg
from groundchat.search.rank_features import Evidence
from groundchat.search.rerank import Reranker
from groundchat.search.types import BackendUnavailable, LegHit, Passage, SearchLeg, SearchResult
from groundchat.search.vocabulary import with_texts_words

# The legs, in the order they run: each sees what the legs before it found.
LEGS: tuple[Leg, ...] = (
    BM25,
    VECTOR,
    QuestionLeg(),
    CriterionLeg(),
    GraphLeg(),
)
# How many candidates each backend leg returns before fusion: enough for fusion to matter, few
# enough that the vector leg's exact scan and the BM25 query stay fast.
CANDIDATES_PER_LEG = 30


class Backend(Protocol):
    name: str

    def legs(self, query: str, vector: QueryVector | None, k: int, sources: list[str] | None,
             want: Iterable[str]) -> dict[str, list[LegHit]]: ...

    def get_section(self, source: str, section: str) -> Chunk | None: ...


class Ranker(Protocol):
    threshold: float

    def rank(self, query: str, fused: list[LegHit], evidence: Evidence, keep_first: int = 0) -> Ranking: ...


class Unavailable(Exception):
    """The search could not look: `reason` is the machine code its result carries."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason, self.detail = reason, detail


@dataclass
class SearchConfig:
    """What a search service is configured with (search/service.py)."""
    backend: Backend
    embedder: Embedder
    reranker: Reranker
    ranker: Ranker | None
    weights: dict[str, float]
    max_excerpt_chars: int
    expand: bool
    get_section: Callable[[str, str], Chunk | None]
    legs: tuple[Leg, ...] = LEGS


@dataclass
class Search:
    """One search in flight: what it was asked, and what each step has made of it so far."""
    config: SearchConfig
    query: str
    preferences: SearchPreferences  # `include_graph` resolved against the deployment's default
    leg: SearchLeg
    limit: int
    debug: SearchDebug
    plan: SearchPlan | None = None
    found: Found | None = None
    fused: list[LegHit] = field(default_factory=list)
    named: str | None = None  # the text the question names (search/prior.py), in a hybrid search
    best_match: Literal["strong", "weak"] | None = None
    ranked: list[LegHit] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)
    dropped_chars: int = 0

    @property
    def exact(self) -> int:
        return len(self.debug.exact)


def expand(search: Search) -> None:
    prefs, config = search.preferences, search.config
    expanded = with_texts_words(search.query) if config.expand else search.query
    search.debug.expanded = expanded if expanded != search.query else None
    sources: list[str] = list(prefs.sources) if prefs.sources else list(SOURCES)
    plan = SearchPlan(search.query, expanded, None, sources, prefs, search.leg)
    enabled = {leg.name: leg.enabled(plan) for leg in config.legs}
    search.debug.legs_enabled = enabled
    search.debug.vector_enabled, search.debug.sparse_enabled = enabled.get("vector", False), enabled.get("bm25", False)
    vector = None
    if any(leg.needs_vector and enabled[leg.name] for leg in config.legs):
        started = time.perf_counter()
        try:
            vector = config.embedder.embed_query(expanded)
        except EmbeddingError as exc:
            raise Unavailable("embedding_unavailable", str(exc)) from exc
        except Exception as exc:  # a provider outage: we could not look, which is not "nothing found"
            raise Unavailable("embedding_unavailable", f"{type(exc).__name__}: {exc}") from exc
        search.debug.timings_ms["embed"] = _ms(started)
    search.plan = replace(plan, vector=vector)


def legs(search: Search) -> None:
    plan, config = _plan(search), search.config
    enabled = [leg for leg in config.legs if leg.enabled(plan)]
    started, started_ns = time.perf_counter(), time.time_ns()
    backend = _ask_backend(config.backend, plan, {ask for leg in enabled for ask in leg.asks})
    search.debug.timings_ms["backend"] = _ms(started)
    search.found = Found(backend, _fuser(plan), index=config.backend, weights=dict(config.weights))
    _run_legs(enabled, plan, search.found, search.debug)
    from groundchat.telemetry.search_spans import legs as search_legs  # loaded by the service's span already

    search_legs(started_ns, started_ns + int(search.debug.timings_ms["backend"] * 1e6),
                {name: found.model_dump() for name, found in search.debug.legs.items()}, config.backend.name)


def fuse(search: Search) -> None:
    search.fused = _found(search).fused()
    search.debug.legs_ran = sorted(search.debug.legs)
    q = search.query
    search.debug.prior = PriorRecord(demoted=sorted(demoted_kinds(q)), demoted_source=demoted_source(q),
                                     demoted_levels=sorted(demoted_levels(q)), factor=DEMOTE)


def place(search: Search) -> None:
    """In a hybrid search, the passages the question names (a criterion, article, annex, recital, axe
    rule) first; then, for a question naming one text, that text's own first passages."""
    if search.leg != "hybrid":
        return
    asked = list(search.preferences.sources) if search.preferences.sources else None
    named = exact_chunks(search.query, search.config.get_section, asked, axe_rule_criteria)
    search.debug.exact = [c.section for c in named]
    if named:
        top = max((h.score for h in search.fused), default=0.0)
        ids = {c.id for c in named}
        first = [LegHit(chunk=c, score=top + 1.0 + (len(named) - i) * 1e-6) for i, c in enumerate(named)]
        search.fused = first + [h for h in search.fused if h.chunk.id not in ids]
    search.named = named_source(search.query) if asked is None else None
    if search.named is not None and not already_led(search.fused, search.named, search.exact):
        _named_text_first(search, search.named)


def rank(search: Search) -> None:
    """The learned ranking step's order and its word on the first passage (a search of one leg, or a
    service without the step, keeps its order), then the configured rerank of the first ones."""
    ranker, found = search.config.ranker, _found(search)
    if search.leg == "hybrid" and ranker is not None and search.fused:
        bank = found.notes.get(QUESTION_LEG)
        parts, words = (bank.parts, bank.words) if isinstance(bank, BankEvidence) else ({}, {})
        placed = frozenset(ref for name in found.placed for ref in search.debug.legs[name].top)
        evidence = Evidence(found.legs, parts, words, graph_placed=placed, named_source=search.named)
        ranking = ranker.rank(search.query, search.fused, evidence, keep_first=search.exact)
        search.fused, search.best_match = ranking.hits, "weak" if ranking.weak else "strong"
        search.debug.ranker = RankerRecord(confidence=round(ranking.confidence, 4), threshold=ranker.threshold,
                                           best_match=search.best_match)
    try:
        search.ranked = search.config.reranker.rerank(search.query, search.fused[: max(search.limit * 3, search.limit)])
    except Exception as exc:  # a failed rerank still leaves a usable fused order
        search.debug.rerank_error = f"{type(exc).__name__}: {exc}"
        search.ranked = search.fused


def spread(search: Search) -> None:
    search.ranked = spread_out(search.ranked, named=search.exact)
    search.debug.distinct_first, search.debug.per_group = DISTINCT_FIRST, PER_GROUP


def excerpts(search: Search) -> None:
    search.passages, search.dropped_chars = cut_excerpts(search.ranked[: search.limit], search.config.max_excerpt_chars)


STEPS: tuple[Callable[[Search], None], ...] = (expand, legs, fuse, place, rank, spread, excerpts)


def run(search: Search) -> SearchResult:
    """The steps in order; the result, or `unavailable` from the step that could not look."""
    started, timings = time.perf_counter(), search.debug.timings_ms
    try:
        for step in STEPS:
            at = time.perf_counter()
            step(search)
            timings[step.__name__] = _ms(at)
    except Unavailable as exc:
        search.debug.error = exc.detail
        timings["total"] = _ms(started)
        return SearchResult(outcome="unavailable", reason=exc.reason, query=search.query, debug=search.debug)
    timings["total"] = _ms(started)
    passages = search.passages
    return SearchResult(
        outcome="hit" if passages else "empty", query=search.query, passages=passages, freshness=freshness(passages),
        dropped={"passages": max(0, len(search.fused) - search.limit), "chars": search.dropped_chars},
        debug=search.debug, best_match=search.best_match if passages else None,
    )


def _run_legs(legs: Iterable[Leg], plan: SearchPlan, found: Found, debug: SearchDebug | None) -> None:
    """Each leg in turn on what the ones before it found: a voting leg's hits join the fusion, a
    placing leg's order replaces the fused one. `debug` None: a second search, not recorded."""
    for leg in legs:
        started = time.perf_counter()
        ran = leg.run(plan, found)
        if ran is None:
            continue
        if debug is not None:
            debug.counted(ran.counters)
        if ran.skipped:
            continue
        (found.vote if leg.joins == "votes" else found.place)(leg.name, ran)
        if debug is not None:
            shown = ran.hits if ran.shown is None else ran.shown
            debug.legs[leg.name] = LegFound(hits=len(shown), top=[h.chunk.ref for h in shown[:5]])
            debug.timings_ms[leg.name] = _ms(started)


def _named_text_first(search: Search, named: str) -> None:
    """The text the question names, searched on its own (with our docs) by the voting legs: its
    first passages lead. The bank's parts are the question's, so they are not asked for again. If
    that search fails, the mixed list still serves."""
    plan, config = replace(_plan(search), sources=[named, "docs"]), search.config
    voting = [leg for leg in config.legs if leg.joins == "votes" and leg.enabled(plan)]
    try:
        own = _ask_backend(config.backend, plan, {ask for leg in voting for ask in leg.asks} - {ROWS})
    except Unavailable as exc:
        search.debug.named_text = NamedTextRecord(source=named, error=str(exc.__cause__ or exc))
        return
    found = Found(own, _fuser(plan), index=config.backend, weights=dict(config.weights), notes=_found(search).notes)
    _run_legs(voting, plan, found, None)
    search.fused = named_first(search.fused, found.fused(), search.exact)
    lead = search.fused[search.exact: search.exact + LEAD]
    search.debug.named_text = NamedTextRecord(source=named, lead=[h.chunk.ref for h in lead])


def _ask_backend(backend: Backend, plan: SearchPlan, asks: set[str]) -> dict[str, list[LegHit]]:
    """The backend's one request for what the legs ask, over the plan's sources."""
    try:
        return backend.legs(plan.expanded, plan.vector, CANDIDATES_PER_LEG, plan.sources, asks)
    except EmbeddingModelMismatch as exc:
        raise Unavailable("embedding_model_mismatch", str(exc)) from exc
    except BackendUnavailable as exc:
        raise Unavailable(exc.reason, exc.detail) from exc


def _fuser(plan: SearchPlan) -> Callable[[dict[str, list[LegHit]], dict[str, float]], list[LegHit]]:
    """How the legs make one order: fused (hybrid) or the one leg asked for, then the prior on kinds
    and on the text a question names (search/prior.py)."""
    def fused(found: dict[str, list[LegHit]], weights: dict[str, float]) -> list[LegHit]:
        hits = fuse_legs(found, weights=weights) if plan.hybrid else found.get(plan.leg, [])
        return apply_prior(plan.query, hits)
    return fused


def _plan(search: Search) -> SearchPlan:
    assert search.plan is not None, "the expand step makes the plan"
    return search.plan


def _found(search: Search) -> Found:
    assert search.found is not None, "the legs step makes what was found"
    return search.found


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)


__all__ = ["CANDIDATES_PER_LEG", "LEGS", "STEPS", "Backend", "Ranker", "Search", "SearchConfig", "Unavailable", "run"]
