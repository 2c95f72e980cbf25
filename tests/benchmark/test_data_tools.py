"""The data tools over the sample: every number equals a direct computation over the same runs."""
from __future__ import annotations

from collections import Counter, defaultdict
from decimal import ROUND_CEILING, Decimal
from urllib.parse import parse_qs, urlparse

import pytest

from groundchat.money import cost_text
from groundchat.tools import ToolError


def expected_rows(lines: list[dict]) -> dict[tuple[str, str], dict]:
    """compare_contexts computed straight from the JSONL lines, without the store's code."""
    groups = defaultdict(list)
    for line in lines:
        groups[(line["model"], line["context"])].append(line)
    out = {}
    for key, runs in groups.items():
        graded = [r for r in runs if r.get("axe")]
        total = sum(Decimal(r["cost_usd"]) for r in runs)
        out[key] = {
            "runs": len(runs),
            "completed": sum(r["outcome"] == "completed" for r in runs),
            "failed": sum(r["outcome"] == "failed" for r in runs),
            "timeout": sum(r["outcome"] == "timeout" for r in runs),
            "completion_rate": round(sum(r["outcome"] == "completed" for r in runs) / len(runs), 4),
            "graded_runs": len(graded),
            "mean_violations": round(sum(len(r["axe"]["violations"]) for r in graded) / len(graded), 2) if graded else None,
            "mean_cost": (total / len(runs)).quantize(Decimal("1e-8"), rounding=ROUND_CEILING),
            "total_cost": total,
        }
    return out


def query(link: str) -> dict[str, str]:
    parsed = urlparse(link)
    assert parsed.path == "/chat/runs"
    return {k: v[0] for k, v in parse_qs(parsed.query).items()}


async def call(registry, ctx, name, **args):
    return await registry.execute(name, args, ctx)


async def test_compare_contexts_numbers_equal_a_direct_computation(loaded_full, registry, ctx):
    loaded = loaded_full
    result = await call(registry, ctx, "compare_contexts")
    want = expected_rows(loaded)
    assert len(result["rows"]) == len(want) == 20
    assert result["total_runs"] == len(loaded)
    # What every run cost together, summed as Decimal from the lines themselves.
    spent = sum((Decimal(line["cost_usd"]) for line in loaded), Decimal(0))
    assert Decimal(result["total_cost"]) == spent and result["total_cost_text"] == cost_text(spent)
    for row in result["rows"]:
        exp = want[(row["model"], row["context"])]
        for name in ("runs", "completed", "failed", "timeout", "completion_rate", "graded_runs", "mean_violations"):
            assert row[name] == exp[name], (row["model"], row["context"], name)
        assert Decimal(row["mean_cost"]) == exp["mean_cost"]
        assert Decimal(row["total_cost"]) == exp["total_cost"]
        assert row["mean_cost_text"] == cost_text(exp["mean_cost"])
        assert row["total_cost_text"] == cost_text(exp["total_cost"])
        assert query(row["link"]) == {"model": row["model"], "context": row["context"]}
        assert query(row["links"]["model"]) == {"model": row["model"]}
        assert query(row["links"]["context"]) == {"context": row["context"]}
    # Rows read in context order within each model.
    assert [r["context"] for r in result["rows"][:4]] == ["none", "checklist", "guidelines", "guidelines-axe"]
    # Per context level over every model: the same arithmetic on the lines grouped by context only.
    by_context = expected_rows([{**line, "model": "all models"} for line in loaded])
    assert [r["context"] for r in result["by_context"]] == ["none", "checklist", "guidelines", "guidelines-axe"]
    for row in result["by_context"]:
        exp = by_context[("all models", row["context"])]
        for name in ("runs", "completed", "completion_rate", "graded_runs", "mean_violations"):
            assert row[name] == exp[name], (row["context"], name)
        assert Decimal(row["mean_cost"]) == exp["mean_cost"]
        assert row["mean_cost_text"] == cost_text(exp["mean_cost"])
        assert query(row["link"]) == {"context": row["context"]}


