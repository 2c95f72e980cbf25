"""A question refused before any model call, whoever refuses it (the public gate, the answer use
case): the HTTP status, a stable code, words for the person, and what the response carries."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject


@dataclass(frozen=True)
class IssuedSession:
    """A visitor session the response must set as a cookie (the public gate signs it,
    public/visitor_sessions.py), whether the question is then answered or refused."""

    token: str
    max_age: int
    visitor_id: str


@dataclass(frozen=True)
class Refusal:
    status: int
    code: str
    message: str
    extra: JsonObject = field(default_factory=dict)  # more fields of the error body, e.g. retry_after
    headers: dict[str, str] = field(default_factory=dict)  # e.g. Retry-After
    visitor_session: IssuedSession | None = None  # a visitor verified on the way: keep the session


__all__ = ["IssuedSession", "Refusal"]
