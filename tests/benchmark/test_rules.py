"""explain_rule: axe rule → its WCAG tags → exactly the criterion they name."""
from __future__ import annotations

import json

import pytest

from groundchat.benchmark.axe_rules import NO_WCAG, UnknownRule, explain, load_rules, rule_ids

WCAG22 = "https://www.w3.org/TR/WCAG22/"


@pytest.fixture
def axe_rules(corpus_dir):
    return json.loads((corpus_dir / "axe" / "axe-rules.json").read_text(encoding="utf-8"))


@pytest.fixture
def criteria_ref(corpus_dir):
    data = json.loads((corpus_dir / "reference" / "wcag22-success-criteria.json").read_text(encoding="utf-8"))
    return {c["num"]: c for c in data["success_criteria"]}


async def _explain_tool(registry, ctx, rule_id):
    return await registry.execute("explain_rule", {"rule_id": rule_id}, ctx)


async def test_every_wcag_tagged_rule_maps_to_the_criteria_its_tags_name(axe_rules, criteria_ref, registry, ctx):
    tagged = [r for r in axe_rules if any(t.startswith("wcag") and t[4:].isdigit() for t in r["tags"])]
    assert len(tagged) == 75
    for rule in tagged:
        result = await _explain_tool(registry, ctx, rule["id"])
        numbers = [c["number"] for c in result["criteria"]]
        assert sorted(numbers) == sorted(rule["wcagSuccessCriteria"]), rule["id"]
        assert result["best_practice"] is False
        for c in result["criteria"]:
            ref = criteria_ref[c["number"]]
            assert c["tag"] == "wcag" + c["number"].replace(".", "")
            assert c["tag"] in rule["tags"]
            assert c["handle"] == ref["handle"]
            assert c["level"] == (ref["level"] or None)
            assert c["url"] == ref["url"]  # the anchor in the WCAG 2.2 Recommendation, exactly
            assert c["url"].startswith(WCAG22 + "#")


async def test_every_best_practice_rule_says_no_wcag_criterion(axe_rules, registry, ctx):
    best = [r for r in axe_rules if not r["wcagSuccessCriteria"]]
    assert len(best) == 30
    for rule in best:
        result = await _explain_tool(registry, ctx, rule["id"])
        assert result["criteria"] == [], rule["id"]
        assert result["wcag"] == NO_WCAG
        assert result["best_practice"] is True


def test_facts_table_covers_axe_4_14_1_and_holds_facts_only(axe_rules):
    table = load_rules()
    assert table.axe_version == "4.14.1"
    assert rule_ids() == sorted(r["id"] for r in axe_rules)
    raw = json.loads(
        (__import__("importlib.resources").resources.files("groundchat") / "data/axe_rules.json").read_text()
    )
    for rule in raw["rules"].values():
        assert set(rule) == {"impact", "tags", "help_url"}
    for sc in raw["criteria"].values():
        assert set(sc) == {"handle", "level", "anchor", "obsolete"}
    by_id = {r["id"]: r for r in axe_rules}
    for rid in table.rule_ids:
        assert table.impact(rid) == by_id[rid]["impact"]
        assert table.tags(rid) == by_id[rid]["tags"]


def test_known_mappings_without_the_corpus():
    cc = explain("color-contrast")
    assert [(c.number, c.handle, c.level, c.url) for c in cc.criteria] == [
        ("1.4.3", "Contrast (Minimum)", "AA", WCAG22 + "#contrast-minimum")
    ]
    assert [c.number for c in explain("link-name").criteria] == ["2.4.4", "4.1.2"]
    assert [c.number for c in explain("target-size").criteria] == ["2.5.8"]
    assert explain("region").criteria == []
    parsing = explain("duplicate-id").criteria[0]
    assert (parsing.number, parsing.level, parsing.obsolete) == ("4.1.1", None, True)


def test_unknown_rule_lists_close_matches():
    with pytest.raises(UnknownRule) as exc:
        explain("colour-contrast")
    assert exc.value.close[0] == "color-contrast"
    assert "color-contrast" in str(exc.value)


async def test_unknown_rule_is_a_tool_error_with_close_matches(registry, ctx):
    from groundchat.tools import ToolError

    with pytest.raises(ToolError, match="image-alt"):
        await _explain_tool(registry, ctx, "img-alt")


class FakeDocs:
    def __init__(self):
        self.asked = []

    def get_section(self, source, section):
        self.asked.append((source, section))
        if section.startswith("Understanding "):
            return {"text": f"why {section} matters", "ref": "4e0b2d1a", "section": section, "title": f"{section} (informative)",
                    "url": "https://www.w3.org/WAI/WCAG22/Understanding/contrast-minimum.html"}
        return {"text": f"normative text of {section}", "ref": "3f9a1b2c"}


class BrokenDocs:
    def get_section(self, source, section):
        raise ConnectionError("index down")


async def test_explain_adds_criterion_text_and_ref_from_the_docs(registry, ctx):
    ctx.docs = FakeDocs()
    result = await _explain_tool(registry, ctx, "color-contrast")
    # The criterion's text, and its Understanding document's intent: why it matters, citable too.
    assert ctx.docs.asked == [("wcag22", "1.4.3"), ("wcag22", "Understanding 1.4.3")]
    assert result["criteria"][0]["why"]["text"] == "why Understanding 1.4.3 matters"
    assert result["criteria"][0]["why"]["ref"] == "4e0b2d1a"
    assert result["criteria"][0]["text"] == "normative text of 1.4.3"
    assert result["criteria"][0]["ref"] == "3f9a1b2c"
    assert result["criterion_text"] == "added"
    # Citable like a search excerpt: the citation check names the source it verified.
    from groundchat.grounding.citations import check_citations

    report = check_citations("Contrast matters [3f9a1b2c].", [{"id": "1", "name": "explain_rule", "result": result}])
    assert report["sources"][0] | {} == {"n": 1, "ref": "3f9a1b2c", "status": "verified", "source": "wcag22",
                                        "section": "1.4.3", "title": "1.4.3 Contrast (Minimum)", "url": "https://www.w3.org/TR/WCAG22/#contrast-minimum"}
    why = check_citations("It helps low vision [4e0b2d1a].", [{"id": "1", "name": "explain_rule", "result": result}])
    assert why["sources"][0]["status"] == "verified" and why["sources"][0]["section"] == "Understanding 1.4.3"


async def test_explain_still_answers_when_the_docs_are_down_or_absent(registry, ctx):
    ctx.docs = BrokenDocs()
    result = await _explain_tool(registry, ctx, "color-contrast")
    assert result["criteria"][0]["number"] == "1.4.3"
    assert result["criteria"][0]["ref"] is None
    assert result["criterion_text"].startswith("unavailable")
    ctx.docs = None
    result = await _explain_tool(registry, ctx, "color-contrast")
    assert result["criterion_text"] == "not requested"
    assert result["link"] == "/chat/runs?rule=color-contrast"


async def test_explain_rule_needs_docs_read(ctx, registry_with):
    from groundchat.auth.callers import RUNS_READ
    from groundchat.tools.base import ToolRefused

    with pytest.raises(ToolRefused):
        await registry_with({RUNS_READ}).execute("explain_rule", {"rule_id": "label"}, ctx)


async def test_the_rules_module_serves_as_the_context_rules(registry, ctx):
    # The app's composition hands the tools the `groundchat.benchmark.axe_rules` module itself.
    import groundchat.benchmark.axe_rules

    ctx.rules = groundchat.benchmark.axe_rules
    result = await _explain_tool(registry, ctx, "image-alt")
    assert [c["number"] for c in result["criteria"]] == ["1.1.1"]
