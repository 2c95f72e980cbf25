"""One product, measured: a never-read retrieval set asked of the packaged chat function (its
layers from /opt, the model layer's embedding model, the real Web Adapter and emulator, the API
Gateway stand-in) as a client asks it, over the MCP door's search_docs, scores what the same search
scores in-process (`groundchat eval retrieval`), to the third decimal."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from groundchat_cli.apigw_rest import RestApiStandIn
from groundchat_cli.local_lambda import load_template
from groundchat_cli.mcp_search import McpSearch
from groundchat_cli.retrieval_eval import evaluate, load_questions
from tests.lambda_shape.local_stack import (DEV_SECRET, build_package, chat_env, local_dynamo, require_local_lambda,
                                            start_function)

# Never read (tests/eval/README.md): written blind, run once to report. Its misses are not printed here.
NEVER_READ_SET = Path(__file__).resolve().parents[1] / "eval" / "users_words_eleventh.jsonl"


def _figures(report: dict) -> dict:
    return {"overall": report["overall"], "per_source": report["per_source"], "paragraph": report.get("paragraph")}


@pytest.fixture(scope="module")
def home(tmp_path_factory, real_index):
    home = tmp_path_factory.mktemp("retrieval") / "home"
    home.mkdir()
    shutil.copy(real_index["path"], home / "index.sqlite")
    return home


@pytest.fixture(scope="module")
def through_lambda(home):
    tools = require_local_lambda()
    root = home.parent
    with local_dynamo() as db:
        template = load_template()
        build = build_package(root, tools)
        chat = start_function(template, "ChatFunction", build, root / "chat", chat_env(db.endpoint, home))
        api = RestApiStandIn(template, {"ChatFunction": chat}).start()
        try:
            from groundchat.auth.tokens import issue_dev_token
            from groundchat.config import Settings

            with McpSearch(api.stage_url, issue_dev_token(Settings(dev_secret=DEV_SECRET), "alice")) as search:
                yield {"report": evaluate(search, load_questions(NEVER_READ_SET), leg="hybrid"), "chat": chat}
        finally:
            api.stop()
            chat.stop()


@pytest.fixture(scope="module")
def in_process(home):
    """`groundchat eval retrieval --leg hybrid` over the same index: the service the CLI opens."""
    from groundchat.config import Settings
    from groundchat.search import open_default_search

    service = open_default_search(Settings(home=str(home), search_backend="embedded"))
    return evaluate(service, load_questions(NEVER_READ_SET), leg="hybrid")


def test_a_never_read_set_scores_through_the_packaged_function_what_it_scores_in_process(through_lambda, in_process):
    got = through_lambda["report"]
    assert got["overall"]["n"] == in_process["overall"]["n"] == len(load_questions(NEVER_READ_SET))
    assert _figures(got) == _figures(in_process), through_lambda["chat"].log()[-2000:]
    assert got["overall"]["hit@5"] > 0.5  # the model layer's search, not an empty or failing one
