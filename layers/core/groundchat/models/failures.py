"""Model-call failures, classified once, in one place, for every adapter and path.

The reader sees a short message and the run id; the trace keeps the class, the sanitised reason and
an operator hint chosen from the class. Adapters hand their raw errors (botocore, httpx, an HTTP
status with its body, an error inside a stream) to the functions here, so the same error gets the
same class whichever path met it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

FailureClass = Literal[
    "spend_limit", "auth", "upstream_unreachable", "gateway_unreachable", "gateway", "content_missing", "internal"
]

HINTS: dict[str, str] = {
    "spend_limit": "The provider's own spending limit was reached: raise it with the provider or wait for it to reset.",
    "auth": "The provider refused the credentials: check the key or the IAM role and the model access grant.",
    "upstream_unreachable": "The model provider did not answer, or kept throttling us: check its status, the account's quotas and the region or base URL.",
    "gateway_unreachable": "The gateway could not be reached: check GROUNDCHAT_OPENAI_BASE_URL and the network path.",
    "gateway": "The provider or gateway answered with an error: read the sanitised reason in the trace.",
    "content_missing": "The model stopped without content: see the finish reason and usage (a thinking budget spent, or a filter).",
    "internal": "An error inside groundchat: the trace has the exception class.",
}

READER_MESSAGES: dict[str, str] = {
    "spend_limit": "The model provider's spending limit has been reached.",
    "auth": "The model provider refused our credentials.",
    "upstream_unreachable": "The model provider could not be reached.",
    "gateway_unreachable": "The model gateway could not be reached.",
    "gateway": "The model gateway returned an error.",
    "content_missing": "The model returned no answer.",
    "internal": "Something went wrong while answering.",
}

# Order matters: whole signed URLs go first, so the credentials inside them are removed with them
# rather than leaving a half-redacted address behind.
_SECRET_PATTERNS = [
    (re.compile(r"https?://[^\s\"'<>]*(?:X-Amz-Signature|X-Amz-Credential|X-Amz-Security-Token|Signature=|[?&]sig=|[?&]token=)[^\s\"'<>]*", re.I), "[signed-url]"),
    (re.compile(r"sk-[A-Za-z0-9_\-]{8,}"), "sk-[redacted]"),
    # Eight characters at least, so "the bearer of bad news" stays prose.
    (re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{8,}"), "Bearer [redacted]"),
    (re.compile(r"(?i)(authorization\W{1,3})basic\s+[A-Za-z0-9+/=]{8,}"), r"\1Basic [redacted]"),
    (re.compile(r"\b(?:AKIA|ASIA|AROA|AIDA)[A-Z0-9]{16}\b"), "[aws-access-key]"),
    (re.compile(r"(?i)(aws_secret_access_key|secret[_-]?access[_-]?key|secretkey)(\W{1,3})[A-Za-z0-9/+=]{30,}"), r"\1\2[redacted]"),
    (re.compile(r"(?i)(x-amz-security-token|aws_session_token|session[_-]?token)(\W{1,3})[A-Za-z0-9/+=%]{16,}"), r"\1\2[redacted]"),
    # A bare AWS secret access key is 40 characters of base64: redact any such run on its own.
    (re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])"), "[redacted-40]"),
    (re.compile(r"(?i)(api[_-]?key|x-api-key|authorization)(\"?\s*[:=]\s*\"?)[^\s\",}]{6,}"), r"\1\2[redacted]"),
]


def sanitise(reason: str) -> str:
    """Remove keys, bearer tokens, AWS credentials and signed URLs from a provider's reason."""
    out = str(reason)
    for pattern, replacement in _SECRET_PATTERNS:
        out = pattern.sub(replacement, out)
    return out[:2000]


@dataclass
class ModelFailure(Exception):
    cls: FailureClass
    reason: str
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    retryable: bool = False
    status: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.reason = sanitise(self.reason)
        super().__init__(f"{self.cls}: {self.reason}")

    @property
    def hint(self) -> str:
        return HINTS[self.cls]

    @property
    def reader_message(self) -> str:
        return READER_MESSAGES[self.cls]

    @property
    def retry_after(self) -> float | None:
        """Seconds the provider asked us to wait (Retry-After), where it said."""
        value = self.extra.get("retry_after")
        return float(value) if value is not None else None

    def trace_record(self) -> dict[str, Any]:
        return {
            "class": self.cls,
            "reason": self.reason,
            "hint": self.hint,
            "finish_reason": self.finish_reason,
            "usage": self.usage,
            "status": self.status,
            "attempts": self.extra.get("attempts"),
        }


