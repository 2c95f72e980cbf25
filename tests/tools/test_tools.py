import pytest
from pydantic import BaseModel

from groundchat.auth.callers import Caller
from groundchat.tools.base import Tool, ToolContext, ToolDefinitionError, ToolError, ToolRefused, ToolRegistry, define_tool


class NoArgs(BaseModel):
    pass


class Limit(BaseModel):
    limit: int


async def handler(ctx, args):
    return {"ok": True}


# Every tool names its facts (tools/facts.py); these tests are about the rest of it.
FACTS = {"grounding": "text", "drawer": "plain", "offline_template": "generic"}


def test_tool_without_permission_cannot_be_defined():
    with pytest.raises(ToolDefinitionError, match="permission"):
        Tool(name="t", description="d", input_model=NoArgs, permission=None, handler=handler)  # type: ignore[arg-type]
    with pytest.raises(ToolDefinitionError, match="permission"):
        define_tool(name="t", description="d", input_model=NoArgs)(handler)
    with pytest.raises(ToolDefinitionError):
        Tool(name="t", description="d", input_model=NoArgs, permission="", handler=handler, **FACTS)


def test_registry_with_tools_requires_can():
    tool = Tool(name="t", description="d", input_model=NoArgs, permission="runs.read", handler=handler, **FACTS)
    with pytest.raises(ToolDefinitionError, match="can"):
        ToolRegistry([tool], can=None)


async def test_denied_tool_is_neither_offered_nor_executable():
    allowed = Tool(name="allowed", description="d", input_model=NoArgs, permission="docs.read", handler=handler, **FACTS)
    denied = Tool(name="denied", description="d", input_model=NoArgs, permission="runs.read", handler=handler, **FACTS)

    async def can(permission, caller):
        return permission == "docs.read"

    registry = ToolRegistry([allowed, denied], can)
    caller = Caller(id="alice")
    assert [t.name for t in await registry.offered(caller)] == ["allowed"]
    ctx = ToolContext(caller=caller)
    assert await registry.execute("allowed", {}, ctx) == {"ok": True}
    with pytest.raises(ToolRefused):
        await registry.execute("denied", {}, ctx)
    with pytest.raises(ToolRefused):
        await registry.execute("no-such-tool", {}, ctx)


async def test_invalid_arguments_are_a_tool_error_naming_the_field():
    tool = Tool(name="t", description="d", input_model=Limit, permission="p", handler=handler, **FACTS)

    async def can(permission, caller):
        return True

    with pytest.raises(ToolError, match="limit"):
        await ToolRegistry([tool], can).execute("t", {"limit": "many"}, ToolContext(caller=Caller(id="a")))


def test_spec_carries_the_input_schema():
    spec = Tool(name="t", description="d", input_model=Limit, permission="p", handler=handler, **FACTS).spec()
    assert spec.input_schema["properties"]["limit"]["type"] == "integer"
    assert spec.input_schema["required"] == ["limit"]
