"""Model-call failures, classified once, in one place, for every adapter and path.

The reader sees a short message and the run id; the trace keeps the class, the sanitised reason and
an operator hint chosen from the class.
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
    "upstream_unreachable": "The model provider did not answer: check its status and the region or base URL.",
    "gateway_unreachable": "The gateway could not be reached: check GROUNDCHAT_OPENAI_BASE_URL and the network path.",
    "gateway": "The gateway answered with an error: read the sanitised reason in the trace.",
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

_SECRET_PATTERNS = [
    (re.compile(r"sk-[A-Za-z0-9_\-]{8,}"), "sk-[redacted]"),
    (re.compile(r"(?i)bearer\s+[A-Za-z0-9._~+/=\-]+"), "Bearer [redacted]"),
    (re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), "[aws-access-key]"),
    (re.compile(r"(?i)(aws_secret_access_key|secret[_-]?access[_-]?key|secretkey)(\W{1,3})[A-Za-z0-9/+=]{30,}"), r"\1\2[redacted]"),
    (re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])"), "[redacted-40]"),
    (re.compile(r"(?i)(x-amz-security-token|aws_session_token|session[_-]?token)(\W{1,3})[A-Za-z0-9/+=%]{16,}"), r"\1\2[redacted]"),
    (re.compile(r"https?://[^\s\"']*(?:X-Amz-Signature|Signature=|sig=|X-Amz-Credential)[^\s\"']*", re.I), "[signed-url]"),
    (re.compile(r"(?i)(api[_-]?key|x-api-key|authorization)(\"?\s*[:=]\s*\"?)[^\s\",}]{6,}"), r"\1\2[redacted]"),
]


def sanitise(reason: str) -> str:
    """Remove keys, bearer tokens, AWS credentials and signed URLs from a provider's reason."""
    out = reason
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

    def trace_record(self) -> dict[str, Any]:
        return {
            "class": self.cls,
            "reason": self.reason,
            "hint": self.hint,
            "finish_reason": self.finish_reason,
            "usage": self.usage,
            "status": self.status,
        }


def classify(exc: BaseException) -> ModelFailure:
    """The one classifier. Adapters raise ModelFailure themselves where they know better;
    everything else lands here."""
    if isinstance(exc, ModelFailure):
        return exc
    return ModelFailure("internal", f"{type(exc).__name__}: {exc}")
