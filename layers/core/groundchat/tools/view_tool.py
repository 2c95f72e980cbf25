"""`show_view`: the model proposes a view; it is shown only if it renders and every number in it
came from a data tool in this same answer. A refusal lists what to fix; after two refusals in one
answer the model is told to answer in words.
"""
from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from groundchat.auth.callers import VIEWS_SHOW
from groundchat.exchange.frames import ViewFrame
from groundchat.tools.facts import Drawer, Grounding, OfflineTemplate
from groundchat.tools.base import ToolContext, ToolError, define_tool
from groundchat.views.actions import ACTIONS
from groundchat.views.catalog import COMPACT_SCHEMA
from groundchat.views.review import review

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonObject

MAX_REFUSALS = 2
IN_WORDS = "answer in words instead"


class ShowViewInput(BaseModel):
    """Takes the view as it comes and checks it in the handler, not at the registry's door: a
    schema problem must be counted as a refusal and listed together with ungrounded numbers."""

    model_config = ConfigDict(extra="allow")

    @classmethod
    def model_json_schema(cls, *args: object, **kwargs: object) -> JsonObject:
        return copy.deepcopy(COMPACT_SCHEMA)


_DESCRIPTION = (
    "Show the reader a view of numbers: a title and parts from the catalog (stats, table, alert, bar_chart, "
    "and optionally a form as the last part). Call it after the data tools, in the same answer: every number "
    "in the view must be one they returned (rounding to fewer places and percentages of returned fractions, "
    "marked with %, are fine; sums and differences are not). A form names an action ("
    + "; ".join(f"{a.name}: {a.description}, fields {', '.join(f.name for f in a.fields)}" for a in ACTIONS.values())
    + ") and offers option values the data tools returned; never write an address."
)


@define_tool(name="show_view", description=_DESCRIPTION, input_model=ShowViewInput, permission=VIEWS_SHOW,
             grounding=Grounding.NONE, drawer=Drawer.VIEW, offline_template=OfflineTemplate.VIEW)
async def show_view(ctx: ToolContext, args: ShowViewInput) -> JsonObject:
    answer = ctx.answer
    if answer.view_refusals >= MAX_REFUSALS:
        raise ToolError(f"view refused: {MAX_REFUSALS} views were already refused in this answer; {IN_WORDS}.")
    view, problems = review(dict(args.model_extra or {}), answer.tool_results)
    if view is None:
        answer.view_refusals += 1
        last = answer.view_refusals >= MAX_REFUSALS
        ending = f"That was the last try: {IN_WORDS}." if last else "Fix these and call show_view again, or answer in words."
        raise ToolError("view refused, nothing was shown:\n" + "\n".join(f"- {p}" for p in problems) + "\n" + ending)
    shown = view.model_dump(mode="json", exclude_none=True)
    # The loop sends the frame after this call's result, and commits the annotations with the answer.
    answer.pending_frames.append(ViewFrame(view=shown))
    answer.annotations.views.append(shown)
    return {"accepted": True}
