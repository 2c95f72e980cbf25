"""Readers rate answers: the owner on their conversation, a signed-in reader on a shared one, each
once per answer (again replaces it); shown back on the conversation, in the run's trace, in the
operators' export and counts, and gone with the conversation."""
from __future__ import annotations

import csv
import io
import json

import pytest

from groundchat.store.feedback import FeedbackStore
from groundchat_testkit.scripted import ScriptedModel, Step
from tests.chat_function.conftest import parse_sse


@pytest.fixture
def env(make_env):
    from groundchat.auth.callers import CHAT_USE, DOCS_READ, RUNS_READ, TRACES_READ

    model = ScriptedModel([Step(tool_calls=[("compare_contexts", {"context": "full"})]), Step(text="Full context: 3.5 violations.")] * 5)
    return make_env(model, grants={"alice": [CHAT_USE, RUNS_READ, TRACES_READ], "bob": [CHAT_USE], "carol": [DOCS_READ]})


async def answered(client, env, user="alice", conversation_id=None):
    body = {"stream": True, "message": "Which context level is best?", **({"conversation_id": conversation_id} if conversation_id else {})}
    frames = parse_sse((await client.post("/api/chat", json=body, headers=env.token(user))).text)
    start, done = frames[0][1], frames[-1][1]
    return start["conversation_id"], done


def rate(client, env, user, cid, seq, **body):
    return client.post(f"/api/conversations/{cid}/messages/{seq}/feedback", json=body, headers=env.token(user))


async def test_the_owner_rates_an_answer_and_sees_it_on_the_conversation_and_in_its_trace(env):
    async with env.client() as c:
        cid, done = await answered(c, env)
        # question, call, result, answer: the answer's last message is seq 3, and done says so.
        assert done["answer_seq"] == 3
        r = await rate(c, env, "alice", cid, 3, rating="down", reasons=["wrong-number", "other"], text=" the 3.5 is for none ")
        assert r.status_code == 200, r.text
        assert r.json()["feedback"]["reasons"] == ["wrong-number", "other"]
        assert r.json()["feedback"]["text"] == "the 3.5 is for none"
        # Rating again replaces it: one per person per answer.
        assert (await rate(c, env, "alice", cid, 3, rating="up")).status_code == 200
        messages = (await c.get(f"/api/conversations/{cid}", headers=env.token("alice"))).json()["messages"]
        assert [m.get("feedback", {}).get("rating") for m in messages] == [None, None, None, "up"]
        trace = (await c.get(f"/api/traces/{done['run_id']}", headers=env.token("alice"))).json()
        assert [(f["seq"], f["rating"], f["audience"]) for f in trace["feedback"]] == [(3, "up", "owner")]
    assert len(await FeedbackStore(env.services.dynamo).for_conversation(cid)) == 1


async def test_a_reader_rates_only_a_shared_conversation_and_is_counted_apart(env, capsys, monkeypatch):
    async with env.client() as c:
        cid, _ = await answered(c, env)
        # Not shared: someone else's conversation is unknown to them.
        assert (await rate(c, env, "bob", cid, 3, rating="down", reasons=["citation-unsupported"])).status_code == 404
        assert (await c.get(f"/api/conversations/{cid}/feedback", headers=env.token("bob"))).status_code == 404
        assert (await c.post(f"/api/conversations/{cid}/share", headers=env.token("alice"))).status_code == 200
        # Shared: any signed-in person may rate it, even without chat.use; nobody signed out.
        for user in ("bob", "carol"):
            r = await rate(c, env, user, cid, 3, rating="down", reasons=["citation-unsupported"])
            assert r.status_code == 200 and r.json()["feedback"]["audience"] == "reader"
        assert (await c.post(f"/api/conversations/{cid}/messages/3/feedback", json={"rating": "up"})).status_code == 401
        assert (await rate(c, env, "alice", cid, 3, rating="down", reasons=["wrong-number"],
                           text='=HYPERLINK("http://x","y")')).status_code == 200
        mine = (await c.get(f"/api/conversations/{cid}/feedback", headers=env.token("bob"))).json()["feedback"]
        assert list(mine) == ["3"] and mine["3"]["reasons"] == ["citation-unsupported"]
        # The owner's view shows the owner's own rating, never a reader's.
        messages = (await c.get(f"/api/conversations/{cid}", headers=env.token("alice"))).json()["messages"]
        assert messages[3]["feedback"]["reasons"] == ["wrong-number"]

    # The operator's commands, against this store (as `--endpoint` would point them at a stack).
    monkeypatch.setattr("groundchat_cli.stack_address.use_running_stack", lambda endpoint=None: env.settings)
    args = _parse(["feedback", "counts", "--days", "1"])
    assert args.func(args) == 0
    counted = json.loads(capsys.readouterr().out)["by_audience"]
    assert counted == {"owner": {"down": 1, "reason:wrong-number": 1},
                       "reader": {"down": 2, "reason:citation-unsupported": 2}}
    args = _parse(["feedback", "export", "--format", "csv", "--days", "1"])
    assert args.func(args) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    # A reader's words never become a formula in the operator's spreadsheet.
    assert [r["text"] for r in rows if r["person"] == "alice"] == ["'=HYPERLINK(\"http://x\",\"y\")"]
    assert sorted((r["person"], r["audience"], r["reasons"]) for r in rows) == [
        ("alice", "owner", "wrong-number"), ("bob", "reader", "citation-unsupported"), ("carol", "reader", "citation-unsupported")]
    args = _parse(["feedback", "export", "--days", "1"])
    assert args.func(args) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {line["conversation_id"] for line in lines} == {cid} and all(line["seq"] == 3 for line in lines)


