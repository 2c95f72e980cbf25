"""Redaction: the one sanitiser for anything that leaves a request (traces, failure reasons, logs).

Two passes. First the configured secret values themselves, whatever they look like: a gateway key
with no known prefix is still the platform's key. Then the known shapes of credentials, configured
or not (OpenAI, Groq, Google, AWS, Slack, GitHub keys, bearer tokens, JWTs, signed URLs and
`key=`/`token=` query values).

The secrets are read from the settings once per settings object: `config.reset_settings_cache()`
makes the next read build a new one, and with it a new list here (`reset_redaction_cache()` forces
it too). A secret shorter than 8 characters is not redacted as a value, or it would wipe ordinary
words (the test environment's AWS secret is `testing`).
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from groundchat.config import Settings, get_settings

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonValue

MIN_SECRET_CHARS = 8
SECRET_MARK = "[redacted-secret]"
# Settings whose value is a credential: today `openai_api_key` and `dev_secret`; an OIDC client
# secret or any other key added later is covered by its name.
_SECRET_SETTING = re.compile(r"(?:secret|api_key|token|password)$")
_SECRET_ENV = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")

# Order matters: whole signed URLs go first, so the credentials inside them are removed with them
# rather than leaving a half-redacted address behind. No value class takes a backslash, so a
# redaction inside JSON text never eats an escape and the line stays valid JSON. The vendor prefixes
# take no word boundary: in a JSON body the key often follows an escaped newline (`\ngsk_...`).
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"https?://[^\s\"'<>\\]*(?:X-Amz-Signature|X-Amz-Credential|X-Amz-Security-Token|Signature=|[?&]sig=|[?&]token=)[^\s\"'<>\\]*", re.I), "[signed-url]"),
    (re.compile(r"sk-[A-Za-z0-9_\-]{8,}"), "sk-[redacted]"),
    (re.compile(r"gsk_[A-Za-z0-9]{16,}"), "gsk_[redacted]"),
    (re.compile(r"AIza[0-9A-Za-z_\-]{30,}"), "AIza[redacted]"),
    (re.compile(r"xox[abposr]-[A-Za-z0-9\-]{10,}"), "xox-[redacted]"),
    (re.compile(r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"), "[github-token]"),
    # Eight characters at least, so "the bearer of bad news" stays prose.
    (re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{8,}"), "Bearer [redacted]"),
    (re.compile(r"(?i)(authorization\W{1,3})basic\s+[A-Za-z0-9+/=]{8,}"), r"\1Basic [redacted]"),
    (re.compile(r"eyJ[A-Za-z0-9_\-]{4,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*"), "[jwt]"),
    (re.compile(r"\b(?:AKIA|ASIA|AROA|AIDA)[A-Z0-9]{16}\b"), "[aws-access-key]"),
    (re.compile(r"(?i)(aws_secret_access_key|secret[_-]?access[_-]?key|secretkey)(\W{1,3})[A-Za-z0-9/+=]{30,}"), r"\1\2[redacted]"),
    (re.compile(r"(?i)(x-amz-security-token|aws_session_token|session[_-]?token)(\W{1,3})[A-Za-z0-9/+=%]{16,}"), r"\1\2[redacted]"),
    # A bare AWS secret access key is 40 characters of base64: redact any such run on its own.
    (re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])"), "[redacted-40]"),
    (re.compile(r"(?i)([?&](?:api[_-]?key|key|token|access[_-]?token|auth|sig|signature)=)[^&\s\"'#<>\\]+"), r"\1[redacted]"),
    (re.compile(r"(?i)(api[_-]?key|x-api-key|authorization|client[_-]?secret|access[_-]?token|refresh[_-]?token)"
                r"(\"?\s*[:=]\s*\"?)[^\s\",}&\\]{6,}"), r"\1\2[redacted]"),
]

_cache: tuple[object, re.Pattern[str] | None] | None = None


def _setting_secrets(settings: Settings) -> list[str]:
    values = [str(getattr(settings, name) or "") for name in type(settings).model_fields if _SECRET_SETTING.search(name)]
    if not settings.dev_secret:
        # The local stack's own signing secret, created once under the home directory.
        path = Path(settings.home) / "dev_secret"
        if path.is_file():
            values.append(path.read_text().strip())
    return values


def _secret_matcher(settings: Settings | None) -> re.Pattern[str] | None:
    """One pattern for every configured secret, as written, URL-encoded and JSON-escaped."""
    values = _setting_secrets(settings) if settings is not None else []
    values += [os.environ.get(name, "") for name in _SECRET_ENV]
    variants: set[str] = set()
    for value in values:
        if len(value) >= MIN_SECRET_CHARS:
            variants.update({value, quote(value, safe=""), json.dumps(value)[1:-1]})
    if not variants:
        return None
    # Longest first, so a secret that contains another is removed whole.
    return re.compile("|".join(re.escape(v) for v in sorted(variants, key=len, reverse=True)))


def _current_matcher() -> re.Pattern[str] | None:
    global _cache
    try:
        settings: Settings | None = get_settings()
    except Exception:  # unreadable settings must not stop a redaction: the environment still counts
        settings = None
    if _cache is None or _cache[0] is not settings:
        _cache = (settings, _secret_matcher(settings))
    return _cache[1]


def reset_redaction_cache() -> None:
    """Tests change the environment; the next redaction reads the secrets again."""
    global _cache
    _cache = None


def redact(text: str) -> str:
    """`text` without the configured secrets and without anything shaped like a credential."""
    out = text
    matcher = _current_matcher()
    if matcher is not None:
        out = matcher.sub(SECRET_MARK, out)
    for pattern, replacement in _PATTERNS:
        out = pattern.sub(replacement, out)
    return out


def redact_value(obj: JsonValue) -> JsonValue:
    """Every string inside dicts, lists and tuples redacted; other values as they are."""
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, dict):
        return {key: redact_value(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [redact_value(value) for value in obj]
    return obj
