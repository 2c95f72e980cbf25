"""The checks before any model call run in their one order, the first refusal answering; a question
that passes them all has its conversation claimed, and the run composed from it holds only what it
uses: the stores it writes, not the Services bag, and one guard."""
from __future__ import annotations

import dataclasses

from groundchat.auth.callers import CHAT_USE, Caller
from groundchat.chat.opening import ConversationOpened
from groundchat.chat.question_checks import Asking, Checked, check_question
from groundchat.chat.stored_run import StoredRun
from groundchat.exchange.refusal import Refusal
from groundchat.services import Services
from groundchat_testkit.scripted import ScriptedModel, Step


def _services(settings, dynamo, model=None) -> Services:
    return Services(settings=settings, dynamo=dynamo, model_override=model or ScriptedModel([Step(text="Hi.")]),
                    tools_override=[])


async def _refused(services: Services, asking: Asking) -> tuple[int, str]:
    outcome = await check_question(services, asking)
    assert isinstance(outcome, Refusal), outcome
    return outcome.status, outcome.code


async def test_each_check_refuses_only_once_those_before_it_passed(settings, dynamo, monkeypatch):
    services = _services(settings, dynamo)
    bad_body = {"message": ""}
    # Everything wrong at once: the request's key is the first check.
    assert await _refused(services, Asking(None, bad_body, request_key="has space")) == (400, "bad-request")
    # Then the configuration: a chat with no model is 503 before it asks who is calling.
    monkeypatch.setattr(Services, "model_status", lambda self: (False, "no model", "set one"))
    assert await _refused(services, Asking(None, bad_body)) == (503, "chat-not-configured")
    monkeypatch.undo()
    # Then the caller: 401 before the body is read, 403 for one without the grant.
    assert await _refused(services, Asking(None, bad_body)) == (401, "unauthenticated")
    assert await _refused(services, Asking(Caller(id="bob"), bad_body)) == (403, "forbidden")
    await services.users.grant("alice", [CHAT_USE])
    # Then the body, then the conversation it names.
    assert await _refused(services, Asking(Caller(id="alice"), bad_body)) == (400, "bad-request")
    unknown = {"message": "Which context is best?", "conversation_id": "0" * 32}
    assert await _refused(services, Asking(Caller(id="alice"), unknown)) == (404, "not-found")


async def test_a_question_that_passes_has_its_conversation_claimed(settings, dynamo):
    services = _services(settings, dynamo)
    await services.users.grant("alice", [CHAT_USE])
    checked = await check_question(services, Asking(Caller(id="alice"), {"message": "  Which context is best? "}))
    assert isinstance(checked, Checked)
    assert checked.caller.id == "alice" and checked.question == "Which context is best?"
    assert isinstance(checked.conversation, ConversationOpened) and checked.conversation.existing is None
    record = await services.answers.get_raw(checked.conversation.id)
    assert record is not None and record["run_id"] == checked.run_id and record["owner"] == "alice"


def test_a_stored_run_holds_no_services_bag_and_one_guard():
    fields = {f.name: f.type for f in dataclasses.fields(StoredRun)}
    assert "services" not in fields and "spend" not in fields and "caller" not in fields
    assert fields["guard"] == "BudgetGuard" and fields["stores"] == "RunStores"
    # Nothing the run holds twice: the conversation's id is the run's, its caller the tool context's.
    assert "conversation" not in fields and {"conversation_id", "ctx", "existing"} <= set(fields)
