"""A process that dies mid-answer (kill -9, a Lambda timeout) runs neither its `finally` nor its
heartbeat: what it held, the claim on the conversation and its spending reservations, must lapse
with the lease (a minute), not with the longest answer. The death is played here by cancelling the
answer's heartbeat and never resuming or closing its frames; the clock then moves on."""
from __future__ import annotations

import asyncio
import time

import pytest

from groundchat.auth.callers import CHAT_USE, RUNS_READ, Caller
from groundchat.chat.answer import Answer, Refusal, answer_question
from groundchat.services import Services
from groundchat.spending.operator import sweep_expired
from groundchat.store import budget_counters as bc
from groundchat.store import conversations as conversations_module
from groundchat.store.leases import CLAIM_LEASE_SECONDS, LEASE_SECONDS
from groundchat.store.tables import BUDGET
from groundchat_testkit.scripted import ScriptedModel, Step
from .helpers import lookup


class Hangs(ScriptedModel):
    """Answers the first question; never finishes the second's step (the process dies inside it);
    answers the next one again (asked of another process)."""

    def __init__(self):
        super().__init__([Step(text="First answer."), Step(text="never"), Step(text="Back again.")], model_id="scripted")
        self.inside = asyncio.Event()

    async def __call__(self, request):
        if self._n != 1:
            async for event in super().__call__(request):
                yield event
            return
        self._n += 1
        self.requests.append(request)
        self.inside.set()
        await asyncio.Event().wait()
        yield  # never reached


class Later:
    def __init__(self, offset: float):
        self.offset = offset

    def time(self) -> float:
        return time.time() + self.offset


async def drain(answer: Answer) -> list:
    return [f async for f in answer.frames]


@pytest.fixture
def services(dynamo, budget_settings):
    services = Services(settings=budget_settings(chat="1", user="1"), dynamo=dynamo, model_override=Hangs(),
                        tools_override=[lookup])
    return services


async def test_a_crashed_answer_frees_its_conversation_and_the_caps_after_one_lease(services, monkeypatch):
    await services.users.grant("ann", [CHAT_USE, RUNS_READ])
    first = await answer_question(services, Caller(id="ann"), {"message": "Which context is best?"})
    frames = await drain(first)
    conversation = frames[0].data["conversation_id"]

    dying = await answer_question(services, Caller(id="ann"), {"message": "And its cost?", "conversation_id": conversation})
    assert isinstance(dying, Answer)
    step = asyncio.create_task(drain(dying))  # the start frame, then the model step that never ends
    await asyncio.wait_for(services.model.inside.wait(), 10)
    for task in asyncio.all_tasks():  # the process dies: no heartbeat, no finally
        if task.get_coro().__name__ == "_renew_while_running":
            task.cancel()
    held = bc.read_counter_sync(services.dynamo.client, services.dynamo.name(BUDGET), bc.CHAT_SCOPE, "total")
    assert held.reserved > 0

    # Within the leases: the conversation is still taken and the reservations still held.
    monkeypatch.setattr(conversations_module, "time", Later(CLAIM_LEASE_SECONDS - 5))
    busy = await answer_question(services, Caller(id="ann"), {"message": "Again?", "conversation_id": conversation})
    assert isinstance(busy, Refusal) and (busy.status, busy.code) == (409, "conversation-busy")
    assert await sweep_expired(services.dynamo, now=time.time() + LEASE_SECONDS - 10) == []

    # One lease later, a new process takes the conversation over (its claim's lease is the short
    # one, store/leases.py) and the sweep gives the caps back.
    released = await sweep_expired(services.dynamo, now=time.time() + LEASE_SECONDS + 5)
    assert len(released) == 2  # the answer's two reservations (its first step and its answering step)
    after = bc.read_counter_sync(services.dynamo.client, services.dynamo.name(BUDGET), bc.CHAT_SCOPE, "total")
    assert after.reserved == 0
    monkeypatch.setattr(conversations_module, "time", Later(CLAIM_LEASE_SECONDS + 5))
    taken = await answer_question(services, Caller(id="ann"), {"message": "Again?", "conversation_id": conversation})
    assert isinstance(taken, Answer)
    assert [f.data["reason"] for f in await drain(taken) if f.type == "done"] == ["complete"]
    step.cancel()


async def test_a_running_answer_keeps_its_leases(services, monkeypatch):
    """The heartbeat renews them: an answer longer than a lease keeps its claim and reservations."""
    import groundchat.chat.loop as loop

    monkeypatch.setattr(loop, "RENEW_SECONDS", 0.05)
    await services.users.grant("ann", [CHAT_USE, RUNS_READ])
    frames = await drain(await answer_question(services, Caller(id="ann"), {"message": "Which context is best?"}))
    conversation = frames[0].data["conversation_id"]
    running = await answer_question(services, Caller(id="ann"), {"message": "And its cost?", "conversation_id": conversation})
    step = asyncio.create_task(drain(running))
    await asyncio.wait_for(services.model.inside.wait(), 10)
    before = time.time()
    await asyncio.sleep(0.3)  # several renewals
    item = services.conversations.conversations.get_item(Key={"conversation_id": conversation})["Item"]
    assert int(item["active_until"]) >= int(before) + CLAIM_LEASE_SECONDS
    open_items = bc.open_reservations_sync(services.dynamo.client, services.dynamo.name(BUDGET))
    assert open_items and all(int(bc.plain(i)["expires_at"]) >= int(before) + LEASE_SECONDS for i in open_items)
    step.cancel()
