"""The sample runs on moto, every tool, and a helper that runs one answer through the loop."""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import pytest

from groundchat.auth.callers import ALL_PERMISSIONS, Caller
from groundchat.chat.loop import run_exchange
from groundchat_testkit.answer_runs import kept_run
from groundchat.tools.base import ToolRegistry
from groundchat.tools.catalog import all_tools


@dataclass
class Answer:
    conversation_id: str
    frames: list = field(default_factory=list)
    exchange: object = None

    def of(self, kind: str) -> list[dict]:
        return [f.data for f in self.frames if f.type == kind]

    def results(self, name: str) -> list[dict]:
        return [d for d in self.of("tool-result") if d["name"] == name]


@pytest.fixture
async def sample(dynamo):
    from tests.moto_snapshot import sample_loaded_async
    from groundchat.services import Services

    await sample_loaded_async(dynamo)
    return Services(settings=dynamo.settings, dynamo=dynamo)


@pytest.fixture
def ask(sample):
    """Runs one question with `model` for a caller holding `grants`; commits into the real store."""

    async def run(model, question="Which context level is best?", grants=ALL_PERMISSIONS) -> Answer:
        async def can(permission, caller):
            return permission in grants

        answer = Answer(conversation_id=uuid.uuid4().hex)

        async def commit(ex):
            answer.exchange = ex
            await sample.conversations.commit_exchange(
                conversation_id=ex.conversation_id, owner="u", run_id=ex.run_id, existing=None,
                messages=ex.new_messages, annotations=ex.annotations, title=question)

        run = await kept_run(model, ToolRegistry(all_tools(), can), question=question, ctx=sample.tool_context(Caller(id="u")),
                             conversation_id=answer.conversation_id, on_commit=commit)
        async for frame in run_exchange(run):
            answer.frames.append(frame)
        return answer

    return run
