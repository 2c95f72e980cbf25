"""A question that names one of the two texts gets that text's best passages first.

"Is there an actual EU rule on flashing screens?" names the Act, and the prior (search/prior.py)
scales WCAG's passages down; but WCAG's criteria on flashes match such a question so well that
they filled all thirty candidates of both legs, and the Act's point on seizures was not among them
to be ranked at all. So such a question is also searched in the text it names (with our docs, which
speak of both), and that search's first `LEAD` passages go first; the mixed list follows, so a
question that names the Act but is answered by WCAG ("do abbreviations like EAA need spelling
out?") still finds its criterion among the first excerpts. When the mixed list already leads with
the named text, the second search is skipped: it found the same questions on the decision sets, and
it kept the search's p95 under 20 ms (bench/search.py).
"""
from __future__ import annotations

from groundchat.search.types import LegHit

# Measured on the decision sets at 1, 2, 3 and 5: 2 and 3 found the same questions, 2 kept
# WCAG a little higher for the questions that name the Act but are answered by WCAG.
LEAD = 2


def already_led(mixed: list[LegHit], source: str, exact: int, lead: int = LEAD) -> bool:
    """Whether the mixed list already leads with the named text (after the passages named by
    number): then its own search is skipped, which saves a second pair of leg queries."""
    first = mixed[exact: exact + lead]
    return len(first) == lead and all(h.chunk.source == source for h in first)


def named_first(mixed: list[LegHit], named: list[LegHit], exact: int, lead: int = LEAD) -> list[LegHit]:
    """The first `exact` passages of `mixed` (those the question names by number), then the named
    text's first `lead` of the others, then the rest of `mixed` in its order. Scores are rewritten to
    keep the order descending, since the rerank and the excerpts read them as such."""
    taken = {h.chunk.id for h in mixed[:exact]}
    leading = [h for h in named if h.chunk.id not in taken][:lead]
    taken |= {h.chunk.id for h in leading}
    ordered = [*mixed[:exact], *leading, *(h for h in mixed[exact:] if h.chunk.id not in taken)]
    top = max((h.score for h in ordered), default=0.0)
    # Strictly descending scores above the mixed list's own, in the new order.
    return [LegHit(h.chunk, top + (len(ordered) - i) * 1e-6) if i < exact + len(leading) else h
            for i, h in enumerate(ordered)]


__all__ = ["LEAD", "already_led", "named_first"]