def _parse(argv):
    from groundchat_cli.main import build_parser

    return build_parser().parse_args(argv)


@pytest.mark.parametrize("body, says", [
    ({"rating": "up", "reasons": ["wrong-number"]}, "reasons"),
    ({"rating": "down", "reasons": ["wrong-number", "wrong-number"]}, "twice"),
    ({"rating": "down", "reasons": ["made-up"]}, "reasons"),
    ({"rating": "meh"}, "rating"),
    ({"rating": "down", "text": "x" * 501}, "text"),
    ({"rating": "down", "extra": 1}, "extra"),
], ids=["up-with-reasons", "twice", "unknown-reason", "unknown-rating", "long-text", "unknown-field"])
async def test_a_bad_rating_is_a_400_that_says_what_is_wrong_and_stores_nothing(env, body, says):
    async with env.client() as c:
        cid, _ = await answered(c, env)
        r = await rate(c, env, "alice", cid, 3, **body)
        assert r.status_code == 400, r.text
        assert r.json()["error"]["code"] == "bad-request" and says in r.json()["error"]["message"]
    assert await FeedbackStore(env.services.dynamo).for_conversation(cid) == []


async def test_only_an_answer_can_be_rated(env):
    async with env.client() as c:
        cid, _ = await answered(c, env)
        for seq in (0, 1, 2, 4, 99):  # the question, the call, the result, and messages that do not exist
            assert (await rate(c, env, "alice", cid, seq, rating="up")).status_code == 404
        assert (await rate(c, env, "alice", "f" * 32, 3, rating="up")).status_code == 404
        assert (await rate(c, env, "alice", "not-an-id", 3, rating="up")).status_code == 404


async def test_a_wrong_number_or_citation_counts_toward_the_daily_alarm(env, capsys, monkeypatch):
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")  # as on Lambda: EMF lines on stdout
    async with env.client() as c:
        cid, _ = await answered(c, env)
        capsys.readouterr()
        await rate(c, env, "alice", cid, 3, rating="down", reasons=["outdated"])
        quiet = capsys.readouterr().out
        await rate(c, env, "alice", cid, 3, rating="down", reasons=["wrong-passage"])
        loud = capsys.readouterr().out
    def metrics(out):
        return [json.loads(line) for line in out.splitlines() if line.startswith("{") and '"_aws"' in line]

    assert [m["rating"] for m in metrics(quiet) if "AnswerFeedback" in m] == ["down"]
    assert not [m for m in metrics(quiet) if "FeedbackWrongNumberOrCitation" in m]
    alarm = [m for m in metrics(loud) if "FeedbackWrongNumberOrCitation" in m]
    # The alarm's metric, with the one dimension the template's alarm names.
    assert len(alarm) == 1 and alarm[0]["service"] == "groundchat" and alarm[0]["FeedbackWrongNumberOrCitation"] == [1.0]


async def test_the_export_shows_a_readers_control_characters_instead_of_sending_them_to_the_terminal(env, capsys, monkeypatch):
    words = "fine\x1b]0;pwned\x07 \x1b[2J\x00 \u202egnp.exe \u2066x\u2069 \x9b31m\rok\nline two\tend 👩\u200d💻"
    async with env.client() as c:
        cid, _ = await answered(c, env)
        assert (await rate(c, env, "alice", cid, 3, rating="down", reasons=["other"], text=words)).status_code == 200
    monkeypatch.setattr("groundchat_cli.stack_address.use_running_stack", lambda endpoint=None: env.settings)
    args = _parse(["feedback", "export", "--format", "csv", "--days", "1"])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    (row,) = list(csv.DictReader(io.StringIO(out)))
    assert row["text"] == ("fine<U+001B>]0;pwned<U+0007> <U+001B>[2J<U+0000> <U+202E>gnp.exe <U+2066>x<U+2069> "
                           "<U+009B>31m<U+000D>ok\nline two\tend 👩\u200d💻")
    assert not any(ch in out for ch in "\x1b\x07\x00\x9b\u202e\u2066")
    # JSONL keeps the words exactly for a parser, and escaped for a terminal.
    args = _parse(["feedback", "export", "--days", "1"])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["text"] == words.strip()
    assert not any(ch in out for ch in "\x1b\x07\x00\x9b\u202e\u2066") and "\\u202e" in out
