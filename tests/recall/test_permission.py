"""`recall.read` exists, the dev user's full grant includes it, and no configuration gives it to a visitor."""
import pytest

from groundchat.auth.callers import ALL_PERMISSIONS, RECALL_READ
from groundchat.config import Settings
from groundchat.public.visitors import BadVisitorPermissions, visitor_permissions
from groundchat.tools.recall_tool import search_my_conversations


def test_the_permission_and_the_tool():
    assert RECALL_READ == "recall.read" and RECALL_READ in ALL_PERMISSIONS
    assert search_my_conversations.permission == RECALL_READ
    assert "owner" not in search_my_conversations.spec().input_schema["properties"]


def test_visitors_never_get_it():
    assert RECALL_READ not in visitor_permissions(Settings().visitor_permissions)
    with pytest.raises(BadVisitorPermissions):
        visitor_permissions("chat.use,recall.read")


def test_an_unknown_recall_mode_is_refused_in_one_line(monkeypatch):
    from pydantic import ValidationError

    from groundchat.config import settings_problem

    monkeypatch.setenv("GROUNDCHAT_RECALL", "always")
    with pytest.raises(ValidationError) as err:
        Settings()
    assert settings_problem(err.value) == "GROUNDCHAT_RECALL: unknown recall mode 'always'; valid: off, explicit, auto"