@pytest.mark.parametrize("flt", [{"task": "signup-form"}, {"label": "round-2"}, {"model": "cedar-mini", "task": "nav-header"},
                                 {"context": "guidelines"}])
async def test_compare_contexts_filters_narrow_to_the_same_runs(loaded, registry, ctx, flt):
    result = await call(registry, ctx, "compare_contexts", **flt)
    subset = [line for line in loaded if all(line[k] == v for k, v in flt.items())]
    want = expected_rows(subset)
    assert result["filter"] == flt
    assert result["total_runs"] == len(subset) < len(loaded)
    assert {(r["model"], r["context"]) for r in result["rows"]} == set(want)
    for row in result["rows"]:
        exp = want[(row["model"], row["context"])]
        assert (row["runs"], row["completion_rate"], row["mean_violations"], Decimal(row["mean_cost"])) == (
            exp["runs"], exp["completion_rate"], exp["mean_violations"], exp["mean_cost"])
        assert query(row["link"]) == {**flt, "model": row["model"], "context": row["context"]}


async def test_unknown_filter_values_are_errors_listing_valid_values(loaded, registry, ctx):
    with pytest.raises(ToolError) as exc:
        await call(registry, ctx, "compare_contexts", context="full")
    assert "unknown context 'full'" in str(exc.value)
    assert "none, checklist, guidelines, guidelines-axe" in str(exc.value)
    with pytest.raises(ToolError, match="atlas-large, atlas-small, birch-pro, cedar-mini, dune-code"):
        await call(registry, ctx, "list_runs", model="gpt-x")
    with pytest.raises(ToolError, match="valid values: round-1, round-2$"):
        await call(registry, ctx, "top_rules", label="round-9")
    with pytest.raises(ToolError, match="color-contrast"):
        await call(registry, ctx, "list_runs", rule="colour-contrast")
    with pytest.raises(ToolError, match="no run broke the axe rule 'accesskeys'"):
        await call(registry, ctx, "list_runs", rule="accesskeys")
    with pytest.raises(ToolError, match="Extra inputs"):
        await call(registry, ctx, "list_runs", where="1=1")


async def test_list_runs_is_newest_first_filtered_and_limited(loaded, registry, ctx):
    result = await call(registry, ctx, "list_runs", model="birch-pro", context="checklist", limit=5)
    matching = sorted((line for line in loaded if line["model"] == "birch-pro" and line["context"] == "checklist"),
                      key=lambda line: line["started_at"], reverse=True)
    assert [r["run_id"] for r in result["runs"]] == [line["id"] for line in matching[:5]]
    assert result["count"] == 5 and result["more"] is True
    first, line = result["runs"][0], matching[0]
    assert first["cost_text"] == cost_text(Decimal(line["cost_usd"])) and Decimal(first["cost"]) == Decimal(line["cost_usd"])
    assert first["violation_count"] == len((line.get("axe") or {}).get("violations", []))
    assert query(first["link"]) == {"run": first["run_id"]}
    assert query(first["model_link"]) == {"model": "birch-pro"}
    assert query(first["context_link"]) == {"context": "checklist"}

    everything = await call(registry, ctx, "list_runs", task="pricing-table", label="round-2", limit=100)
    want = [line["id"] for line in sorted(loaded, key=lambda x: x["started_at"], reverse=True)
            if line["task"] == "pricing-table" and line["label"] == "round-2"]
    assert [r["run_id"] for r in everything["runs"]] == want and everything["more"] is False


async def test_list_runs_by_rule_returns_exactly_the_runs_that_broke_it(loaded, registry, ctx):
    result = await call(registry, ctx, "list_runs", rule="select-name", limit=100)
    want = {line["id"] for line in loaded if line.get("axe") and any(v["id"] == "select-name" for v in line["axe"]["violations"])}
    assert {r["run_id"] for r in result["runs"]} == want and want


