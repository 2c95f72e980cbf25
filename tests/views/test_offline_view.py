"""The offline answerer shows a view of compare_contexts' figures when the caller may see views."""
from groundchat.auth.callers import ALL_PERMISSIONS, VIEWS_SHOW
from groundchat.offline.answerer import DISCLAIMER, OfflineAnswerer


async def test_which_context_is_best_gets_a_grounded_view_and_the_same_text(ask):
    answer = await ask(OfflineAnswerer(), "Which context level is best?")
    assert [f.type for f in answer.frames] == [
        "start", "step", "tool-call", "tool-result", "step", "step", "tool-call", "tool-result", "view", "step",
        "step", "text", "step", "done"]
    by_context = answer.results("compare_contexts")[0]["result"]["by_context"]
    view = answer.of("view")[0]
    table, form = view["parts"]
    assert table["columns"] == ["Context", "Runs", "Completion", "Violations per run", "Cost per run"]
    assert table["rows"][0] == [by_context[0]["context"], by_context[0]["runs"],
                                f"{by_context[0]['completion_rate'] * 100:.1f}%", by_context[0]["mean_violations"],
                                by_context[0]["mean_cost_text"]]
    assert len(table["rows"]) == len(by_context)
    assert form["action"] == "open-runs"
    assert [o["value"] for o in form["fields"][0]["options"]] == [r["context"] for r in by_context]
    assert answer.exchange.annotations["views"] == [view]

    without = await ask(OfflineAnswerer(), "Which context level is best?", grants=[p for p in ALL_PERMISSIONS if p != VIEWS_SHOW])
    assert answer.of("text") == without.of("text")
    assert without.frames[-1].data["reason"] == answer.frames[-1].data["reason"] == "complete"
    assert without.of("view") == [] and "show_view" not in [d["name"] for d in without.of("tool-call")]
    assert DISCLAIMER in answer.of("text")[0]["text"]


async def test_other_questions_show_no_view(ask):
    answer = await ask(OfflineAnswerer(), "What do agents get wrong most often?")
    assert [d["name"] for d in answer.of("tool-call")] == ["top_rules"]
    assert answer.of("view") == []
