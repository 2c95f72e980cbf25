"""Answer runs for tests and benchmarks: what the loop reads, built as `chat/answer.py` builds it
(the offered specs read once from the registry), with a commit and a finish that keep what they
were given instead of storing it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Iterable

from groundchat.auth.callers import Caller
from groundchat.chat.answer_run import AnswerRun, Exchange, offered_specs
from groundchat.models.messages import ChatModel, ImageRef, Message
from groundchat.tools.base import ToolContext, ToolRegistry

Hook = Callable[[Exchange], Awaitable[None]]


@dataclass(kw_only=True)
class KeptRun(AnswerRun):
    """Keeps every exchange it was asked to commit and every one it finished; `on_commit` and
    `on_finish`, when given, run after (a test's store, or a failure it wants)."""

    committed: list[Exchange] = field(default_factory=list)
    finished: list[Exchange] = field(default_factory=list)
    on_commit: Hook | None = None
    on_finish: Hook | None = None

    async def commit(self, ex: Exchange) -> None:
        self.committed.append(ex)
        if self.on_commit is not None:
            await self.on_commit(ex)

    async def finish(self, ex: Exchange) -> None:
        self.finished.append(ex)
        if self.on_finish is not None:
            await self.on_finish(ex)


async def kept_run(model: ChatModel, registry: ToolRegistry | None = None, *, question: str = "q",
                   history: Iterable[Message] = (), images: Iterable[ImageRef] = (), system: str = "s",
                   ctx: ToolContext | None = None, conversation_id: str = "c", run_id: str | None = None,
                   **fields: Any) -> KeptRun:
    """A run of `question` for the caller `u` (or `ctx`'s, under its run id), offered what
    `registry` allows it."""
    registry = registry or ToolRegistry([], None)
    run_id = run_id or (ctx.run_id if ctx is not None and ctx.run_id else "r")
    ctx = ctx or ToolContext(caller=Caller(id="u"), run_id=run_id, conversation_id=conversation_id)
    return KeptRun(model=model, system=system, registry=registry, offered=await offered_specs(registry, ctx), ctx=ctx,
                   question=Message(role="user", content=question, images=list(images)),
                   conversation_id=conversation_id, run_id=run_id, history=list(history), **fields)
