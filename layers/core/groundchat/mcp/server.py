"""The MCP server over our tools, built with the official SDK's low-level `Server`.

Framework-free apart from the SDK: whoever serves it (Streamable HTTP in the chat function, stdio
in `groundchat mcp`) has already decided who the caller is and hands a way to read it per request.
A tool's input schema is its pydantic input model's own JSON schema, the model that checks the call.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import mcp_types as types
from mcp.server.lowlevel import Server

from groundchat.mcp.tool_calls import McpTools, ToolCallResult
from groundchat.models.messages import tool_result_text
from groundchat.money import money_text

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from groundchat.auth.callers import Caller
    from groundchat.tools.base import Tool

SERVER_NAME = "groundchat"
# Where a result's run and cost travel: beside the result, so its text is exactly what the chat's
# model is shown for the same call.
META_PREFIX = "groundchat/"
# W3C trace context, as MCP carries it in a request's `_meta`.
TRACE_KEYS = ("traceparent", "tracestate")
INSTRUCTIONS = (
    "Tools over an accessibility benchmark of AI coding agents, WCAG 2.2 and the European Accessibility "
    "Act. Cite an excerpt by its ref as [ref]; quote a cost as its cost_text; a search whose outcome is "
    "`unavailable` could not run, which is not an answer."
)

CallerOf = Callable[["ServerRequestContext"], "Caller"]


def build_server(tools: McpTools, caller_of: CallerOf) -> Server:
    async def list_tools(ctx: ServerRequestContext, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[listed(tool) for tool in await tools.offered(caller_of(ctx))])

    async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
        # A host that traces sends its `traceparent` in `_meta`: the call's span joins that trace.
        carrier = {k: v for k, v in (params.meta or {}).items() if k in TRACE_KEYS and isinstance(v, str)}
        return call_result(await tools.call(caller_of(ctx), params.name, dict(params.arguments or {}), carrier,
                                            dict(params.meta or {})))

    return Server(SERVER_NAME, instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool)


def listed(tool: Tool) -> types.Tool:
    # Read-only: no tool changes anything a host can see (a search is charged, which is not a change of the world).
    return types.Tool(name=tool.name, description=tool.description, input_schema=tool.input_model.model_json_schema(),
                      annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False))


def call_result(call: ToolCallResult) -> types.CallToolResult:
    # `_meta`: the field's wire name, the one its constructor declares (`meta` is only populated by name).
    meta = {f"{META_PREFIX}run_id": call.run_id, f"{META_PREFIX}cost": money_text(call.cost),
            f"{META_PREFIX}cost_text": call.cost_text}
    if call.error is not None:
        # A tool error is a result the host's model can read and act on, never a protocol error.
        return types.CallToolResult(content=[types.TextContent(text=f"error: {call.error}")], is_error=True, _meta=meta)
    structured = call.result if isinstance(call.result, dict) else None
    return types.CallToolResult(content=[types.TextContent(text=tool_result_text(call.result))],
                                structured_content=structured, _meta=meta)
