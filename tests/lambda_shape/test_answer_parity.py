"""One product: what a reader is given through the packaged chat function (its layers from /opt, the
model layer's embedding model, the real Web Adapter and emulator, the API Gateway stand-in) is what
the same app gives in-process, as `make run` serves it. For a fixed set of questions (two on WCAG,
two on the EAA, an axe rule, a data question and a follow-up; tests/lambda_shape/data), both answer
with the offline answerer over the same real index and the same runs, and each answer has the same
tool calls, the same verified refs and the same citation-support state; document answers are cited
and their support is checked (the model runs in the function, not only here)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import pytest

from groundchat_cli.apigw_rest import RestApiStandIn
from groundchat_cli.local_lambda import load_template
from tests.lambda_shape.local_stack import (DEV_SECRET, build_package, chat_env, frames, local_dynamo,
                                            require_local_lambda, start_function, token)

QUESTIONS = json.loads((Path(__file__).parent / "data" / "parity_questions.json").read_text(encoding="utf-8"))["questions"]
STREAM = {"accept": "text/event-stream"}


def reader_view(got: list[tuple[str, dict]]) -> dict:
    """What the reader is given, minus what differs by run (ids, times): the tool calls and whether
    each found something, the verified refs, the support state and each support verdict."""
    calls = [(f["name"], json.dumps(f["args"], sort_keys=True)) for t, f in got if t == "tool-call"]
    outcomes = [(f["name"], (f.get("result") or {}).get("outcome") if isinstance(f.get("result"), dict) else None,
                 "error" in f and f["error"] is not None) for t, f in got if t == "tool-result"]
    citations = next((f for t, f in got if t == "citations"), {})
    return {
        "calls": calls,
        "outcomes": outcomes,
        "verified": sorted(str(s.get("ref") or s.get("key")) for s in citations.get("sources", [])),
        "unverified": sorted(json.dumps(u, sort_keys=True) for u in citations.get("unverified", [])),
        "support_state": citations.get("support_state", "nothing-to-check"),
        "support": sorted((s["ref"], s["verdict"]) for s in citations.get("support", [])),
        "done": next((f["reason"] for t, f in got if t == "done"), None),
    }


def ask_all(post) -> dict[str, dict]:
    """Every question, a follow-up in its first question's conversation; `post(body)` gives frames."""
    conversations: dict[str, str] = {}
    views = {}
    for q in QUESTIONS:
        body = {"message": q["text"]}
        if q.get("follows"):
            body["conversation_id"] = conversations[q["follows"]]
        got = post(body)
        conversations[q["id"]] = next(f["conversation_id"] for t, f in got if t == "start")
        views[q["id"]] = reader_view(got)
    return views


@pytest.fixture(scope="module")
def shared_state(tmp_path_factory, real_index):
    """The real index in a home both sides read, and one DynamoDB (moto's server) with alice's grants
    and a slice of the sample runs for the data question."""
    tools = require_local_lambda()
    root = tmp_path_factory.mktemp("parity")
    home = root / "home"
    home.mkdir()
    shutil.copy(real_index["path"], home / "index.sqlite")
    with local_dynamo() as db:
        from groundchat.config import Settings
        from groundchat.store.dynamo import Dynamo
        from tests.chat_function.page_support import import_runs, sample_slice

        import_runs(Dynamo(Settings(dynamodb_endpoint=db.endpoint)), sample_slice())
        yield {"tools": tools, "root": root, "home": home, "db": db}


@pytest.fixture(scope="module")
def packaged(shared_state):
    template = load_template()
    root = shared_state["root"]
    build = build_package(root, shared_state["tools"])
    chat = start_function(template, "ChatFunction", build, root / "chat", chat_env(shared_state["db"].endpoint, shared_state["home"]))
    api = RestApiStandIn(template, {"ChatFunction": chat}).start()
    try:
        with httpx.Client(base_url=api.stage_url, timeout=300) as client:
            def post(body):
                with client.stream("POST", "/api/chat", headers={**token(), **STREAM}, json=body) as r:
                    assert r.status_code == 200, chat.log()
                    return frames(r.iter_lines())

            yield {"views": ask_all(post), "chat": chat}
    finally:
        api.stop()
        chat.stop()


@pytest.fixture(scope="module")
def in_process(shared_state):
    from fastapi.testclient import TestClient

    from chat_function.app import create_app
    from groundchat.config import Settings
    from groundchat.services import build_services

    env = chat_env(shared_state["db"].endpoint, shared_state["home"])
    settings = Settings(home=env["GROUNDCHAT_HOME"], dynamodb_endpoint=env["GROUNDCHAT_DYNAMODB_ENDPOINT"],
                        dev_secret=DEV_SECRET, auth_mode="dev", model="offline", search_backend="embedded", mode="private")
    with TestClient(create_app(build_services(settings))) as client:
        def post(body):
            with client.stream("POST", "/api/chat", headers={**token(), **STREAM}, json=body) as r:
                assert r.status_code == 200
                return frames(r.iter_lines())

        yield {"views": ask_all(post)}


@pytest.mark.parametrize("question", [q["id"] for q in QUESTIONS])
def test_the_packaged_answer_gives_the_reader_what_make_run_gives(packaged, in_process, question):
    assert packaged["views"][question] == in_process["views"][question], packaged["chat"].log()[-4000:]


@pytest.mark.parametrize("question", [q["id"] for q in QUESTIONS if q["cites"]])
def test_document_answers_are_cited_and_their_support_checked_in_the_function(packaged, question):
    view = packaged["views"][question]
    assert view["done"] == "complete"
    assert view["verified"], view
    assert view["support_state"] == "checked", view
    assert all(not failed and outcome != "unavailable" for _, outcome, failed in view["outcomes"]), view


def test_the_data_question_calls_a_data_tool_through_the_function(packaged):
    view = packaged["views"]["data"]
    assert view["done"] == "complete"
    assert any(name in ("compare_contexts", "top_rules", "list_runs") for name, _ in view["calls"]), view
