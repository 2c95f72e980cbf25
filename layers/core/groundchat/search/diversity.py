"""No single article or criterion fills the excerpts.

An article of the Act is indexed paragraph by paragraph, and a success criterion beside its
Understanding chunks (its brief, benefits, examples). Their passages share words, so one of them
that matches a question brings its siblings along: the first five excerpts can be four paragraphs
of Article 19 when the question was about Article 23.

After the ranking, the first `DISTINCT_FIRST` excerpts are the best passage of as many different
articles or criteria: a question in everyday words often matches a neighbour of the passage it
needs, and each sibling in the first five is a place the right article could have had. After them
a group may have `PER_GROUP` passages in its ranked place (an answer often needs two paragraphs of
one article, or a criterion beside its Understanding text); the others move down behind the
passages of other groups, in their order. Nothing is dropped, and the first passage of each group
never moves down. Passages the question names (the exact path) lead as they are.
"""
from __future__ import annotations

from groundchat.corpus.chunk import whole_section
from groundchat.search.types import LegHit

DISTINCT_FIRST = 5
PER_GROUP = 2


def group_of(source: str, section: str) -> str:
    """`eaa Article 19` for each of its paragraphs, `wcag22 1.4.3` for the criterion and its
    Understanding chunks; any other passage is its own group."""
    return f"{source} {whole_section(section)}"


def spread(hits: list[LegHit], *, named: int = 0, distinct_first: int = DISTINCT_FIRST,
           per_group: int = PER_GROUP) -> list[LegHit]:
    """`hits` reordered as the module says; the first `named` (the passages the question names) stay
    first and count towards their groups."""
    lead, rest = hits[:named], hits[named:]
    seen: dict[str, int] = {}
    for hit in lead:
        _count(seen, hit)
    distinct: list[LegHit] = []
    after: list[LegHit] = []
    for hit in rest:
        group = _group(hit)
        if len(distinct) < distinct_first and group not in seen:
            _count(seen, hit)
            distinct.append(hit)
        else:
            after.append(hit)
    kept: list[LegHit] = []
    held: list[LegHit] = []
    for hit in after:
        (kept if _count(seen, hit) <= per_group else held).append(hit)
    return lead + distinct + kept + held


def _group(hit: LegHit) -> str:
    return group_of(hit.chunk.source, hit.chunk.section)


def _count(seen: dict[str, int], hit: LegHit) -> int:
    group = _group(hit)
    seen[group] = seen.get(group, 0) + 1
    return seen[group]


__all__ = ["DISTINCT_FIRST", "PER_GROUP", "group_of", "spread"]
