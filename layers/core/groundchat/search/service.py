"""The search service: a search's configuration and its entry points. What one search does is the
pipeline's list of steps (search/pipeline.py); this facade states the request's preferences
(search/preferences.py), opens the search's span and starts the debug record (search/debug.py)."""
from __future__ import annotations

from dataclasses import replace
from typing import Literal

from groundchat.corpus.chunk import SOURCES, Chunk
from groundchat.search.debug import SearchDebug
from groundchat.search.embeddings import Embedder
from groundchat.search.fusion import FUSION, RRF_K, SCORE_SHARE
from groundchat.search.learned_rank import packaged_ranker
from groundchat.search.pipeline import LEGS, Backend, Ranker, Search, SearchConfig, run
from groundchat.search.preferences import SearchPreferences
from groundchat.search.question_leg import QUESTION_LEG, QUESTION_WEIGHT, ROWS, QuestionLeg
from groundchat.search.rerank import NoRerank, Reranker
from groundchat.search.types import BackendUnavailable, SearchLeg, SearchResult
from groundchat.search.question_words import QuestionWords
from groundchat.search.vocabulary import with_texts_words


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
        # The pipeline's legs (search/pipeline.py), the question leg with the bank words given, if any;
        # the package's are read on the first hybrid search, not at start-up.
        self.legs = LEGS if question_words is None else tuple(
            replace(leg, words=lambda: question_words) if isinstance(leg, QuestionLeg) else leg for leg in LEGS)
        # The learned ranking step (search/learned_rank.py): the packaged model when it is switched on.
        if ranker == "packaged":
            packaged = packaged_ranker()
            ranker = packaged if (packaged is not None and packaged.enabled
                                  and packaged.embedding_model in (None, embedder.model_id)) else None
        self.ranker = ranker

    def search(self, query: str, *, k: int | None = None, sources: list[str] | None = None,
               leg: SearchLeg = "hybrid", include_vector: bool = True, include_sparse: bool = True,
               include_graph: bool | None = None) -> SearchResult:
        """`include_*` switch a leg off for this search (search/preferences.py); the graph leg's None
        is the service's default, True or False forces it either way."""
        from groundchat import telemetry  # with the first search, not at a cold start (the ingest's)
        from groundchat.telemetry import search_spans

        limit = min(k or self.max_excerpts, self.max_excerpts)
        preferences = _preferences(sources, limit, include_vector, include_sparse,
                                   self.graph if include_graph is None else include_graph, leg)
        search = Search(self._config(), query, preferences, leg, limit, self._debug_record(leg, preferences))
        span = search_spans.retrieval(self.backend.name, query, limit)
        with telemetry.active(span), telemetry.ended_on_error(span):
            result = run(search)
        search_spans.finished(span, result.outcome, len(result.passages), result.reason)
        return result

    def _config(self) -> SearchConfig:
        return SearchConfig(self.backend, self.embedder, self.reranker, self.ranker, self.weights,
                            self.max_excerpt_chars, self.expand, self.get_section, self.legs)

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

    def _debug_record(self, leg: SearchLeg, preferences: SearchPreferences) -> SearchDebug:
        fusion = FUSION if leg == "hybrid" else "none"
        return SearchDebug(
            backend=self.backend.name, leg=leg, fusion=fusion, fusion_method=fusion, rrf_k=RRF_K,
            score_share=SCORE_SHARE, weights=self.weights, vector_weight=self.weights.get("vector"),
            sparse_weight=self.weights.get("bm25"), rerank=self.reranker.model,
            embedding_model=self.embedder.model_id, sources=list(preferences.sources or SOURCES), legs={},
            timings_ms={}, switches=preferences.switches(), legs_enabled={}, vector_enabled=False,
            sparse_enabled=False, graph_default=self.graph, graph_enabled=False, question_words=[],
            confidence_threshold=self.ranker.threshold if self.ranker is not None else None,
        )

    def get_section(self, source: str, section: str) -> Chunk | None:
        """Exact lookup (e.g. a criterion's normative text for `explain_rule`); None if absent."""
        try:
            return self.backend.get_section(source, section)
        except BackendUnavailable:
            return None


def _preferences(sources: list[str] | None, limit: int, include_vector: bool, include_sparse: bool,
                 include_graph: bool, leg: SearchLeg) -> SearchPreferences:
    """One search's preferences, or a clear error for a search that cannot run as asked."""
    if sources:
        unknown = [s for s in sources if s not in SOURCES]
        if unknown:
            raise ValueError(f"unknown source(s) {unknown}; known: {list(SOURCES)}")
    if (leg == "vector" and not include_vector) or (leg == "bm25" and not include_sparse):
        raise ValueError(f"the {leg} leg was asked for and switched off")
    if leg == "hybrid" and not (include_vector or include_sparse):
        raise ValueError("a search needs the BM25 or the vector leg; both were switched off")
    return SearchPreferences.model_validate({
        "sources": tuple(sources) if sources else None, "top_k": limit, "include_vector": include_vector,
        "include_sparse": include_sparse, "include_graph": include_graph})
