"""A third leg for questions about WCAG: how well a success criterion matches as a whole.

A criterion is indexed as its normative text beside its Understanding chunks (the brief, the
benefits, the examples), and all of them are about the one thing the criterion asks. So how well
the criterion as a whole matches a question is evidence for each of its passages, and it tells
apart neighbours whose single passages share words: for "our designer removed the focus outline",
the examples of 2.4.13 (focus appearance) match best on their own, while 2.4.7 (focus visible)
matches better over its passages taken together; with this leg 2.4.7 comes second, not fourth.

The criterion's score is the mean of its two best passages in the vector leg (a passage below the
leg's cut-off counts at the cut-off's score), so one lucky passage is not enough. The leg lists the
criteria in that order, each by its two best passages, and is fused with the other legs by RRF at
`CRITERION_WEIGHT`.

It is derived from the vector leg's own candidates, so it needs nothing from the backend and
behaves the same on the embedded index and on OpenSearch.

It applies only when the two-leg fusion leads with a WCAG passage. An article of the Act is not one
topic (Article 3 holds 44 definitions; Article 2 lists every product and service in scope), and
the same leg over articles lowered the EAA's figures on the tuning split; for a question on the Act
the leg would only add WCAG passages that do not answer it.
"""
from __future__ import annotations

from dataclasses import dataclass

from groundchat.search.diversity import group_of
from groundchat.search.leg import Found, Joins, LegRun, SearchPlan
from groundchat.search.types import LegHit

CRITERION_LEG = "criterion"
SOURCE = "wcag22"
CRITERION_WEIGHT = 0.5
PASSAGES_PER_CRITERION = 2


def criterion_leg_applies(fused: list[LegHit]) -> bool:
    return bool(fused) and fused[0].chunk.source == SOURCE


def criterion_leg(vector_hits: list[LegHit]) -> list[LegHit]:
    """Criteria best first, each by its best passages, scored by the mean of its two best."""
    if not vector_hits:
        return []
    cut_off = min(h.score for h in vector_hits)
    by_criterion: dict[str, list[LegHit]] = {}
    for hit in sorted(vector_hits, key=lambda h: -h.score):
        if hit.chunk.source == SOURCE:
            by_criterion.setdefault(group_of(hit.chunk.source, hit.chunk.section), []).append(hit)
    scores = {
        group: sum(h.score for h in hits[:PASSAGES_PER_CRITERION])
        + cut_off * max(0, PASSAGES_PER_CRITERION - len(hits))
        for group, hits in by_criterion.items()
    }
    ordered = sorted(by_criterion, key=lambda group: -scores[group])
    return [LegHit(h.chunk, scores[group] / PASSAGES_PER_CRITERION)
            for group in ordered for h in by_criterion[group][:PASSAGES_PER_CRITERION]]


@dataclass(frozen=True)
class CriterionLeg:
    """The leg as the search runs it (search/leg.py): on the fused order of the legs before it."""
    name: str = CRITERION_LEG
    joins: Joins = "votes"
    asks: frozenset[str] = frozenset()
    needs_vector: bool = False

    def enabled(self, plan: SearchPlan) -> bool:
        return plan.hybrid

    def run(self, plan: SearchPlan, found: Found) -> LegRun | None:
        if not criterion_leg_applies(found.fused()):
            return None
        return LegRun(criterion_leg(found.legs.get("vector", [])), weight=CRITERION_WEIGHT)


__all__ = ["CriterionLeg", "CRITERION_LEG", "CRITERION_WEIGHT", "criterion_leg", "criterion_leg_applies"]
