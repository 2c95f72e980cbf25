"""A client's name for one request (an `Idempotency-Key` header, the AI SDK's message id): what
makes a repeat of it recognisable, so that it follows the first answer rather than paying again.

Kept hashed: the store holds a digest of the client's string, never the string, and a digest has
one size whatever the client sent.
"""
from __future__ import annotations

import hashlib
import re

MAX_KEY_CHARS = 255
# Visible ASCII, as an HTTP header value carries it without quoting (a UUID, a ULID, a nanoid...).
_KEY = re.compile(r"[\x21-\x7e]+")


def request_key_problem(key: str | None) -> str | None:
    """Why `key` cannot name a request, or None (no key at all is fine)."""
    if key is None:
        return None
    if not key or len(key) > MAX_KEY_CHARS or not _KEY.fullmatch(key):
        return f"Idempotency-Key: 1 to {MAX_KEY_CHARS} visible ASCII characters (a UUID will do)"
    return None


def hashed_key(key: str | None) -> str | None:
    return hashlib.sha256(key.encode()).hexdigest()[:32] if key else None
