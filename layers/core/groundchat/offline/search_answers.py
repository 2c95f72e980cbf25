"""What an offline answer from the document search quotes and cites: the passage that answers best,
led by its sentence that shares most key terms with the question, and another only where it says
more of another criterion or article near the best score (measured by bench/offline_citations.py)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from groundchat.corpus.chunk import UNDERSTANDING_LABEL, whole_section
from groundchat.offline.question_intent import explains_why, intent_of

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject


def shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


@dataclass(frozen=True)
class SearchFloor:
    """Which passages of a search an answer cites: the best one always; another only when it is of a
    different criterion or article (its group, `search.diversity.group_of`) and its score is at least
    `relative` times the best one's. Measured by bench/offline_citations.py on the tune sets: of the
    passages of other groups the search serves, no band of score ratio has as many a reader accepts
    as not (at most 40%, just under a tie), so the floor that cites most accepted passages net of the
    rejected ones is a near tie, where the passages the question names by number also sit.
    No absolute floor: the scores' scale moves with the fusion weights and the reranker."""

    relative: float
    most: int = 3  # passages cited in all


SEARCH_FLOOR = SearchFloor(relative=0.99)
_SOURCE_NAMES = {"wcag22": "WCAG 2.2", "eaa": "the European Accessibility Act", "docs": "the benchmark's docs"}
# Sentences end at . ! ? ; or a line break, but not at a line that ends in a colon ("(g) E-Commerce
# services:", "Member States shall ensure that:"): alone it says nothing until what it introduces, so
# it is quoted with the line after it, as they stand in the text.
_SENTENCE = re.compile(r"(?<=[.!?;])\s+(?=[(\"'A-Z0-9])|(?<![:\n])\n+")
_QUOTE_CHARS = 320


def cited_passages(passages: list[JsonObject], floor: SearchFloor | None = None,
                   question: str | None = None) -> list[JsonObject]:
    """The passages an answer from the search quotes and cites, best first (see `SearchFloor`). A
    passage without a score (an older result) is never more than the lead: its relevance is unknown.
    Given the question, a passage whose answering sentence says nothing the ones before it do not
    (a criterion's benefits written again for its enhanced level) is left out too."""
    from groundchat.search.diversity import group_of

    floor = floor or SEARCH_FLOOR
    if not passages:
        return []
    intent = intent_of(question) if question is not None else None
    if intent == "reason":
        passages = _reasons_first(passages, floor.most)
    lead = passages[0]
    if intent == "duties" and (paragraphs := _same_article(lead, passages, floor.most + 1)):
        return paragraphs
    best = _score(lead)
    chosen, groups = [lead], {group_of(str(lead.get("source")), str(lead.get("section")))}
    for p in passages[1:]:
        if len(chosen) >= floor.most:
            break
        score, group = _score(p), group_of(str(p.get("source")), str(p.get("section")))
        if best is None or score is None or group in groups or score < floor.relative * best:
            continue
        if question is not None and not _says_more(question, p, chosen):
            continue
        chosen.append(p)
        groups.add(group)
    return chosen


def _reasons_first(passages: list[JsonObject], within: int) -> list[JsonObject]:
    """Asked why, the first passage among the best `within` that gives reasons leads (an Understanding
    document's intent or benefits, a recital), ahead of the normative text that matched the words."""
    reason = next((p for p in passages[:within] if explains_why(str(p.get("section") or ""))), None)
    return passages if reason is None else [reason, *(p for p in passages if p is not reason)]


def _same_article(lead: JsonObject, passages: list[JsonObject], most: int) -> list[JsonObject]:
    """Asked for a party's duties, the paragraphs of the lead's article the search returned, in the
    article's order: the duties are all of them, not the one nearest the question's words. Empty when
    the lead is not a numbered paragraph or is its article's only one here."""
    from groundchat.search.diversity import group_of

    section = str(lead.get("section") or "")
    if not _PARAGRAPH.fullmatch(section):
        return []
    group = group_of(str(lead.get("source")), section)
    same = [p for p in passages if group_of(str(p.get("source")), str(p.get("section"))) == group
            and _PARAGRAPH.fullmatch(str(p.get("section") or ""))]
    if len(same) < 2:
        return []
    return sorted(same, key=_paragraph_number)[:most]


