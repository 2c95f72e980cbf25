"""`search_docs`: excerpts from the project's docs, WCAG 2.2 and the EAA, each with a citable ref."""
from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from groundchat.auth.callers import DOCS_READ
from groundchat.tools.facts import Drawer, Grounding, OfflineTemplate
from groundchat.lazy import resolved
from groundchat.tools.base import ToolContext, ToolError, define_tool

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject


class SearchDocsInput(BaseModel):
    query: str = Field(min_length=1, max_length=500, description="plain words")
    source: Literal["wcag22", "eaa", "docs"] | None = Field(
        default=None,
        description="Only this source (docs: this project's docs).",
    )


@define_tool(
    name="search_docs",
    description=(
        "Search the benchmark's docs, WCAG 2.2 and the European Accessibility Act (Directive (EU) 2019/882). "
        "Excerpts carry a `ref` to cite as [ref]. outcome `empty`: nothing matched; "
        "`unavailable`: the search could not run, which is not an answer."
    ),
    input_model=SearchDocsInput,
    permission=DOCS_READ,
    grounding=Grounding.TEXT,
    drawer=Drawer.EXCERPTS,
    offline_template=OfflineTemplate.EXCERPTS,
)
async def search_docs(ctx: ToolContext, args: SearchDocsInput) -> JsonObject:
    docs = resolved(ctx.docs)
    if docs is None:
        return {"outcome": "unavailable", "reason": "search_not_configured", "excerpts": [],
                "freshness": {"oldest_updated_at": None, "undated": 0}}
    try:
        sources = ctx.search.sources_for(args.source)  # before the charge: a refused search costs nothing
    except ValueError as exc:
        raise ToolError(str(exc)) from exc
    if ctx.charge_search is not None:
        charge = await ctx.charge_search(args.query)
        if isinstance(charge, dict) and charge.get("charged") is not None:
            ctx.answer.search_charges.append(Decimal(str(charge["charged"])))  # the answer's cost counts it
    try:
        # Embedding the query is CPU work; it runs off the event loop that streams other answers.
        result = await asyncio.to_thread(docs.search, args.query, k=ctx.search.top_k, sources=sources,
                                         **ctx.search.switched_off())
    except ValueError as exc:
        raise ToolError(str(exc)) from exc
    asked = ctx.search.model_dump(exclude_defaults=True, mode="json")
    # The record says what this request narrowed (its legs_ran and sources say what ran); the
    # trace, the page and the JSON answer read it as dumped here.
    if result.debug is not None:
        ctx.answer.debug = (result.debug.model_copy(update={"request": asked}) if asked else result.debug).record()
    out: JsonObject = {"outcome": result.outcome}
    if result.outcome == "unavailable":
        out["reason"] = result.reason
        out["excerpts"] = []
        out["freshness"] = result.freshness.model_dump()
        return out
    out["excerpts"] = [
        {"ref": p.ref, "source": p.source, "section": p.section, "title": p.title, "url": p.url, "text": p.text,
         "updated_at": p.updated_at, "score": p.score}
        for p in result.passages
    ]
    out["freshness"] = result.freshness.model_dump()
    if result.dropped["passages"] or result.dropped["chars"]:
        out["dropped"] = {what: count for what, count in result.dropped.items()}
    if result.best_match == "weak":  # the learned ranking step doubts its first passage (search/learned_rank.py)
        out["best_match"] = "weak"
    return out
