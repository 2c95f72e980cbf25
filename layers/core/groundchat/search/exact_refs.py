"""The exact path: a question that names its passage gets that passage first.

A criterion number ("2.4.7", "SC 1.4.3"), an article ("Article 31", "Art. 3(23)"), an annex section
("Annex I Section IV", "Annex III"), a recital ("Recital 41") or an axe rule id ("color-contrast",
looked up to its criteria) is a reference, not a topic: ranking it by similarity can only lose it.
"""
from __future__ import annotations

import re
from typing import Callable, Sequence

from groundchat.corpus.annex_points import first_point_names
from groundchat.corpus.chunk import Chunk

_CRITERION = re.compile(r"(?<![\d.])([1-4])\.(\d{1,2})\.(\d{1,2})(?![\d.]*\d)")
_ARTICLE = re.compile(r"\bart(?:icle|\.)?\s*(\d{1,2})\s*(?:\((\d{1,2})\))?", re.IGNORECASE)
_ROMAN = r"(VII|VI|V|IV|III|II|I)"
_ANNEX = re.compile(rf"\bannex\s+{_ROMAN}\b(?:[,\s]*(?:section|sect\.|§)\s*{_ROMAN}\b)?", re.IGNORECASE)
_RECITAL = re.compile(r"\brecital\s+(\d{1,3})\b", re.IGNORECASE)
_RULE_ID = re.compile(r"\b[a-z][a-z0-9]*(?:-[a-z0-9]+)+\b")

Lookup = Callable[[str, str], "Chunk | None"]


def named_sections(query: str, rule_criteria: Callable[[str], list[str]] | None = None) -> list[tuple[str, list[str]]]:
    """What the question names, in the order named: (source, sections to try in turn)."""
    found: list[tuple[int, str, list[str]]] = []
    for m in _CRITERION.finditer(query):
        found.append((m.start(), "wcag22", [f"{m.group(1)}.{m.group(2)}.{m.group(3)}"]))
    for m in _ARTICLE.finditer(query):
        number, paragraph = m.group(1), m.group(2)
        tries = [f"Article {number}({paragraph})"] if paragraph else []
        found.append((m.start(), "eaa", [*tries, f"Article {number}", f"Article {number}(1)"]))
    for m in _ANNEX.finditer(query):
        annex, section = m.group(1).upper(), m.group(2)
        # A long section is indexed by its points: its first passage stands for it.
        wanted = [f"Annex {annex} Section {section.upper()}"] if section else []
        wanted += [f"Annex {annex}", f"Annex {annex} Section I"]
        found.append((m.start(), "eaa", [name for w in wanted for name in (w, *first_point_names(w))]))
    for m in _RECITAL.finditer(query):
        found.append((m.start(), "eaa", [f"Recital {m.group(1)}"]))
    if rule_criteria is not None:
        for m in _RULE_ID.finditer(query):
            for number in rule_criteria(m.group(0)):
                found.append((m.start(), "wcag22", [number]))
    return [(source, tries) for _, source, tries in sorted(found, key=lambda f: f[0])]


def exact_chunks(query: str, lookup: Lookup, sources: Sequence[str] | None,
                 rule_criteria: Callable[[str], list[str]] | None = None) -> list[Chunk]:
    """The passages the question names that exist in the index (first match per reference)."""
    out: list[Chunk] = []
    seen: set[str] = set()
    for source, tries in named_sections(query, rule_criteria):
        if sources and source not in sources:
            continue
        for section in tries:
            chunk = lookup(source, section)
            if chunk is not None:
                if chunk.id not in seen:
                    seen.add(chunk.id)
                    out.append(chunk)
                break
    return out


def axe_rule_criteria(rule_id: str) -> list[str]:
    """The WCAG criteria an axe rule's tags name; none for an unknown id or a best practice."""
    from groundchat.benchmark import axe_rules

    if rule_id not in axe_rules.load_rules():
        return []
    return [c.number for c in axe_rules.explain(rule_id).criteria]
