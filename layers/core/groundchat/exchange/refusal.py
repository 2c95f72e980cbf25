"""A question refused before any model call, whoever refuses it (the public gate, the answer use
case): the HTTP status, a stable code, words for the person, and what the response carries."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from groundchat.public.visitor_sessions import IssuedSession


@dataclass(frozen=True)
class Refusal:
    status: int
    code: str
    message: str
    extra: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)  # e.g. Retry-After
    visitor_session: IssuedSession | None = None  # a visitor verified on the way: keep the session


__all__ = ["Refusal"]
