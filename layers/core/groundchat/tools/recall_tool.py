"""`search_my_conversations`: the caller's own earlier exchanges, each a citable excerpt.

Whose conversations are searched comes from `ctx.caller.id`, set by the server from the signed-in
caller; the model's arguments hold only the words to look for. `ctx.recall` is set only when this
question's recall plan allows a search, so a call the plan did not offer finds nothing to search.
"""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from groundchat.auth.callers import RECALL_READ, Caller
from groundchat.recall.plan import TOOL_NAME, RecallPlan
from groundchat.tools.facts import Drawer, Grounding, OfflineTemplate
from groundchat.tools.base import Registry, Tool, ToolContext, ToolRefused, define_tool

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject, JsonValue

MAX_HITS = 5


class SearchMyConversationsInput(BaseModel):
    model_config = ConfigDict(extra="forbid")  # no owner, no user id: only the words
    query: str = Field(min_length=1, max_length=500)


@define_tool(
    name=TOOL_NAME,
    description="The user's own past questions and answers; cite hits by ref.",
    input_model=SearchMyConversationsInput,
    permission=RECALL_READ,
    grounding=Grounding.TEXT,
    drawer=Drawer.PAST_EXCHANGES,
    offline_template=OfflineTemplate.PAST_EXCHANGES,
)
async def search_my_conversations(ctx: ToolContext, args: SearchMyConversationsInput) -> JsonObject:
    if ctx.recall is None:
        return {"outcome": "off", "excerpts": []}
    try:
        hits = await asyncio.to_thread(ctx.recall.index.search, ctx.caller.id, args.query, MAX_HITS)
    except Exception as exc:
        ctx.answer.debug = {"backend": "recall", "recall_plan": ctx.recall.plan.record(), "error": type(exc).__name__}
        return {"outcome": "unavailable", "reason": "recall_index_error", "excerpts": []}
    # Never this conversation's own exchanges: the model already has them as history.
    shown = [h.public() for h in hits if h.entry.conversation_id != ctx.conversation_id
             and await ctx.recall.still_held(h.entry.conversation_id, ctx.caller.id)]
    ctx.answer.recalled_from.update(str(h["section"]) for h in shown)  # each excerpt's own conversation
    ctx.answer.debug = {"backend": "recall", "recall_plan": ctx.recall.plan.record(), "hits": len(shown)}
    return {"outcome": "ok" if shown else "empty", "excerpts": [*shown]}


def offered_for(tools: list[Tool], plan: RecallPlan) -> list[Tool]:
    """The recall tool only when the plan searches; every other tool (search_docs too) untouched."""
    return [t for t in tools if plan.search or t.name != TOOL_NAME]


class GatedRegistry:
    """The deployment's tool registry as one answer sees it: the recall tool only if its plan searches.
    Every other tool, `search_docs` among them, is offered and run exactly as before."""

    def __init__(self, registry: Registry, plan: RecallPlan) -> None:
        self._registry = registry
        self._plan = plan

    def __getattr__(self, name: str) -> Any:
        return getattr(self._registry, name)

    async def offered(self, caller: Caller) -> list[Tool]:
        return offered_for(await self._registry.offered(caller), self._plan)

    def get(self, name: str) -> Tool | None:
        return self._registry.get(name)

    async def execute(self, name: str, args: JsonObject, ctx: ToolContext) -> JsonValue:
        if name == TOOL_NAME and not self._plan.search:
            raise ToolRefused(f"tool {name!r} is not available to this caller")
        return await self._registry.execute(name, args, ctx)
