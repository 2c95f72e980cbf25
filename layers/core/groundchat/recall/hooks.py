"""Where an answer meets recall: which tools this question is offered, and indexing after a commit."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from groundchat.recall import index_exchange
from groundchat.recall.plan import TOOL_NAME, RecallPlan


@dataclass(frozen=True)
class RecallAccess:
    """What the recall tool gets through `ToolContext.recall`: the index, the plan that allowed it,
    and the conversations, so a hit whose conversation has expired or gone is never shown (between
    a conversation's expiry and the next sweep, `recall.sweep`, its entries are still indexed)."""

    index: Any
    plan: RecallPlan
    conversations: Any = None

    async def still_held(self, conversation_id: str, owner: str) -> bool:
        if self.conversations is None:
            return True
        return await self.conversations.get_owned(conversation_id, owner) is not None


def offered_for(tools: list[Any], plan: RecallPlan) -> list[Any]:
    """The recall tool only when the plan searches; every other tool (search_docs too) untouched."""
    return [t for t in tools if plan.search or t.name != TOOL_NAME]


class GatedRegistry:
    """The deployment's tool registry as one answer sees it: the recall tool only if its plan searches.
    Every other tool, `search_docs` among them, is offered and run exactly as before."""

    def __init__(self, registry: Any, plan: RecallPlan) -> None:
        self._registry = registry
        self._plan = plan

    def __getattr__(self, name: str) -> Any:
        return getattr(self._registry, name)

    async def offered(self, caller: Any) -> list[Any]:
        return offered_for(await self._registry.offered(caller), self._plan)

    async def execute(self, name: str, args: dict[str, Any], ctx: Any) -> Any:
        if name == TOOL_NAME and not self._plan.search:
            from groundchat.tools.base import ToolRefused

            raise ToolRefused(f"tool {name!r} is not available to this caller")
        return await self._registry.execute(name, args, ctx)


async def index_committed(recall: Any, plan: RecallPlan, owner: str, exchange: Any, expires_at: int | None = None) -> bool:
    """After `commit_exchange` returned: a committed exchange becomes recallable by its owner, its
    entry carrying the expiry that commit gave the conversation (`expires_at`), so the sweep
    removes it when the conversation expires. Never called for a failed or cancelled exchange
    (those are not committed)."""
    if not plan.indexes:
        return False
    return await asyncio.to_thread(index_exchange, recall, owner, exchange.conversation_id, exchange.run_id,
                                   exchange.question, exchange.answer_text, expires_at)
