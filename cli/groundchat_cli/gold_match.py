"""Whether a passage's section answers a question's gold sections: the one rule by which the
retrieval evaluation, the router evaluation and the benchmarks count a hit."""
from __future__ import annotations

from groundchat.corpus.chunk import whole_section


def matches_gold(section: str, gold: list[str]) -> bool:
    # "Article 2" is answered by any of its paragraphs ("Article 2(1)"); "Article 3(22)" only by itself.
    # A criterion is answered by its Understanding chunks too ("Understanding 1.4.3", "… Benefits"),
    # and "Annex II" by any of its sections ("Annex II Section IV").
    whole = whole_section(section)
    return any(section == g or whole == g or section.startswith(g + " Section ") for g in gold)
