"""Tool results over our ceiling are cut with a note of what was dropped, never blindly."""
import json

from groundchat.grounding.result_ceiling import fit_result


def test_small_results_are_untouched():
    value = {"rows": [1, 2, 3], "n": 0}
    assert fit_result(value, 1000) is value


def test_long_lists_lose_items_from_the_end_and_say_how_many():
    value = {"filter": {}, "rows": [{"i": i, "pad": "x" * 50} for i in range(200)]}
    out = fit_result(value, 2000)
    assert len(json.dumps(out)) <= 2000
    kept = len(out["rows"])
    assert 0 < kept < 200
    assert out["rows"] == value["rows"][:kept]  # the first items stay, in order
    assert out["_truncated"] == f"dropped {200 - kept} of 200 items from 'rows'"
    assert out["filter"] == {}


def test_a_long_string_is_cut_with_a_count():
    out = fit_result("y" * 5000, 1000)
    assert len(out) <= 1000 and "characters dropped" in out
