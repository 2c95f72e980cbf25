"""The redactor: configured secret values whatever their shape, known credential shapes whether
configured or not, short secrets left alone, and the trace store and the log both going through it."""
from __future__ import annotations

import io
import json
import time
from urllib.parse import quote

import pytest

from groundchat.config import reset_settings_cache
from tests.models.conftest import BARE_KEY
from groundchat.redaction import redact, redact_value

GROQ_KEY = "gsk_Q2w3E4r5T6y7U8i9O0pAsDfGhJkL"
GOOGLE_KEY = "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"



def test_a_configured_key_with_no_known_prefix_is_redacted(configured):
    out = redact(f"upstream rejected key '{BARE_KEY}' (len 25)")
    assert BARE_KEY not in out
    assert out == "upstream rejected key '[redacted-secret]' (len 25)"


def test_the_configured_key_url_encoded_and_json_escaped_is_redacted_too(monkeypatch):
    secret = 'p@ss/w0rd"with+odd chars'
    monkeypatch.setenv("GROUNDCHAT_OPENAI_API_KEY", secret)
    reset_settings_cache()
    for form in (secret, quote(secret, safe=""), json.dumps(secret)[1:-1]):
        assert redact(f"x {form} y") == "x [redacted-secret] y", form


def test_the_dev_secret_and_the_aws_secret_from_the_environment_are_redacted(monkeypatch):
    aws_secret = "Zq9/Xw8+Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBaZz"[:38]  # not 40: the shape rule must not be what catches it
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", aws_secret)
    monkeypatch.setenv("AWS_SESSION_TOKEN", "IQoJb3JpZ2luX2VjEJr_session_token_value")
    reset_settings_cache()
    dev = "test-secret-for-hs256-signing-0123456789"  # conftest's GROUNDCHAT_DEV_SECRET
    out = redact(f"a={dev} b={aws_secret} c=IQoJb3JpZ2luX2VjEJr_session_token_value")
    assert out == "a=[redacted-secret] b=[redacted-secret] c=[redacted-secret]"


def test_a_new_settings_object_brings_the_new_secret(monkeypatch):
    assert redact(f"k {BARE_KEY}") == f"k {BARE_KEY}"  # not configured, no known shape: kept
    monkeypatch.setenv("GROUNDCHAT_OPENAI_API_KEY", BARE_KEY)
    assert redact(f"k {BARE_KEY}") == f"k {BARE_KEY}"  # read once: the same settings, the same list
    reset_settings_cache()
    assert redact(f"k {BARE_KEY}") == "k [redacted-secret]"


