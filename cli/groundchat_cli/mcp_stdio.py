"""`groundchat mcp`: the MCP server on stdio, acting as one user against the local stack's store.

The same server the chat function serves at /mcp (groundchat.mcp): the user's grants decide the
tools, searches are charged to them, and every call is traced. An MCP host starts the command and
speaks on its stdin and stdout, so everything else this command says goes to stderr.
"""
from __future__ import annotations

import argparse
import asyncio
import sys


def add_mcp_command(sub: argparse._SubParsersAction) -> None:
    from groundchat_cli.stack_address import add_endpoint_option

    p = sub.add_parser("mcp", help="serve the tools to an MCP host on stdio, as USER (the local stack must be running)")
    p.add_argument("--user", default=None, help="act as this user, with their grants (default: the local dev user)")
    add_endpoint_option(p)
    p.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    from groundchat.auth.callers import Caller
    from groundchat.mcp.server import build_server
    from groundchat.mcp.tool_calls import McpTools
    from groundchat_cli.stack_address import stack_services, use_stack_search

    use_stack_search()  # the search the running stack serves (its OpenSearch node, or the embedded index)
    services = stack_services(args.endpoint)  # no stack: StackError, one line saying to `make run`
    if not asyncio.run(services.store_reachable()):
        print("the local stack's DynamoDB does not answer: start it with `make run` (or pass --endpoint)", file=sys.stderr)
        return 1
    caller = Caller(id=args.user or services.settings.dev_user)
    server = build_server(McpTools(services), lambda ctx: caller)
    asyncio.run(_serve(server))
    return 0


async def _serve(server) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
