"""The arguments the offline router reads from a question: the names it pins (with the `none`
context as people say it) and how many results it asks for, where a number is a count and not a
round's, a label's or a name's."""
from __future__ import annotations

import re

from groundchat.offline.name_matching import pinned

Facets = dict[str, list[str]]

RUN_ID = re.compile(r"\brun[-_][A-Za-z0-9][A-Za-z0-9_-]{3,}\b", re.I)
# A number is a limit only where it counts results ("top 5", "last 3", "10 runs"), never in a name
# ("round 3") or an amount ("17%"): after these words, or before what is counted.
_COUNTED_AFTER = r"(?:top|first|last|latest|recent|newest|show(?: me)?|list|give me)"
_COUNTED = r"(?:runs|rules|results|items|problems|failures|violations)"
_LIMIT = re.compile(rf"\b{_COUNTED_AFTER}\s+(\d{{1,3}})\b(?!\s*%)|(?<![\w-])(\d{{1,3}})\s+(?:\w+\s+){{0,2}}{_COUNTED}\b")
# A number that is a round's or a label's, however written ("round 4", "r3", "rd 2", "the 2nd round",
# "label 3", "wave two"): never counted, even where the data holds no such label.
_LABEL_NUMBER = re.compile(r"\b(?:round|rd|rnd|r|label|wave|batch|iteration|sprint|phase|release|version|v)[\s#.-]*"
                           r"(?:\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten)\b"
                           r"|\b(?:\d{1,3}(?:st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth)"
                           r"\s+(?:round|label|wave|batch|iteration)\b", re.I)
# The same in words ("top three", "five most common problems"), never "round three".
_LIMIT_IN_WORDS = [(re.compile(rf"\b{_COUNTED_AFTER} {word}\b|(?<!round )\b{word} (?:\w+ ){{0,3}}{_COUNTED}\b"), number)
                   for word, number in {"three": 3, "five": 5, "ten": 10, "twenty": 20}.items()]


def nameable(facets: Facets) -> Facets:
    """The facets a question may name, each with its names; `none` is a context's name and an
    everyday word, so it is pinned only by how people say it (see `filters_named`)."""
    return {facet: [v for v in facets[facet] if not (facet == "context" and v == "none")]
            for facet in ("model", "context", "task", "label") if facet in facets}


# The `none` context as people say it: no context, nothing extra, the bare task prompt.
_NO_CONTEXT = re.compile(
    r"\b(?:no|zero|without(?: any)?)(?: extra| additional| accessibility| a11y)? (?:context|guidance|instructions|help)\b"
    r"|\bcontext (?:of )?none\b|\bnone context\b|\bnothing extra\b|\bbare(?:[- ]bones)? (?:prompts?|tasks?|runs?|minimum)\b"
    # "nothing else" only of what the agent is given: "the task and nothing else", not "nothing else near it"
    r"|\b(?:task|prompt|just)\b[\w ]{0,25}\bnothing (?:else|more)\b|\bnothing (?:else|more) (?:added|given|in the prompt)\b"
    r"|\b(?:just|only) the (?:task|prompt|task prompt)\b|\b(?:task|plain) prompt (?:alone|only)\b|\bplain task prompt\b",
    re.I)


def filters_named(q: str, facets: Facets) -> dict[str, str]:
    out = pinned(q, nameable(facets))
    if _NO_CONTEXT.search(q) and "none" in facets.get("context", ["none"]):
        out["context"] = "none"
    return out


def counted_part(q: str, facets: Facets) -> str:
    """The question with the numbers of names blanked: a round's or a label's, and those in a name the
    data holds ("signup-form-2"), so that none is read as how many results to show."""
    q = _LABEL_NUMBER.sub(" ", q)
    for values in facets.values():
        for name in values:
            if re.search(r"\d", name):
                written = r"[\s_-]*".join(re.escape(part) for part in re.findall(r"[a-z]+|\d+", name.lower()))
                q = re.sub(rf"\b{written}\b", " ", q)
    return q


def _limit(q: str) -> int | None:
    for counted, number in _LIMIT_IN_WORDS:
        if counted.search(q):
            return number
    m = _LIMIT.search(q)
    number = int(m.group(1) or m.group(2)) if m else 0
    return number if 0 < number <= 100 and not RUN_ID.search(q) else None


def limited(q: str) -> dict[str, int]:
    limit = _limit(q)
    return {"limit": limit} if limit else {}


__all__ = ["RUN_ID", "counted_part", "filters_named", "limited", "nameable"]
