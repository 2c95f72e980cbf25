"""Tools the model may call: definitions, the per-caller registry, and the tools themselves."""
from groundchat.tools.base import Tool, ToolContext, ToolDefinitionError, ToolError, ToolRegistry, define_tool

__all__ = ["Tool", "ToolContext", "ToolDefinitionError", "ToolError", "ToolRegistry", "define_tool"]
