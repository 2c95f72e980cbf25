"""Names as users type them: one edit per five letters of a name, never a word of English, never a
word as near two names as one."""
from __future__ import annotations

import pytest

from groundchat.benchmark.axe_rules import rule_ids
from groundchat.offline.router import known_names, route
from groundchat.offline.typed_names import corrected
from groundchat_cli import sample

FACETS = sample.sample_names()
RULES = set(rule_ids())
NAMES = known_names(FACETS, RULES)
TOOLS = {"compare_contexts", "list_runs", "get_run", "top_rules", "explain_rule", "search_docs"}


@pytest.mark.parametrize(("typed", "meant"), [
    ("checkuot-flow", "checkout-flow"),      # two letters swapped: two edits in thirteen letters
    ("cedr-mini", "cedar-mini"),
    ("guidlines axe", "guidelines axe"),     # a part of a name, alone
    ("aria-hiden-focus", "aria-hidden-focus"),
    ("dune-cod", "dune-code"),               # "cod" is a word, "dune-cod" is not
    ("faild", "failed"),                     # an outcome is a name the data holds
    ("Birch-Pr0", "birch-pro"),
])
def test_a_mistyped_name_is_written_as_the_data_writes_it(typed, meant):
    assert corrected(typed, NAMES) == meant


@pytest.mark.parametrize("question", [
    "does a screen reader announce the header",   # "reader" is one edit from "header"
    "how to make apple cider",                    # "cider" from "cedar"
    "is the modal a model of good practice",      # "model" from "modal"
    "dun runs",                                   # too short to be told from a word or a name
])
def test_words_and_ambiguous_spellings_are_left_as_typed(question):
    assert corrected(question, NAMES) == question


def test_a_word_as_near_two_names_is_neither():
    assert corrected("runs of pine-mimi", ["pine-mini", "pine-midi"]) == "runs of pine-mimi"
    assert corrected("runs of pine-mimi", ["pine-mini", "oak-midi"]) == "runs of pine-mini"


def test_the_router_reads_the_corrected_names():
    plan = route("faild runs for cedr-mini on checkuot-flow", TOOLS, FACETS, RULES)
    assert plan.calls == [("list_runs", {"model": "cedar-mini", "task": "checkout-flow", "outcome": "failed"})]
    assert route("explain aria-hiden-focus", TOOLS, FACETS, RULES).calls == [
        ("explain_rule", {"rule_id": "aria-hidden-focus"})]
