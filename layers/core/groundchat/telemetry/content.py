"""Message content on spans: only when the operator turned capture on, and always redacted.

The conventions make the messages opt-in; here they are also passed through the one redactor the
logs and traces use (redaction.py: configured secrets, credential shapes, signed URLs), and e-mail
addresses are masked besides, since a person's address is not an operator's business either.
"""
from __future__ import annotations

import json
import re
from typing import Any

from groundchat.redaction import redact
from groundchat.telemetry.switch import content_capture_on

_EMAIL = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}")
EMAIL_MARK = "[address]"


def clean(text: str) -> str:
    return _EMAIL.sub(EMAIL_MARK, redact(text))


def messages(role: str, text: str, finish_reason: str | None = None) -> str | None:
    """One message in the conventions' JSON shape (role and text parts), or None when capture is off."""
    if not content_capture_on():
        return None
    message: dict[str, Any] = {"role": role, "parts": [{"type": "text", "content": clean(text)}]}
    if finish_reason:
        message["finish_reason"] = finish_reason
    return json.dumps([message], ensure_ascii=False)


def text(value: str) -> str | None:
    """A plain text (a search's query), or None when capture is off."""
    return clean(value) if content_capture_on() else None


def arguments(args: object) -> str | None:
    """A tool call's arguments as JSON, or None when capture is off: a search's query is the question's words."""
    if not content_capture_on():
        return None
    return clean(json.dumps(args, ensure_ascii=False, default=str))