@pytest.mark.parametrize(("secret", "mark"), [
    (GROQ_KEY, "gsk_[redacted]"),
    (GOOGLE_KEY, "AIza[redacted]"),
    ("AKIAIOSFODNN7EXAMPLE", "[aws-access-key]"),
    ("ASIAY34FZKBOKMUTVV7A", "[aws-access-key]"),
    ("xoxb-123456789012-abcdefABCDEF", "xox-[redacted]"),
    ("ghp_" + "a1B2c3D4e5" * 4, "[github-token]"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJl", "[jwt]"),
    ("sk-ant-api03-abcdefghijklmnop", "sk-[redacted]"),
])
def test_known_key_shapes_are_redacted_when_not_configured(secret, mark):
    out = redact(f"provider said: bad credential {secret}.")
    assert secret not in out
    assert out == f"provider said: bad credential {mark}."


@pytest.mark.parametrize(("text", "expected"), [
    ("GET https://generativelanguage.googleapis.com/v1/models?key=opaque-value-123&alt=sse failed",
     "GET https://generativelanguage.googleapis.com/v1/models?key=[redacted]&alt=sse failed"),
    ("https://x.example/cb?page=2&token=opaquetok&api_key=zzz999", "[signed-url]"),
    ("https://x.example/v1?api_key=opaque999&x=1", "https://x.example/v1?api_key=[redacted]&x=1"),
    ('{"client_secret": "abcdefgh1234"}', '{"client_secret": "[redacted]"}'),
])
def test_key_and_token_query_values_are_redacted(text, expected):
    assert redact(text) == expected


def test_short_secrets_do_not_wipe_ordinary_words(monkeypatch):
    monkeypatch.setenv("GROUNDCHAT_OPENAI_API_KEY", "the")
    monkeypatch.setenv("GROUNDCHAT_DEV_SECRET", "answer")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    reset_settings_cache()
    text = "The answer is testing the limits of the theory; the bearer of bad news had a basic key idea."
    assert redact(text) == text


def test_a_key_after_an_escaped_newline_in_a_json_body_is_redacted():
    body = json.dumps({"error": {"message": f"invalid key:\n{GROQ_KEY}\nand {GOOGLE_KEY}"}})
    assert GROQ_KEY in body and "\\ng" in body
    out = redact(body)
    assert GROQ_KEY not in out and GOOGLE_KEY not in out
    assert json.loads(out) == {"error": {"message": "invalid key:\ngsk_[redacted]\nand AIza[redacted]"}}


def test_redact_value_walks_dicts_and_lists_and_keeps_other_values(configured):
    value = {"args": {"q": f"use {BARE_KEY}", "n": 3, "nested": [f"x{GROQ_KEY}", None, 1.5]}, "ok": True}
    assert redact_value(value) == {"args": {"q": "use [redacted-secret]", "n": 3, "nested": ["xgsk_[redacted]", None, 1.5]}, "ok": True}


async def test_a_trace_holding_the_key_in_a_steps_args_comes_back_redacted(configured, dynamo):
    from groundchat.store.traces import TraceStore

    store = TraceStore(dynamo)
    steps = [
        {"kind": "tool", "id": "t1", "name": "lookup", "args": {"q": f"my key is {BARE_KEY}", "aws": "AKIAIOSFODNN7EXAMPLE"},
         "outcome": "ok", "latency_ms": 1.0, "debug": {"url": f"https://api.example/v1?key={GOOGLE_KEY}"}},
    ]
    failure = {"class": "gateway", "reason": f"echo {GROQ_KEY}", "hint": "h"}
    await store.put(run_id="run-r1", caller="alice", conversation_id="c1", started_at=time.time(), outcome="error",
                    steps=steps, failure=failure, question=f"why does {BARE_KEY} fail?")
    trace = await store.get("run-r1", "alice")
    assert trace["steps"][0]["args"] == {"q": "my key is [redacted-secret]", "aws": "[aws-access-key]"}
    assert trace["steps"][0]["debug"] == {"url": "https://api.example/v1?key=[redacted]"}
    assert trace["failure"]["reason"] == "echo gsk_[redacted]"
    # The question is the reader's own text, kept as asked.
    assert trace["question"] == f"why does {BARE_KEY} fail?"
    # Redacted as stored, not only as read.
    stored = await dynamo.run(store.table.get_item, Key={"run_id": "run-r1"})
    assert BARE_KEY not in stored["Item"]["steps"] and GROQ_KEY not in stored["Item"]["failure"]
    assert GOOGLE_KEY not in stored["Item"]["steps"]


def test_log_lines_are_redacted(configured):
    from groundchat.observability import logger

    stream = io.StringIO()
    handler = logger.registered_handler
    handler_stream = handler.setStream(stream)
    try:
        logger.info(f'calling with "{BARE_KEY}"', extra={"auth": f"Bearer {GROQ_KEY}"})
        try:
            raise ValueError(f"bad key {BARE_KEY}")
        except ValueError:
            logger.exception("boom")
    finally:
        handler.setStream(handler_stream)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert BARE_KEY not in stream.getvalue() and GROQ_KEY not in stream.getvalue()
    assert lines[0]["message"] == 'calling with "[redacted-secret]"'
    assert lines[0]["auth"] == "Bearer gsk_[redacted]"
    assert lines[1]["exception"].endswith("ValueError: bad key [redacted-secret]")

