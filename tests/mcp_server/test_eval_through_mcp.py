"""`groundchat eval retrieval --url`: the retrieval figures of a running app, asked over its MCP door
as a client asks, equal the figures of the same search in-process; a search that could not run
stops the measurement with the app's reason instead of counting as a miss."""
from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

import pytest

from groundchat_cli.mcp_search import McpSearch, RemoteSearchFailed, narrowing, searched
from groundchat_cli.retrieval_eval import evaluate, load_questions
from tests.mcp_server.conftest import small_docs, started

QUESTIONS = [
    {"q": "how big must pointer targets be", "source": "wcag22", "gold": ["2.5.8"]},
    {"q": "contrast ratio of words against the background", "source": "wcag22", "gold": ["1.4.3"]},
    {"q": "which products may sellers offer", "source": "eaa", "gold": ["Article 4"]},
    {"q": "the cost per run of a context level", "source": "wcag22", "gold": ["4.1.2"]},  # not indexed: a miss
]


def test_the_figures_through_the_mcp_door_are_the_in_process_figures(serve, tmp_path):
    served = asyncio.run(started(serve()))
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(json.dumps(q) for q in QUESTIONS), encoding="utf-8")
    questions = load_questions(path)
    here = small_docs(tmp_path / "here")
    from groundchat.auth.tokens import issue_dev_token

    with McpSearch(served.url, issue_dev_token(served.services.settings, "dora")) as remote:
        through = [evaluate(remote, questions, k=k, include_graph=graph) for k, graph in ((5, True), (2, False))]
    in_process = [evaluate(here, questions, k=k, include_graph=graph) for k, graph in ((5, True), (2, False))]
    for a, b in zip(through, in_process):
        assert (a["overall"], a["per_source"]) == (b["overall"], b["per_source"])
        assert [m["q"] for m in a["misses"]] == [m["q"] for m in b["misses"]]
    assert through[0]["overall"]["n"] == 4 and 0 < through[0]["overall"]["hit@5"] < 1


def test_only_what_differs_from_the_deployments_search_is_asked():
    assert narrowing(None, True, True, None) == {}
    assert narrowing(5, True, True, True) == {"top_k": 5}
    assert narrowing(5, False, True, False) == {"top_k": 5, "include_vector": False, "include_graph": False}


def _result(structured=None, is_error=False, text=""):
    return SimpleNamespace(content=[SimpleNamespace(text=text)], is_error=is_error, structured_content=structured)


def test_a_search_that_could_not_run_or_was_refused_is_never_a_miss():
    with pytest.raises(RemoteSearchFailed, match="could not run: embedding_unavailable"):
        searched(_result({"outcome": "unavailable", "reason": "embedding_unavailable", "excerpts": []}))
    with pytest.raises(RemoteSearchFailed, match="refused the search: error: spend-cap"):
        searched(_result(is_error=True, text="error: spend-cap: reached"))
    empty = searched(_result({"outcome": "empty", "excerpts": []}))
    assert (empty.outcome, empty.passages) == ("empty", [])


def test_the_command_refuses_what_only_the_in_process_search_can_run(capsys):
    from groundchat_cli.main import main

    assert main(["eval", "retrieval", "x.jsonl", "--url", "http://127.0.0.1:9", "--leg", "bm25"]) == 2
    assert "--leg bm25 is for the search in this process" in capsys.readouterr().err
    assert main(["eval", "retrieval", "x.jsonl", "--url", "--through-router"]) == 2
