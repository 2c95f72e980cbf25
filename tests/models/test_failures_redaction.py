"""A provider error that echoes the platform key, whatever its shape, never reaches the trace or the
reader; an upstream's stack trace is kept as a short excerpt without its frames."""
from __future__ import annotations

import json

import httpx
import pytest

from groundchat.models.failures import (
    FRAMES_MARK, UPSTREAM_EXCERPT_CHARS, ModelFailure, classify, from_aws_error, from_http_status, strip_frames,
)
from groundchat.models.openai_compat import OpenAICompatModel
from groundchat.models.retry import RetryPolicy

import tests.models.provider_recordings as rec
from tests.models.conftest import BARE_KEY

GROQ_KEY = "gsk_Q2w3E4r5T6y7U8i9O0pAsDfGhJkL"
GOOGLE_KEY = "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"

PY_TRACE = """Internal Server Error
Traceback (most recent call last):
  File "/srv/gateway/app.py", line 88, in handle
    return await upstream.call(request)
  File "/srv/gateway/upstream.py", line 41, in call
    raise AuthError(key)
           ^^^^^^^^^^^^^
gateway.errors.AuthError: upstream refused the key"""

JAVA_TRACE = """java.lang.IllegalStateException: upstream refused
\tat com.example.gateway.Proxy.forward(Proxy.java:120)
\tat com.example.gateway.Proxy$1.run(Proxy.java:88)
\tat java.base/java.lang.Thread.run(Thread.java:833)
\t... 12 more
Caused by: java.io.IOException: connection reset"""

NODE_TRACE = """Error: upstream timed out
    at Timeout._onTimeout (/app/node_modules/proxy/index.js:42:17)
    at listOnTimeout (node:internal/timers:569:17)
    at async Promise.all (index 0)
    at /app/server.js:10:5"""



def _nowhere(failure: ModelFailure, *secrets: str) -> None:
    record = json.dumps(failure.trace_record())
    for secret in secrets:
        assert secret not in record and secret not in failure.reason and secret not in str(failure)
        assert secret not in failure.reader_message


async def test_a_configured_key_without_a_known_prefix_echoed_by_the_gateway_is_not_in_the_trace(configured):
    body = json.dumps({"error": {"message": f"Incorrect API key provided: {BARE_KEY}.", "code": "invalid_api_key"}}).encode()
    replay = rec.OpenAIReplay((401, body, {}))
    model = OpenAICompatModel("gpt-4.1-mini", base_url="https://gateway.example/v1/", api_key=BARE_KEY,
                              transport=replay.transport, retry=RetryPolicy(attempts=1))
    exchange, frames = await rec.ask(model, "Compare")
    errors = [f.data for f in frames if f.type == "error"]
    assert errors == [{"code": "auth", "message": "The model provider refused our credentials.", "run_id": "run-1",
                       "reason": 'HTTP 401: {"error": {"message": "Incorrect API key provided: [redacted-secret].", '
                                 '"code": "invalid_api_key"}}'}]
    assert BARE_KEY not in json.dumps(exchange.failure)
    assert exchange.failure["class"] == "auth"
    assert exchange.failure["reason"] == 'HTTP 401: {"error": {"message": "Incorrect API key provided: [redacted-secret].", "code": "invalid_api_key"}}'
    assert BARE_KEY not in json.dumps([f.data for f in frames], default=str)


def test_from_http_status_and_classify_redact_the_configured_key(configured):
    failure = from_http_status(403, f"key {BARE_KEY} is not allowed for this model")
    assert failure.reason == "HTTP 403: key [redacted-secret] is not allowed for this model"
    _nowhere(failure, BARE_KEY)
    request = httpx.Request("POST", "https://gateway.example/v1/chat/completions")
    response = httpx.Response(401, text=f"bad key {BARE_KEY}", request=request)
    _nowhere(classify(httpx.HTTPStatusError("401", request=request, response=response)), BARE_KEY)
    _nowhere(classify(RuntimeError(f"client built with {BARE_KEY}")), BARE_KEY)
    _nowhere(from_aws_error("AccessDeniedException", f"denied for {BARE_KEY}"), BARE_KEY)


@pytest.mark.parametrize("key", [GROQ_KEY, GOOGLE_KEY])
@pytest.mark.parametrize("template", ["Invalid API Key: {key}", "Invalid API Key:\n{key}"])
def test_groq_and_google_keys_are_redacted_when_not_configured(key, template):
    failure = from_http_status(401, json.dumps({"error": {"message": template.format(key=key)}}))
    _nowhere(failure, key)
    assert failure.cls == "auth"
    assert "Invalid API Key" in failure.reason


def test_a_python_stack_trace_in_an_upstream_body_is_cut_to_an_excerpt_without_frames():
    failure = from_http_status(500, PY_TRACE + "\n" + "x" * 2000)
    assert failure.reason.startswith("HTTP 500: Internal Server Error\n" + FRAMES_MARK + "\ngateway.errors.AuthError: upstream refused the key\n")
    for frame in ("Traceback (most recent call last)", 'File "/srv/gateway', "line 88", "upstream.call(request)", "^^^"):
        assert frame not in failure.reason
    assert len(failure.reason) <= len("HTTP 500: ") + UPSTREAM_EXCERPT_CHARS
    assert failure.reason.endswith("…")


def test_a_stack_trace_inside_a_json_body_is_removed_too():
    body = json.dumps({"error": {"message": "upstream failed", "stack": PY_TRACE}})
    failure = from_http_status(502, body)
    assert "File " not in failure.reason and "line 41" not in failure.reason and "Traceback" not in failure.reason
    assert "gateway.errors.AuthError: upstream refused the key" in failure.reason


@pytest.mark.parametrize(("trace", "kept"), [
    (JAVA_TRACE, ["java.lang.IllegalStateException: upstream refused", FRAMES_MARK, "Caused by: java.io.IOException: connection reset"]),
    (NODE_TRACE, ["Error: upstream timed out", FRAMES_MARK]),
])
def test_java_and_node_frames_are_removed(trace, kept):
    assert strip_frames(trace).splitlines() == kept


def test_prose_that_starts_with_at_is_not_a_frame():
    text = "Rate limited\nat least one request (of 3) must wait\nat 12:00 the quota resets"
    assert strip_frames(text) == text


def test_a_key_cut_at_the_excerpt_boundary_leaves_no_part_of_it(configured):
    # The cut comes after the redaction: a key straddling the limit is not left half visible.
    body = "e" * (UPSTREAM_EXCERPT_CHARS - 10) + " " + BARE_KEY + " tail"
    failure = from_http_status(500, body)
    assert BARE_KEY[:8] not in failure.reason


def test_the_reader_sees_the_sanitised_reason_bounded_and_only_the_class_of_an_error_of_ours():
    from groundchat.models.failures import READER_REASON_CHARS, ModelFailure, classify

    long = ModelFailure("gateway", "HTTP 503: " + "upstream overloaded; " * 100 + "Authorization: Bearer sk-abcdef0123456789abcdef")
    assert long.reader_reason.startswith("HTTP 503: upstream overloaded;") and len(long.reader_reason) <= READER_REASON_CHARS
    assert "sk-abcdef" not in long.reader_reason and long.reason.startswith(long.reader_reason.rstrip("…"))
    ours = classify(KeyError("table groundchat-prod-conversations has no item c0ffee"))
    assert ours.cls == "internal" and ours.reader_reason == "KeyError" and "groundchat-prod" in ours.reason