# The words a provider uses when its own spending limit, not its rate limit, stopped the call.
_SPEND_WORDS = re.compile(r"(?i)quota|spend|credit|budget|billing|payment|insufficient[_ ]funds|balance")


def says_spend_limit(text: str) -> bool:
    return bool(_SPEND_WORDS.search(text or ""))


def from_http_status(status: int, body: str, *, retry_after: float | None = None) -> ModelFailure:
    """An OpenAI-compatible gateway's error status and body, classified.

    Only throttling (429 without spend words) and 5xx are retryable: a 4xx is our request or our
    account, and sending it again changes nothing.
    """
    reason = f"HTTP {status}: {body.strip()[:1000]}"
    extra = {"retry_after": retry_after} if retry_after is not None else {}
    if status in (401, 403):
        return ModelFailure("auth", reason, status=status)
    # 402 Payment Required is a spending limit whatever its body says.
    if status == 402 or (status == 429 and says_spend_limit(body)):
        return ModelFailure("spend_limit", reason, status=status)
    if status == 429 or status >= 500:
        return ModelFailure("gateway", reason, status=status, retryable=True, extra=extra)
    return ModelFailure("gateway", reason, status=status)


# Bedrock's error codes (HTTP errors and in-stream exceptions; the stream names them in camelCase).
_AWS_AUTH = {
    "accessdeniedexception", "unrecognizedclientexception", "expiredtokenexception", "invalidsignatureexception",
    "incompletesignature", "missingauthenticationtokenexception", "missingauthenticationtoken",
    "invalidclienttokenid", "signaturedoesnotmatch",
}
_AWS_RETRYABLE = {
    "throttlingexception", "toomanyrequestsexception", "servicequotaexceededexception", "modelnotreadyexception",
    "serviceunavailableexception", "internalserverexception", "modelstreamerrorexception",
}


def from_aws_error(code: str, message: str, status: int | None = None) -> ModelFailure:
    """A Bedrock error code (from an HTTP error or an exception event in the stream), classified."""
    key = (code or "").lower()
    reason = f"{code}: {message}"
    if key in _AWS_AUTH:
        return ModelFailure("auth", reason, status=status)
    if key in _AWS_RETRYABLE:
        return ModelFailure("upstream_unreachable", reason, status=status, retryable=True)
    # ValidationException, ResourceNotFoundException, ModelErrorException, ModelTimeoutException:
    # the provider answered and asking again the same way will not change its answer.
    return ModelFailure("gateway", reason, status=status)


def _classify_botocore(exc: BaseException) -> ModelFailure | None:
    try:
        from botocore import exceptions as bx
    except ImportError:  # pragma: no cover - boto3 is a core dependency
        return None
    if isinstance(exc, bx.ClientError):
        err = exc.response.get("Error", {})
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        return from_aws_error(err.get("Code", ""), err.get("Message", ""), status if status else None)
    if isinstance(exc, (bx.NoCredentialsError, bx.PartialCredentialsError, bx.CredentialRetrievalError)):
        return ModelFailure("auth", f"{type(exc).__name__}: {exc}")
    if isinstance(exc, (bx.EndpointConnectionError, bx.ConnectTimeoutError, bx.ReadTimeoutError, bx.ConnectionClosedError)):
        return ModelFailure("upstream_unreachable", f"{type(exc).__name__}: {exc}", retryable=True)
    return None


def _classify_httpx(exc: BaseException) -> ModelFailure | None:
    try:
        import httpx
    except ImportError:  # pragma: no cover - httpx is a core dependency
        return None
    if isinstance(exc, httpx.HTTPStatusError):
        return from_http_status(exc.response.status_code, exc.response.text)
    # Could not connect at all: the gateway itself is out of reach. Nothing was sent, so a retry is safe.
    if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)):
        return ModelFailure("gateway_unreachable", f"{type(exc).__name__}: {exc}", retryable=True)
    # Connected, but no answer came in time: the gateway is waiting on the provider behind it.
    if isinstance(exc, httpx.ReadTimeout):
        return ModelFailure("upstream_unreachable", f"{type(exc).__name__}: {exc}")
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)):
        return ModelFailure("gateway", f"{type(exc).__name__}: {exc}")
    return None


def classify(exc: BaseException) -> ModelFailure:
    """The one classifier. Adapters raise ModelFailure themselves where they know better;
    everything else lands here."""
    if isinstance(exc, ModelFailure):
        return exc
    return _classify_botocore(exc) or _classify_httpx(exc) or ModelFailure("internal", f"{type(exc).__name__}: {exc}")
