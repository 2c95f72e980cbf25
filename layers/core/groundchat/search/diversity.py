"""No single article or criterion fills the excerpts.

An article of the Act is indexed paragraph by paragraph, and a success criterion beside its
Understanding chunks (its brief, benefits, examples). Their passages share words, so one of them
that matches a question brings its siblings along: the first five excerpts can be four paragraphs
of Article 19 when the question was about Article 23. After the ranking, at most `PER_GROUP`
passages of one article or criterion keep their place; the others move down behind the passages of
other groups, in their order. Nothing is dropped, and the first passage of each group never moves
down.
"""
from __future__ import annotations

from groundchat.corpus.chunk import whole_section
from groundchat.search.types import LegHit

PER_GROUP = 2


def group_of(source: str, section: str) -> str:
    """`eaa Article 19` for each of its paragraphs, `wcag22 1.4.3` for the criterion and its
    Understanding chunks; any other passage is its own group."""
    return f"{source} {whole_section(section)}"


def spread(hits: list[LegHit], per_group: int = PER_GROUP) -> list[LegHit]:
    seen: dict[str, int] = {}
    kept, held = [], []
    for hit in hits:
        group = group_of(hit.chunk.source, hit.chunk.section)
        seen[group] = seen.get(group, 0) + 1
        (kept if seen[group] <= per_group else held).append(hit)
    return kept + held


__all__ = ["PER_GROUP", "group_of", "spread"]
