"""The data's names as people write them: whole however joined, by a part only they have, never by
an everyday word alone."""
from __future__ import annotations

import pytest

from groundchat.offline.name_matching import find_names, pinned

SAMPLE = {"model": ["atlas-large", "birch-pro", "dune-code", "atlas-small", "cedar-mini"],
          "context": ["checklist", "guidelines", "guidelines-axe"],
          "task": ["signup-form", "product-grid", "pricing-table", "nav-header", "modal-dialog", "blog-article",
                   "data-dashboard", "checkout-flow"],
          "label": ["round-1", "round-2", "round-3"]}


@pytest.mark.parametrize(("question", "expected"), [
    ("how does atlas small do on the sign up form", {"model": "atlas-small", "task": "signup-form"}),
    ("signup form, guidelines axe, round 2", {"task": "signup-form", "context": "guidelines-axe", "label": "round-2"}),
    ("cedar on the checkout", {"model": "cedar-mini", "task": "checkout-flow"}),
    ("the big atlas model with the full guidelines", {"model": "atlas-large", "context": "guidelines"}),
    ("is the axe one worth it", {"context": "guidelines-axe"}),
    ("what trips up dune code on the modal", {"model": "dune-code", "task": "modal-dialog"}),
    # In the plural: "product grids", "the modals".
    ("birch-pro's mistakes on product grids", {"model": "birch-pro", "task": "product-grid"}),
    ("how do the modals go with checklists", {"task": "modal-dialog", "context": "checklist"}),
])
def test_names_are_found_however_they_are_written(question, expected):
    assert pinned(question, SAMPLE) == expected


@pytest.mark.parametrize("question", [
    "which axe rule is about forms",           # "axe" and "form" are everyday words here
    "is a small shop covered?",                # "small" alone is not atlas-small
    "what does the article say about data",    # nor "article" blog-article, nor "data" data-dashboard
    "which atlas model is cheaper?",           # "atlas" is two models: the question compares them
    "do header cells of tables need markup?",  # an everyday part stays everyday in the plural
])
def test_everyday_words_and_shared_parts_alone_pin_nothing(question):
    assert pinned(question, SAMPLE) == {}


def test_two_names_of_one_facet_pin_neither_but_both_are_found():
    assert pinned("atlas-small against birch-pro", SAMPLE) == {}
    assert find_names("atlas-small against birch pro", SAMPLE["model"]) == ["atlas-small", "birch-pro"]


def test_names_of_other_data_work_the_same_way():
    facets = {"model": ["claude-sonnet-4", "gpt-4o", "gpt-4o-mini"], "context": ["wcag-summary", "none"]}
    assert pinned("how does sonnet do with the wcag summary", facets) == {"model": "claude-sonnet-4",
                                                                          "context": "wcag-summary"}
    # "gpt 4o" is written whole for gpt-4o; gpt-4o-mini is longer and not all there.
    assert pinned("cost of gpt 4o runs", facets) == {"model": "gpt-4o"}
    assert pinned("cost of gpt-4o-mini runs", facets) == {"model": "gpt-4o-mini"}


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_any_text_pins_only_names_the_data_holds_and_never_fails(question):
    found = pinned(question, SAMPLE)
    assert set(found) <= set(SAMPLE)
    assert all(name in SAMPLE[facet] for facet, name in found.items())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["atlas", "small", "large", "big", "sign", "up", "form", "round", "2", "the", "axe",
                                 "one", "cedar", "-", "checkout", "guidelines"]), max_size=30))
def test_a_name_is_pinned_only_where_its_words_or_its_own_part_appear(words):
    question = " ".join(words)
    for facet, name in pinned(question, SAMPLE).items():
        name_parts = set(name.split("-"))
        assert name_parts & set(words) or "".join(name.split("-")) in "".join(words), (question, name)
