"""The platform key the redaction tests configure: one with no known prefix, so only the configured
value itself can recognise it."""
from __future__ import annotations

import pytest

from groundchat.config import reset_settings_cache
from groundchat.redaction import reset_redaction_cache

BARE_KEY = "k3yW1thN0Prefix0123456789"


@pytest.fixture
def configured(monkeypatch):
    """The platform's key configured as the OpenAI-compatible gateway key."""
    monkeypatch.setenv("GROUNDCHAT_OPENAI_API_KEY", BARE_KEY)
    reset_settings_cache()
    yield BARE_KEY
    reset_redaction_cache()
