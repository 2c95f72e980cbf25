"""Before the first question, the offline answerer says it is answering, what it can and cannot do and
the one setting that brings a language model: in the status the page shows above its form, in the JSON
answer's debug, and in `groundchat try`."""
from __future__ import annotations

import httpx

from groundchat.offline.answerer import OfflineAnswerer
from groundchat.offline.notice import OFFLINE_NOTICE
from groundchat_testkit.scripted import ScriptedModel, Step


def test_the_notice_names_what_it_is_what_it_does_not_do_and_the_setting():
    assert OFFLINE_NOTICE.startswith("The offline answerer is answering")
    assert "not a language model" in OFFLINE_NOTICE and "cannot" in OFFLINE_NOTICE
    assert "GROUNDCHAT_MODEL" in OFFLINE_NOTICE


async def test_the_status_and_the_json_answer_carry_it_when_the_offline_answerer_answers(make_env):
    env = make_env(OfflineAnswerer())
    async with env.client() as c:
        status = (await c.get("/api/chat/status")).json()
        r = await c.post("/api/chat", json={"message": "hello", "stream": False}, headers=env.token("alice"))
    assert status["answerer_notice"] == OFFLINE_NOTICE
    assert r.status_code == 200, r.text
    debug = r.json()["debug"]
    assert (debug["answerer"], debug["answerer_notice"]) == ("offline", OFFLINE_NOTICE)


async def test_another_model_has_no_notice(make_env):
    env = make_env(ScriptedModel([Step(text="Hello.")]))
    async with env.client() as c:
        status = (await c.get("/api/chat/status")).json()
        r = await c.post("/api/chat", json={"message": "hello", "stream": False}, headers=env.token("alice"))
    assert "answerer_notice" not in status
    debug = r.json()["debug"]
    assert debug["answerer"] is None and debug["answerer_notice"] is None


def test_try_prints_it_before_the_first_answer(make_env, capsys):
    from groundchat_cli.client import ask_all
    from tests.chat_function.test_disconnect import serve_in_thread

    env = make_env(OfflineAnswerer())
    server, thread, url = serve_in_thread(env.app)
    try:
        assert ask_all(url, "alice", ["hello"]) == 0
    finally:
        server.should_exit = True
        thread.join(5)
    out = capsys.readouterr().out
    assert out.index(OFFLINE_NOTICE) < out.index("hello")
