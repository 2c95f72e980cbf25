"""Which numbers a view may show: the grounding rules on small, hand-made tool results."""
from decimal import Decimal

import pytest

from groundchat.grounding.view_numbers import returned_numbers, shown_numbers, ungrounded

RESULTS = [
    {"name": "compare_contexts", "grounding": "figures", "result": {"by_context": [
        {"context": "none", "runs": 120, "completion_rate": 0.875, "mean_violations": 4.41,
         "mean_cost": "0.02949117", "mean_cost_text": "$0.0295", "link": "/chat/runs?context=none"}]}},
    {"name": "top_rules", "grounding": "figures", "result": {"graded_runs": 432, "rules": [{"rule_id": "color-contrast", "count": 164, "share_of_graded_runs": 0.3796}]}},
    # Its class is text, not figures: its numbers ground nothing in a view.
    {"name": "search_docs", "grounding": "text", "result": {"excerpts": [{"text": "text needs 4.5 to 1 contrast", "score": 7.25}]}},
]


def stats(*values, unit=None):
    return {"title": "t", "parts": [{"type": "stats", "items": [
        {"label": "x", "value": v, **({"unit": unit} if unit else {})} for v in values]}]}


def test_numbers_and_numeric_strings_of_data_tools_are_collected():
    pool = returned_numbers(RESULTS)
    assert {Decimal("120"), Decimal("0.875"), Decimal("4.41"), Decimal("0.02949117"), Decimal("0.0295"),
            Decimal("432"), Decimal("164"), Decimal("0.3796")} <= pool
    assert Decimal("7.25") not in pool and Decimal("4.5") not in pool


@pytest.mark.parametrize("value", [4.41, 4.4, 4, "4.41", "$0.0295", "$0.03", "0.029", 120, "120 runs", 164, 432])
def test_returned_and_rounded_numbers_are_grounded(value):
    assert ungrounded(stats(value), RESULTS) == []


@pytest.mark.parametrize("value,unit", [("87.5%", None), ("88%", None), (87.5, "%"), (88, "%"), ("37.96%", None), ("38%", None)])
def test_percentages_of_returned_fractions_are_grounded(value, unit):
    assert ungrounded(stats(value, unit=unit), RESULTS) == []


NOT_RETURNED = "is not a number a data tool returned in this answer"


@pytest.mark.parametrize("value,problem", [
    (4.42, f"4.42 {NOT_RETURNED}"),
    (124.41, f"124.41 {NOT_RETURNED}"),  # 120 + 4.41: a sum
    (115.59, f"115.59 {NOT_RETURNED}"),  # 120 - 4.41: a difference
    (7.25, f"7.25 {NOT_RETURNED}"),  # returned by search_docs, not by a data tool
    ("4.5", f"'4.5' {NOT_RETURNED}"),
    ("4.41%", "'4.41%' is a percentage of no returned fraction"),
    (87.5, f"87.5 {NOT_RETURNED}"),  # a percentage shown without its sign
])
def test_anything_else_is_refused_with_where_it_is(value, problem):
    assert ungrounded(stats(value), RESULTS) == [f"parts[0] (stats).items[0].value: {problem}"]


def test_numbers_in_text_are_checked_but_names_are_not_numbers():
    view = {"title": "Round-1 on WCAG 1.4.3, run-round-1-signup", "parts": [
        {"type": "alert", "level": "info", "text": "The none context had 4.41 violations per run, 3 times more."},
        {"type": "table", "caption": "Runs of 2025-01-03", "columns": ["Completion %"], "rows": [[87.5], ["9%"]]},
    ]}
    assert [s.where for s in shown_numbers(view)] == ["parts[0] (alert).text", "parts[0] (alert).text",
                                                       "parts[1] (table).rows[0][0]", "parts[1] (table).rows[1][0]"]
    assert ungrounded(view, RESULTS) == [
        "parts[0] (alert).text: '3' is not a number a data tool returned in this answer",
        "parts[1] (table).rows[1][0]: '9%' is a percentage of no returned fraction",
    ]