async def test_get_run_returns_the_run_and_its_first_violations(loaded, registry, ctx):
    line = next(x for x in loaded if x.get("axe") and len(x["axe"]["violations"]) >= 3)
    result = await call(registry, ctx, "get_run", run_id=line["id"])
    assert (result["model"], result["context"], result["task"], result["label"], result["outcome"]) == (
        line["model"], line["context"], line["task"], line["label"], "completed")
    assert result["cost_text"] == cost_text(Decimal(line["cost_usd"]))
    assert (result["tokens_in"], result["tokens_out"]) == (line["tokens"]["input"], line["tokens"]["output"])
    assert [v["rule_id"] for v in result["violations"]] == [v["id"] for v in line["axe"]["violations"]]
    for out, src in zip(result["violations"], line["axe"]["violations"]):
        assert out["node_count"] == len(src["nodes"])
        assert out["impact"] == src["impact"]
        assert len(out["first_nodes"]) == min(3, len(src["nodes"]))
        assert out["first_nodes"][0]["target"] == src["nodes"][0]["target"][0]
        assert query(out["rule_link"]) == {"rule": src["id"]}
    with pytest.raises(ToolError, match="no run with id 'run-nope'"):
        await call(registry, ctx, "get_run", run_id="run-nope")


async def test_top_rules_counts_match_the_runs_and_links_keep_the_filter(loaded, registry, ctx):
    flt = {"context": "none", "model": "cedar-mini"}
    result = await call(registry, ctx, "top_rules", limit=5, **flt)
    subset = [line for line in loaded if all(line[k] == v for k, v in flt.items())]
    graded = [line for line in subset if line.get("axe")]
    runs, nodes = Counter(), Counter()
    for line in graded:
        for v in line["axe"]["violations"]:
            runs[v["id"]] += 1
            nodes[v["id"]] += len(v["nodes"])
    ranked = sorted(runs, key=lambda r: (-runs[r], -nodes[r], r))[:5]
    assert result["graded_runs"] == len(graded)
    assert [r["rule_id"] for r in result["rules"]] == ranked
    for row in result["rules"]:
        assert (row["count"], row["nodes"]) == (runs[row["rule_id"]], nodes[row["rule_id"]])
        assert row["share_of_graded_runs"] == round(runs[row["rule_id"]] / len(graded), 4)
        assert query(row["link"]) == {**flt, "rule": row["rule_id"]}
    color = next(r for r in result["rules"] if r["rule_id"] == "color-contrast")
    assert (color["impact"], color["wcag"]) == ("serious", ["1.4.3"])


async def test_top_rules_over_everything_matches_the_store(loaded, registry, ctx, queries):
    result = await call(registry, ctx, "top_rules")
    counts = await queries.rule_counts(limit=10)
    assert [(r["rule_id"], r["count"], r["nodes"]) for r in result["rules"]] == [
        (c.rule_id, c.runs, c.nodes) for c in counts.rules]
    assert result["rules"][0]["rule_id"] == "color-contrast"


async def test_run_tools_need_runs_read(loaded, registry_with, ctx):
    from groundchat.auth.callers import DOCS_READ
    from groundchat.tools.base import ToolRefused

    docs_only = registry_with({DOCS_READ})
    for name in ("compare_contexts", "list_runs", "get_run", "top_rules"):
        with pytest.raises(ToolRefused):
            await docs_only.execute(name, {"run_id": "x"} if name == "get_run" else {}, ctx)
    offered = [t.name for t in await docs_only.offered(ctx.caller)]
    assert offered == ["explain_rule"]


async def test_empty_store_answers_empty_not_an_error(registry, ctx):
    result = await call(registry, ctx, "compare_contexts")
    assert result["rows"] == [] and result["total_runs"] == 0
    assert (await call(registry, ctx, "top_rules"))["rules"] == []
