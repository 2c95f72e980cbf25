"""What a question asks for, by how it asks: a reason ("why does contrast matter?") or a party's duties
("what are a distributor's obligations?"). Whatever its subject, the intent says which part of a
document answers it: a reason is in a criterion's Understanding document (its intent and benefits)
or in the Act's recitals, not in the normative text; a party's duties are the paragraphs of the
article that sets them, all of them, not the one sentence nearest the question's words.

The patterns are data (`question_intents.json`); a question matching none has no particular intent
and is answered with the passage that matches it best.
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources
from typing import Literal

Intent = Literal["reason", "duties"]
# In this order: a reason wins over duties ("why must importers keep records?").
INTENTS: tuple[Intent, ...] = ("reason", "duties")


@lru_cache(maxsize=1)
def _patterns() -> dict[str, list[re.Pattern[str]]]:
    text = resources.files("groundchat.offline").joinpath("question_intents.json").read_text(encoding="utf-8")
    data = json.loads(text)
    return {intent: [re.compile(p) for p in patterns] for intent, patterns in data.items() if not intent.startswith("_")}


def intent_of(question: str) -> Intent | None:
    """The question's intent, or None."""
    q = " ".join(question.lower().split())
    return next((intent for intent in INTENTS if any(p.search(q) for p in _patterns()[intent])), None)


def explains_why(section: str) -> bool:
    """A passage that gives reasons: an Understanding document's intent or benefits, or a recital."""
    return (section.startswith("Understanding ") and not section.endswith(" Examples")) or section.startswith("Recital ")


__all__ = ["Intent", "explains_why", "intent_of"]
