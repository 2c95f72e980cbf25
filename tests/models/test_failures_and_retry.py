"""The one classifier, the sanitiser and the one retry policy."""
from __future__ import annotations

import httpx
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, EventStreamError, NoCredentialsError

from groundchat.models.failures import HINTS, READER_MESSAGES, ModelFailure, classify, from_http_status, sanitise
from groundchat.models.retry import RetryPolicy, stream_with_retries

OPENAI_KEY = "sk-proj-Zx8VbQ2mN4kL7pR1tY6uW3eA"
BEARER = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJl"
AWS_ACCESS_KEY = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
PRESIGNED = (
    "https://groundchat-logs.s3.eu-west-1.amazonaws.com/run/42.json?X-Amz-Algorithm=AWS4-HMAC-SHA256"
    "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20240601%2Feu-west-1%2Fs3%2Faws4_request&X-Amz-Date=20240601T000000Z"
    "&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=9f2c0e0a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e"
)


def test_sanitiser_removes_keys_tokens_aws_credentials_and_signed_urls():
    reason = (
        f"upstream said: invalid key {OPENAI_KEY}; request had Authorization: Bearer {BEARER}; "
        f"aws_access_key_id={AWS_ACCESS_KEY} aws_secret_access_key={AWS_SECRET}; bare secret {AWS_SECRET}; "
        f"see {PRESIGNED} for the log. Status 401."
    )
    clean = sanitise(reason)
    for secret in (OPENAI_KEY, BEARER, AWS_ACCESS_KEY, AWS_SECRET, "X-Amz-Signature", "9f2c0e0a0b1c2d3e", "groundchat-logs.s3"):
        assert secret not in clean, secret
    # What is left still explains the failure.
    assert clean.startswith("upstream said: invalid key sk-[redacted]")
    assert "[signed-url] for the log. Status 401." in clean


def test_a_failure_sanitises_its_reason_on_creation():
    failure = ModelFailure("auth", f"Incorrect API key provided: {OPENAI_KEY}")
    assert OPENAI_KEY not in failure.reason and OPENAI_KEY not in str(failure)
    assert failure.trace_record()["hint"] == HINTS["auth"]
    assert failure.reader_message == READER_MESSAGES["auth"]


def test_sanitiser_leaves_ordinary_words_alone():
    text = "The model stopped: max_tokens after a basic understanding of the bearer of bad news."
    assert sanitise(text) == text


@pytest.mark.parametrize(
    ("status", "body", "cls", "retryable"),
    [
        (401, "invalid key", "auth", False),
        (403, "model not allowed", "auth", False),
        (402, "Insufficient credits", "spend_limit", False),
        (402, "Payment required", "spend_limit", False),
        (429, "Budget has been exceeded! Current cost: 10.2, Max budget: 10.0", "spend_limit", False),
        (429, "Monthly spend limit reached", "spend_limit", False),
        (429, "Rate limit reached for requests per min", "gateway", True),
        (500, "boom", "gateway", True),
        (503, "upstream overloaded", "gateway", True),
        (400, "messages: tool_call_id not found", "gateway", False),
        (404, "model not found", "gateway", False),
    ],
)
def test_http_statuses(status, body, cls, retryable):
    failure = from_http_status(status, body)
    assert (failure.cls, failure.retryable, failure.status) == (cls, retryable, status)


def _client_error(code: str, status: int, message: str = "m") -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": message}, "ResponseMetadata": {"HTTPStatusCode": status}}, "ConverseStream")


@pytest.mark.parametrize(
    ("exc", "cls", "retryable"),
    [
        (_client_error("AccessDeniedException", 403), "auth", False),
        (_client_error("UnrecognizedClientException", 403), "auth", False),
        (_client_error("ThrottlingException", 429), "upstream_unreachable", True),
        (_client_error("ServiceUnavailableException", 503), "upstream_unreachable", True),
        (_client_error("InternalServerException", 500), "upstream_unreachable", True),
        (_client_error("ModelTimeoutException", 408), "gateway", False),
        (_client_error("ValidationException", 400), "gateway", False),
        (_client_error("ResourceNotFoundException", 404), "gateway", False),
        (EventStreamError({"Error": {"Code": "throttlingException", "Message": "slow down"}}, "ConverseStream"), "upstream_unreachable", True),
        (EventStreamError({"Error": {"Code": "validationException", "Message": "bad"}}, "ConverseStream"), "gateway", False),
        (EndpointConnectionError(endpoint_url="https://bedrock-runtime.eu-west-1.amazonaws.com"), "upstream_unreachable", True),
        (NoCredentialsError(), "auth", False),
        (httpx.ConnectError("refused"), "gateway_unreachable", True),
        (httpx.ReadTimeout("slow"), "upstream_unreachable", False),
        (ValueError("a bug"), "internal", False),
    ],
)
def test_classifier(exc, cls, retryable):
    failure = classify(exc)
    assert (failure.cls, failure.retryable) == (cls, retryable)


def test_classify_keeps_a_failure_the_adapter_already_typed():
    failure = ModelFailure("content_missing", "nothing", finish_reason="max_tokens", usage={"output_tokens": 3000})
    assert classify(failure) is failure
    assert failure.trace_record()["finish_reason"] == "max_tokens"


class Attempts:
    """A stream factory that fails with the given failures, then yields 'ok'."""

    def __init__(self, *failures: ModelFailure) -> None:
        self.failures = list(failures)
        self.opened = 0

    async def __call__(self):
        self.opened += 1
        if self.failures:
            raise self.failures.pop(0)
        yield "ok"


def quick(attempts: int = 4, time_limit: float = 90.0, clock=None, sleeps=None) -> RetryPolicy:
    async def sleep(seconds: float) -> None:
        if sleeps is not None:
            sleeps.append(seconds)

    kwargs = {"clock": clock} if clock else {}
    return RetryPolicy(attempts=attempts, time_limit=time_limit, sleep=sleep, **kwargs)


async def test_retryable_failures_are_retried_until_success():
    sleeps: list[float] = []
    stream = Attempts(from_http_status(503, "x"), from_http_status(429, "slow down"))
    assert [e async for e in stream_with_retries(stream, quick(sleeps=sleeps))] == ["ok"]
    assert stream.opened == 3
    assert len(sleeps) == 2 and sleeps[1] <= 1.0


async def test_a_4xx_is_never_retried():
    stream = Attempts(from_http_status(400, "bad request"))
    with pytest.raises(ModelFailure) as caught:
        _ = [e async for e in stream_with_retries(stream, quick())]
    assert stream.opened == 1
    assert caught.value.extra["attempts"] == 1


async def test_no_wait_passes_the_time_limit():
    now = [0.0]
    stream = Attempts(*(from_http_status(503, "x") for _ in range(5)))

    def clock() -> float:
        now[0] += 4.0  # each look at the clock finds four more seconds gone
        return now[0]

    with pytest.raises(ModelFailure):
        _ = [e async for e in stream_with_retries(stream, quick(attempts=10, time_limit=10.0, clock=clock))]
    assert stream.opened < 5


def test_backoff_grows_and_is_capped():
    policy = RetryPolicy(base_delay=0.5, max_delay=4.0)
    for attempt, ceiling in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (8, 4.0)]:
        delay = policy.delay(attempt)
        assert ceiling / 2 <= delay <= ceiling
    assert policy.delay(1, retry_after=7.0) == 7.0
