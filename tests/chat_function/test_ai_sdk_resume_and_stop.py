"""The AI SDK's own chat (AbstractChat over DefaultChatTransport, what useChat wraps) resumes an
answer after a reload (`useChat({ resume: true })`: GET <api>/<id>/stream) and reads a stopped
answer's `abort`; the resume route answers 204 when nothing is in progress."""
from __future__ import annotations

import threading
import time

import httpx
import pytest

from groundchat.auth.callers import CHAT_USE, RUNS_READ
from groundchat.auth.tokens import issue_dev_token
from groundchat_testkit.scripted import Step
from groundchat_testkit.ai_sdk import AI_VERSIONS
from tests.chat_function.ai_sdk_support import Served, new_chat_id, parts_of, read_with_sdk, require_ai_sdk, text_of
from tests.chat_function.test_reconnect_and_stop import GatedModel, gated_tool

GRANTS = {"alice": [CHAT_USE, RUNS_READ], "bob": [CHAT_USE, RUNS_READ]}


# The current major and the one before it: a front end on either reads the same stream.
@pytest.fixture(scope="module", params=sorted(AI_VERSIONS, reverse=True), ids=lambda major: f"ai{major}")
def sdk(request):
    return require_ai_sdk(request.param)


@pytest.fixture
def served():
    started = Served()
    yield started
    started.stop()


def _asked_in_background(sdk, url, token, chat_id, question) -> dict:
    """The first page's chat, asking; what it read lands in the returned dict when it ends."""
    out: dict = {}

    def ask() -> None:
        out.update(read_with_sdk(sdk, url, token, chat_id, [question], last_only=True))

    thread = threading.Thread(target=ask, daemon=True)
    thread.start()
    out["thread"] = thread
    return out


def _noting_resumes(app, seen: threading.Event):
    """The app, noting when the SDK's resume request (GET .../stream) arrives."""
    async def noting(scope, receive, send):
        if scope["type"] == "http" and scope["method"] == "GET" and scope["path"].endswith("/stream"):
            seen.set()
        await app(scope, receive, send)

    return noting


def _wait_running(client: httpx.Client, chat_id: str) -> None:
    for _ in range(400):
        r = client.get(f"/api/conversations/{chat_id}/answer")
        if r.status_code == 200 and r.json()["state"] == "running":
            return
        time.sleep(0.05)
    raise AssertionError("the answer never started")


def test_a_reloaded_page_resumes_the_answer_in_progress_with_its_steps(sdk, served, make_env):
    model = GatedModel([Step(tool_calls=[("compare_contexts", {})]), Step(text="Full context is best: 3.5 violations.")])
    gate = threading.Event()
    env = make_env(model, tools=[gated_tool(gate)], grants=GRANTS)
    resuming = threading.Event()
    url, chat_id = served.url(_noting_resumes(env.app, resuming)), new_chat_id()
    token = issue_dev_token(env.settings, "alice")
    model.release(0)
    first_page = _asked_in_background(sdk, url, token, chat_id, "Which context level is best?")
    with httpx.Client(base_url=url, headers={"authorization": f"Bearer {token}"}, timeout=30) as client:
        _wait_running(client, chat_id)

        def release_soon() -> None:
            assert resuming.wait(60)  # the reloaded page is waiting on the answer: now let it end
            time.sleep(0.2)
            gate.set()
            model.release(1)

        threading.Thread(target=release_soon, daemon=True).start()
        # The reload: a new chat with the same id resumes, reading the answer it did not ask.
        resumed = read_with_sdk(sdk, url, token, chat_id, [], resume=True)
        after = client.get(f"/api/ai-sdk/chat/{chat_id}/stream")
        other = client.get(f"/api/ai-sdk/chat/{chat_id}/stream", headers={"authorization": f"Bearer {issue_dev_token(env.settings, 'bob')}"})
    first_page["thread"].join(60)

    [turn] = resumed["turns"]
    assert (turn["status"], turn["error"]) == ("ready", None)
    message = turn["message"]
    assert text_of(message) == "Full context is best: 3.5 violations."
    [compare] = parts_of(message, "tool-compare_contexts")
    assert compare["state"] == "output-available" and compare["output"]["rows"][0]["mean_violations"] == 3.5
    assert [c for c in turn["chunks"] if c.endswith("-step")] == ["start-step", "finish-step", "start-step", "finish-step"]
    assert turn["chunks"][0] == "start" and turn["chunks"][-1] == "finish"
    assert message["metadata"]["done"] == "complete"
    assert text_of(first_page["turns"][0]["message"]) == text_of(message)  # the same answer, read twice
    assert after.status_code == 204  # ended: nothing left to resume
    assert other.status_code == 404  # someone else's chat is no one's
    assert model.calls == 2  # the resume asked the store, never the model


def test_a_stopped_answer_ends_with_the_sdks_abort(sdk, served, make_env):
    model = GatedModel([Step(tool_calls=[("compare_contexts", {})]), Step(text="never said")])
    gate = threading.Event()
    env = make_env(model, tools=[gated_tool(gate)], grants=GRANTS)
    url, chat_id = served.url(env.app), new_chat_id()
    token = issue_dev_token(env.settings, "alice")
    model.release(0)
    page = _asked_in_background(sdk, url, token, chat_id, "Which context level is best?")
    with httpx.Client(base_url=url, headers={"authorization": f"Bearer {token}"}, timeout=30) as client:
        _wait_running(client, chat_id)
        assert client.post(f"/api/conversations/{chat_id}/stop").status_code == 202  # the reader pressed Stop
        gate.set()
        model.release(1)
        page["thread"].join(60)
    [turn] = page["turns"]
    assert "abort" in turn["chunks"] and turn["chunks"][-1] == "finish"
    assert turn["message"]["metadata"]["done"] == "stopped"
    assert model.calls == 1  # the step after the stop never ran


def test_nothing_in_progress_is_a_204_and_an_unknown_chat_a_404(make_env):
    env = make_env(GatedModel([Step(text="x")]), grants=GRANTS)
    token = {"authorization": f"Bearer {issue_dev_token(env.settings, 'alice')}"}
    import asyncio

    async def ask() -> tuple[int, int, int]:
        async with env.client() as c:
            unknown = await c.get(f"/api/ai-sdk/chat/{new_chat_id()}/stream", headers=token)
            malformed = await c.get("/api/ai-sdk/chat/not-an-id/stream", headers=token)
            anonymous = await c.get(f"/api/ai-sdk/chat/{new_chat_id()}/stream")
            return unknown.status_code, malformed.status_code, anonymous.status_code

    assert asyncio.run(ask()) == (404, 404, 401)
