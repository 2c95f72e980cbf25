"""The CLI against a store: grants, tokens, one tool call through the permission check."""
import json

import pytest

from groundchat_cli.main import main


@pytest.fixture
def stack(dynamo, monkeypatch):
    """The CLI's commands read the stack's DynamoDB; here it is moto in-process."""
    import groundchat_cli.stack_address as stack_address
    import groundchat_cli.main as cli
    from groundchat.services import Services

    services = lambda endpoint=None: Services(settings=dynamo.settings, dynamo=dynamo)  # noqa: E731
    monkeypatch.setattr(cli, "_services", services)
    monkeypatch.setattr(stack_address, "stack_services", services)
    return dynamo


def test_users_grant_and_list(stack, capsys):
    assert main(["users", "grant", "alice", "chat.use", "runs.read"]) == 0
    assert main(["users", "grant", "bob", "docs.read"]) == 0
    capsys.readouterr()
    assert main(["users", "list"]) == 0
    assert capsys.readouterr().out.splitlines() == ["alice: chat.use, runs.read", "bob: docs.read"]


def test_unknown_permission_is_refused_and_nothing_written(stack, capsys):
    assert main(["users", "grant", "alice", "runs.write"]) == 2
    assert "unknown permission" in capsys.readouterr().err
    main(["users", "list"])
    assert capsys.readouterr().out == ""


def test_token_verifies_as_that_user(settings, capsys):
    from groundchat.auth.tokens import TokenVerifier

    assert main(["token", "carol"]) == 0
    assert TokenVerifier(settings).verify(capsys.readouterr().out.strip()).id == "carol"


def test_tool_goes_through_the_same_permission_check(stack, capsys):
    from tests.moto_snapshot import sample_loaded

    sample_loaded(stack)
    main(["users", "grant", "alice", "runs.read"])
    capsys.readouterr()
    assert main(["tool", "top_rules", '{"limit": 3}', "--as", "alice"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert len(result["rules"]) == 3 and result["rules"][0]["count"] >= result["rules"][1]["count"]
    assert main(["tool", "top_rules", '{"limit": 3}', "--as", "mallory"]) == 1
    assert "not available" in json.loads(capsys.readouterr().out)["error"]
    assert main(["tool", "top_rules", "{not json", "--as", "alice"]) == 2


def test_tool_list_shows_what_this_user_may_call_and_an_unknown_name_says_so(stack, capsys):
    main(["users", "grant", "alice", "runs.read"])
    capsys.readouterr()
    assert main(["tool", "--list", "--as", "alice"]) == 0
    listed = capsys.readouterr().out.splitlines()
    names = [line.split()[0] for line in listed if not line.startswith("(")]
    assert names == ["compare_contexts", "list_runs", "get_run", "top_rules"]
    assert listed[-1] == "(alice may not call: explain_rule, search_docs, search_my_conversations, show_view)"
    assert main(["tool", "top_rulez", "--as", "alice"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no tool named 'top_rulez'; tools: compare_contexts, list_runs")


def test_eval_answers_asks_through_the_answer_use_case_and_prints_what_each_answer_did(stack, capsys, tmp_path):
    from tests.moto_snapshot import sample_loaded

    sample_loaded(stack)
    main(["users", "grant", "alice", "chat.use", "runs.read", "docs.read", "views.show"])
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"q": "Which model is cheapest?"}\na recipe for banana bread\n')
    capsys.readouterr()
    assert main(["eval", "answers", str(questions), "--as", "alice", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["q"] for r in rows] == ["Which model is cheapest?", "a recipe for banana bread"]
    assert rows[0]["outcome"] == "complete" and rows[0]["tools"] == ["compare_contexts"]
    assert rows[0]["view_try"] == 1  # the offline answerer's view of the figures, accepted at once
    assert rows[1]["tools"] == [] and rows[1]["outcome"] == "complete"
    assert rows[0]["cost"] == rows[1]["cost"] == "0"
    assert rows[0]["weak_support"] == rows[1]["weak_support"] == []
    assert main(["eval", "answers", str(questions), "--as", "alice"]) == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[-1] == ("total: 2 questions, 2 complete, 1 with a view, 0 unverified citations, "
                                        "0 unverified figures, 0 weakly supported citations, cost $0")
