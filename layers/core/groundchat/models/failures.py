"""Model-call failures, classified once, in one place, for every adapter and path.

The reader sees a short message and the run id; the trace keeps the class, the sanitised reason and
an operator hint chosen from the class. Adapters hand their raw errors (botocore, httpx, an HTTP
status with its body, an error inside a stream) to the functions here, so the same error gets the
same class whichever path met it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from groundchat.redaction import redact

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject

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

# The HTTP status of an answer that failed, where its client gets one status for the whole answer
# (the JSON answer): the provider or gateway failing us is a bad gateway (502), a provider that
# cannot be reached or whose own spending limit is spent is unavailable for now (503), ours is 500.
HTTP_STATUSES: dict[str, int] = {
    "spend_limit": 503, "auth": 502, "upstream_unreachable": 503, "gateway_unreachable": 502,
    "gateway": 502, "content_missing": 502, "internal": 500,
}


def http_status(failure_kind: str) -> int:
    """The status for a failure's class (or another failure code of the answer: 500)."""
    return HTTP_STATUSES.get(failure_kind, 500)

# Refusals that come before any generation: no provider bills them.
NEVER_BILLED: frozenset[str] = frozenset({"auth", "spend_limit", "gateway_unreachable"})

# The reason kept in a trace, and the upstream body inside it, are bounded excerpts.
MAX_REASON_CHARS = 2000
# What the reader's error card shows of it: the reason's opening, already sanitised.
READER_REASON_CHARS = 300
UPSTREAM_EXCERPT_CHARS = 500

# Stack frames an upstream (a gateway, a proxy, the provider) printed into its error body: Python
# tracebacks, Java/.NET and Node frames. They say nothing to an operator of ours and may name paths.
_PY_TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):\s*$")
_PY_FRAME = re.compile(r'^\s*File \\?".*?\\?", line \d+')
_OTHER_FRAMES = [
    # Java and .NET: at a.b.C.m(C.java:42), at java.base/java.lang.Thread.run(...), at A.B() in x.cs:line 3
    re.compile(r"^\s*at\s+[\w$/<>]+(?:\.[\w$/<>`]+)+\([^()]*\)(?:\s+in\s+\S.*)?\s*$"),
    re.compile(r"^\s*at\s+(?:[^()\n]*?\s)?\(?[^\s()]+:\d+:\d+\)?\s*$"),  # Node: at f (/app/x.js:1:2)
    re.compile(r"^\s*at\s+(?:async\s+)?\S+\s+\((?:native|index \d+|<anonymous>)\)\s*$"),  # Node, no file
    re.compile(r"^\s*\.\.\. \d+ (?:more|common frames omitted)\s*$"),
]
FRAMES_MARK = "[stack frames removed]"


def strip_frames(text: str) -> str:
    """`text` without stack frames; each run of removed lines leaves one mark."""
    # A body that is JSON carries its trace as one string with escaped newlines.
    text = text.replace("\\r\\n", "\n").replace("\\n", "\n").replace("\\t", "\t")
    kept: list[str] = []
    frame_indent: int | None = None  # inside a Python frame: its source lines are indented deeper
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip())
        if frame_indent is not None and line.strip() and indent > frame_indent:
            continue
        frame_indent = None
        if _PY_FRAME.match(line):
            frame_indent = indent
        elif not (_PY_TRACEBACK.match(line) or any(p.match(line) for p in _OTHER_FRAMES)):
            kept.append(line)
            continue
        if not kept or kept[-1] != FRAMES_MARK:
            kept.append(FRAMES_MARK)
    return "\n".join(kept)


def excerpt(text: str, limit: int = UPSTREAM_EXCERPT_CHARS) -> str:
    """What a trace keeps of text from outside: frames out, secrets redacted, then at most `limit`
    characters. Redacted before the cut, so a cut never leaves half a key behind."""
    out = redact(strip_frames(str(text))).strip()
    return out if len(out) <= limit else out[: limit - 1] + "…"


def sanitise(reason: str) -> str:
    """Remove secrets, credential shapes and stack frames from a provider's reason, and bound it."""
    return excerpt(reason, MAX_REASON_CHARS)


@dataclass
class ModelFailure(Exception):
    cls: FailureClass
    reason: str
    finish_reason: str | None = None
    usage: JsonObject | None = None  # the step's UsageEvent as JSON, where one came
    retryable: bool = False
    status: int | None = None
    extra: dict[str, int | float] = field(default_factory=dict)  # retry_after (seconds), attempts
    # False when the request never left us: no connection was made, so nothing was sent to be billed.
    sent: bool = True

    def __post_init__(self) -> None:
        self.reason = sanitise(self.reason)
        super().__init__(f"{self.cls}: {self.reason}")

    @property
    def never_billed(self) -> bool:
        """Whether the step cannot have been billed: its request never reached the provider, or the
        provider refused it before generating anything (credentials, its own spending limit, a request
        it rejected with a 4xx). A step cut off mid-generation (a read timeout, a broken stream, a 5xx)
        may have been billed and is charged as before."""
        return (not self.sent or self.cls in NEVER_BILLED
                or (self.status is not None and 400 <= self.status < 500 and self.status != 408))

    @property
    def hint(self) -> str:
        return HINTS[self.cls]

    @property
    def reader_message(self) -> str:
        return READER_MESSAGES[self.cls]

    @property
    def reader_reason(self) -> str:
        """The sanitised reason as every reader sees it, bounded. A failure inside groundchat shows
        only its exception's class: its text may name a table, a path or an endpoint of ours."""
        if self.cls == "internal":
            return self.reason.split(":", 1)[0].strip() or "an unexpected error"
        return excerpt(self.reason, READER_REASON_CHARS)

    @property
    def retry_after(self) -> float | None:
        """Seconds the provider asked us to wait (Retry-After), where it said."""
        value = self.extra.get("retry_after")
        return float(value) if value is not None else None

    def trace_record(self) -> JsonObject:
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
    reason = f"HTTP {status}: {excerpt(body)}"
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
    reason = f"{code}: {excerpt(message)}"
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
    if isinstance(exc, (bx.EndpointConnectionError, bx.ConnectTimeoutError)):  # no connection: nothing was sent
        return ModelFailure("upstream_unreachable", f"{type(exc).__name__}: {exc}", retryable=True, sent=False)
    if isinstance(exc, (bx.ReadTimeoutError, bx.ConnectionClosedError)):
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
        return ModelFailure("gateway_unreachable", f"{type(exc).__name__}: {exc}", retryable=True, sent=False)
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
