"""What a question asks for, by how it asks, whatever its subject (offline/question_intent.py)."""
from __future__ import annotations

import pytest

from groundchat.offline.question_intent import explains_why, intent_of


@pytest.mark.parametrize("question", ["Why does color-contrast matter?", "and why is that required", "how come captions are needed",
                                      "what's the point of a skip link?", "does it really matter if alt text is missing?",
                                      "why must importers keep records?"])
def test_a_reason_is_asked_for(question):
    assert intent_of(question) == "reason"


@pytest.mark.parametrize("question", ["What are a distributor's obligations?", "duties of importers under the act",
                                      "what must a manufacturer do before selling an e-reader?",
                                      "what is a service provider required to keep?"])
def test_a_partys_duties_are_asked_for(question):
    assert intent_of(question) == "duties"


@pytest.mark.parametrize("question", ["What contrast ratio does body text need?", "list runs for birch-pro",
                                      "which axe rule covers missing alt text?"])
def test_other_questions_ask_for_nothing_in_particular(question):
    assert intent_of(question) is None


def test_reasons_are_in_understanding_documents_and_recitals():
    assert explains_why("Understanding 1.4.3") and explains_why("Understanding 1.4.3 Benefits") and explains_why("Recital 41")
    assert not explains_why("Understanding 1.4.3 Examples") and not explains_why("1.4.3") and not explains_why("Article 10(4)")