def _paragraph_number(passage: JsonObject) -> int:
    match = _PARAGRAPH.fullmatch(str(passage.get("section") or ""))
    return int(match[1]) if match else 0


# A numbered paragraph of an article: "Article 10(4)".
_PARAGRAPH = re.compile(r"Article \d+\((\d+)\)")


def why_it_matters(question: str, whys: list[object]) -> list[str]:
    """Asked why, the lines that say why each criterion matters, quoted from its Understanding
    document (informative) and cited; none for any other question."""
    if intent_of(question) != "reason":
        return []
    lines = []
    for why in whys:
        if isinstance(why, dict) and why.get("ref") and why.get("text"):
            title = str(why.get("title") or why.get("section"))
            said = " ".join(_without_heading(str(why["text"]), title).split())
            lines.append(f"Why it matters, from {title} (WCAG 2.2): \"{shorten(said, _QUOTE_CHARS)}\" [{why['ref']}]")
    return lines


def _says_more(question: str, passage: JsonObject, chosen: list[JsonObject]) -> bool:
    from groundchat.grounding.key_terms import key_terms

    said = set().union(*(key_terms(answering_sentence(question, p)) for p in chosen))
    return bool(key_terms(answering_sentence(question, passage)) - said)


def _score(passage: JsonObject) -> float | None:
    try:
        return float(passage["score"])
    except (KeyError, TypeError, ValueError):
        return None


def answering_sentence(question: str, passage: JsonObject) -> str:
    """The sentence of the passage that shares most key terms with the question (the first of equals),
    copied as it stands: the answer quotes, it does not paraphrase. The passage's heading line is
    left out when there is more (its title names it)."""
    from groundchat.grounding.key_terms import key_terms

    title = str(passage.get("title") or "")
    text = _without_heading(str(passage.get("text", "")), title)
    head, _, rest = text.partition("\n")
    if rest.strip() and _HEADING.match(head):
        text = rest
    pieces = [" ".join(p.split()) for p in _SENTENCE.split(text)]
    pieces = [p for p in pieces if len(p.split()) >= 3] or [" ".join(text.split())]
    wanted = key_terms(question)
    best = max(pieces, key=lambda p: (len(wanted & key_terms(p)), -pieces.index(p)))
    return shorten(best, _QUOTE_CHARS)


# The first line of a criterion's or an Understanding passage's text: it names what the title names.
_HEADING = re.compile(r"(?:Success Criterion|Guideline|Principle|Understanding)\b")


def _passage_name(p: JsonObject) -> str:
    """"1.4.3 Contrast (Minimum) (WCAG 2.2)", with the section only where the title does not say it."""
    source, section = str(p.get("source") or ""), str(p.get("section") or "")
    title = str(p.get("title") or section)
    named = _SOURCE_NAMES.get(source, source)
    return f"{title} ({named})" if whole_section(section) in title else f"{title} ({named}, {section})"


def _without_heading(text: str, title: str) -> str:
    """An article's passage opens with a line naming its article and chapter, and an Understanding
    passage with one naming its criterion and "Understanding WCAG 2.2 (informative)", for the search;
    the bullet already names it by its title (which says "(informative)"), so that line is not
    repeated and the excerpt shows what the passage says."""
    head, _, rest = text.partition("\n")
    named = title.split(",", 1)[0].strip()
    understanding = head.startswith(UNDERSTANDING_LABEL) and title.endswith("(informative)")
    return rest if rest and (understanding or (named and head.startswith(named))) else text


def cited_answer(question: str, passages: list[JsonObject]) -> str:
    """The answer's lines: the lead passage's sentence quoted and cited, then what else bears on it."""
    lead, *others = cited_passages(passages, question=question)
    lines = [f"{_passage_name(lead)} says: \"{answering_sentence(question, lead)}\" [{lead.get('ref')}]"]
    if others:
        lines.append("It also bears on:")
        lines += [f"- {_passage_name(p)}: \"{answering_sentence(question, p)}\" [{p.get('ref')}]" for p in others]
    return "\n".join(lines)


__all__ = ["SEARCH_FLOOR", "SearchFloor", "answering_sentence", "cited_answer", "cited_passages", "shorten",
           "why_it_matters"]
