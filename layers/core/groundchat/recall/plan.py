"""The recall plan: whether this question may search the caller's past conversations, and why.

A pure function of the setting and the question. `off` never searches; `explicit` searches only when
the question points back at earlier conversations ("as I asked last week", "earlier you said");
`auto` also offers the search when the question leans on the past more softly ("again", "last
time"). A refusal in the question ("don't use my history") wins over everything. The plan only
decides whether `search_my_conversations` is offered; the corpus search never depends on it.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject

RECALL_MODES = ("off", "explicit", "auto")
TOOL_NAME = "search_my_conversations"

# The question refuses its history: checked first, it wins over any cue.
_OPT_OUT = re.compile(
    r"\b(?:do not|don't|dont|never|without)\s+(?:use|using|look(?:ing)? (?:at|through|in)|search(?:ing)?|check(?:ing)?)\s+"
    r"(?:my|our|the)\s+(?:(?:past|previous|earlier|old|chat)\s+)?(?:history|conversations?|chats?|questions?)\b"
    r"|\bignore (?:my|our) (?:history|(?:past|previous|earlier) (?:conversations?|chats?|questions?))\b", re.I)
# The question points back at the caller's own earlier exchanges.
_EXPLICIT = re.compile(
    r"\bas I (?:asked|said|mentioned|wrote)\b|\bI (?:asked|said|mentioned) (?:before|earlier|previously|last)\b"
    r"|\bwhat did I (?:ask|say|want)\b|\bwhat (?:did )?you (?:said|say|told me|answer(?:ed)?)\b"
    r"|\b(?:earlier|before|previously|last time) you (?:said|told|answered|wrote|mentioned)\b"
    r"|\byou (?:said|told me|answered) (?:earlier|before|previously|last)\b"
    r"|\b(?:my|our) (?:past|previous|earlier|last|old) (?:conversations?|chats?|questions?)\b"
    r"|\bin (?:a|an|our|my) (?:previous|earlier|past|other) (?:conversation|chat)\b", re.I)
# Softer signs the question builds on something earlier: enough in `auto`, not in `explicit`.
_SOFT = re.compile(r"\b(?:again|last (?:week|month|time)|yesterday|remind me|we discussed|we talked|follow[- ]up)\b", re.I)


@dataclass(frozen=True)
class RecallPlan:
    search: bool
    mode: str
    reason: str
    signals: list[str] = field(default_factory=list)
    # Whether this caller's exchanges are indexed at all (has recall.read, recall not off).
    indexes: bool = True

    def record(self) -> JsonObject:
        """What the answer's debug record and trace show of the decision."""
        return asdict(self)

    def for_reader(self) -> JsonObject:
        """What the answer's Details show: searched or not, and why."""
        return {"search": self.search, "reason": self.reason}


def plan_recall(question: str, mode: str, *, permitted: bool = True) -> RecallPlan:
    """Whether to offer the recall search for `question` under `mode` (GROUNDCHAT_RECALL)."""
    if mode not in RECALL_MODES:
        raise ValueError(f"unknown recall mode {mode!r}; valid: {', '.join(RECALL_MODES)}")
    signals = [name for name, pattern in (("opt-out", _OPT_OUT), ("explicit", _EXPLICIT), ("soft", _SOFT))
               if pattern.search(question)]
    if not permitted:
        return RecallPlan(False, mode, "this account may not search its past conversations (recall.read)", signals, indexes=False)
    if mode == "off":
        return RecallPlan(False, mode, "recall is off", signals, indexes=False)
    if "opt-out" in signals:
        return RecallPlan(False, mode, "the question asks not to use its history", signals)
    if "explicit" in signals:
        return RecallPlan(True, mode, "the question refers to earlier conversations", signals)
    if mode == "auto" and "soft" in signals:
        return RecallPlan(True, mode, "the question builds on something earlier", signals)
    return RecallPlan(False, mode, "no sign the question needs earlier conversations", signals)


def is_explicit_recall(question: str) -> bool:
    """An unmistakable request to look back (the offline answerer routes it to the recall tool)."""
    return bool(_EXPLICIT.search(question)) and not _OPT_OUT.search(question)
