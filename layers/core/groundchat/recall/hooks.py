"""Where an answer meets recall: what the recall tool is handed, and indexing after a commit (which
tools a question is offered is tools/recall_tool.py's)."""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from groundchat.recall import index_exchange
from groundchat.recall.plan import RecallPlan

if TYPE_CHECKING:
    from groundchat.recall.index import RecallIndex
    from groundchat.store.conversations import ConversationStore


class CommittedExchange(Protocol):
    """What indexing reads of a committed exchange (the chat's `Exchange`)."""

    conversation_id: str
    run_id: str
    question: str
    answer_text: str


@dataclass(frozen=True)
class RecallAccess:
    """What the recall tool gets through `ToolContext.recall`: the index, the plan that allowed it,
    and the conversations, so a hit whose conversation has expired or gone is never shown (between
    a conversation's expiry and the next sweep, `recall.sweep`, its entries are still indexed)."""

    index: RecallIndex
    plan: RecallPlan
    conversations: ConversationStore | None = None

    async def still_held(self, conversation_id: str, owner: str) -> bool:
        if self.conversations is None:
            return True
        return await self.conversations.get_owned(conversation_id, owner) is not None


async def index_committed(recall: RecallIndex, plan: RecallPlan, owner: str, exchange: CommittedExchange, expires_at: int | None = None) -> bool:
    """After `commit_exchange` returned: a committed exchange becomes recallable by its owner, its
    entry carrying the expiry that commit gave the conversation (`expires_at`), so the sweep
    removes it when the conversation expires. Never called for a failed or cancelled exchange
    (those are not committed)."""
    if not plan.indexes:
        return False
    return await asyncio.to_thread(index_exchange, recall, owner, exchange.conversation_id, exchange.run_id,
                                   exchange.question, exchange.answer_text, expires_at)
