"""`groundchat`: the local stack, tokens, grants, one-tool calls, and asking the running app."""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

from groundchat_cli.stack_address import stack_services as _services


def _cmd_serve(args: argparse.Namespace) -> int:
    from groundchat_cli.localstack import serve

    return serve(args.port, reset_state=args.reset_state, public=args.public)


def _cmd_token(args: argparse.Namespace) -> int:
    from groundchat.auth.tokens import issue_dev_token
    from groundchat.config import get_settings

    print(issue_dev_token(get_settings(), args.user, days=args.days))
    return 0


def _cmd_users_grant(args: argparse.Namespace) -> int:
    from groundchat.store.users import UnknownPermission

    try:
        grants = asyncio.run(_services(args.endpoint).users.grant(args.user, args.permissions))
    except UnknownPermission as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{args.user}: {', '.join(grants)}")
    return 0


def _cmd_users_list(args: argparse.Namespace) -> int:
    for user in asyncio.run(_services(args.endpoint).users.list()):
        print(f"{user['user_id']}: {', '.join(user['grants'])}")
    return 0


def _cmd_tool(args: argparse.Namespace) -> int:
    """Call one tool as a user through the same permission check the loop uses."""
    from groundchat.auth.callers import Caller
    from groundchat.spending.step_guard import SpendCapReached
    from groundchat.tools.base import ToolError, ToolRefused

    s = _services(args.endpoint)
    caller = Caller(id=args.as_user or s.settings.dev_user)
    if args.list or not args.name:
        return _list_tools(s, caller)
    if s.registry.get(args.name) is None:
        # Unlike the model, a person at the terminal is told what exists (the model is refused alike
        # for unknown and denied tools, so it learns nothing about tools it may not use).
        print(f"error: no tool named {args.name!r}; tools: {', '.join(s.registry.names)}", file=sys.stderr)
        return 2
    try:
        tool_args = json.loads(args.json)
    except json.JSONDecodeError as exc:
        print(f"error: the arguments are not JSON: {exc}", file=sys.stderr)
        return 2

    async def call() -> Any:
        # A run of its own: a search it makes is charged like any other, under this run.
        return await s.registry.execute(args.name, tool_args, s.tool_context(caller))

    try:
        result = asyncio.run(call())
    except (ToolRefused, ToolError) as exc:
        print(json.dumps({"error": str(exc)}, indent=2))
        return 1
    except SpendCapReached as cap:
        print(json.dumps({"error": cap.message, "scope": cap.scope}, indent=2))
        return 1
    print(json.dumps(result, indent=2, default=str, ensure_ascii=False))
    return 0


def _list_tools(s: Any, caller: Any) -> int:
    offered = asyncio.run(s.registry.offered(caller))
    for tool in offered:
        first_sentence = tool.description.split(". ")[0].rstrip(".")
        print(f"{tool.name:18} {tool.permission:12} {first_sentence}")
    denied = [name for name in s.registry.names if name not in {t.name for t in offered}]
    if denied:
        print(f"({caller.id} may not call: {', '.join(denied)})")
    return 0


def _cmd_try(args: argparse.Namespace) -> int:
    from groundchat_cli.client import ask_all
    from groundchat_cli.stack_address import app_url

    return ask_all(app_url(args.url), args.as_user, args.questions)


def _cmd_examples(args: argparse.Namespace) -> int:
    from groundchat_cli.client import run_examples
    from groundchat_cli.stack_address import app_url

    return run_examples(app_url(args.url), args.as_user)


URL_HELP = "the app, e.g. http://127.0.0.1:8000 (default: the local stack on PORT, or the one running)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="groundchat", description="A grounded chat over an accessibility benchmark.")
    sub = parser.add_subparsers(dest="command", required=True)
    from groundchat_cli.stack_address import add_endpoint_option

    p = sub.add_parser("serve", help="start the local stack and serve http://127.0.0.1:$PORT/chat (PORT defaults to 8000)")
    p.add_argument("--port", type=int, default=None, help="instead of PORT")
    p.add_argument("--reset-state", action="store_true",
                   help="start with empty local DynamoDB state (deletes $GROUNDCHAT_HOME/dynamodb-<port>.log)")
    p.add_argument("--public", action="store_true",
                   help="serve as a public chat: anonymous visitors behind a local Turnstile stub, a rate limit and a ceiling")
    p.set_defaults(func=_cmd_serve)

    p = sub.add_parser("token", help="print a dev bearer token for USER")
    p.add_argument("user")
    p.add_argument("--days", type=int, default=30)
    p.set_defaults(func=_cmd_token)

    users = sub.add_parser("users", help="users and their grants").add_subparsers(dest="users_command", required=True)
    p = users.add_parser("grant", help="grant permissions to a user")
    p.add_argument("user")
    p.add_argument("permissions", nargs="+")
    add_endpoint_option(p)
    p.set_defaults(func=_cmd_users_grant)
    p = users.add_parser("list", help="list users and grants")
    add_endpoint_option(p)
    p.set_defaults(func=_cmd_users_list)

    p = sub.add_parser("tool", help="call one tool as a user and print its result as JSON (--list: the tools that user may call)")
    p.add_argument("name", nargs="?")
    p.add_argument("json", nargs="?", default="{}")
    p.add_argument("--list", action="store_true", help="list the tools this user may call, with what each does")
    p.add_argument("--as", dest="as_user", default=None)
    add_endpoint_option(p)
    p.set_defaults(func=_cmd_tool)

    p = sub.add_parser("try", help="ask the running app; later questions continue the conversation")
    p.add_argument("questions", nargs="+")
    p.add_argument("--url", default=None, help=URL_HELP)
    p.add_argument("--as", dest="as_user", default=None)
    p.set_defaults(func=_cmd_try)

    p = sub.add_parser("examples", help="ask the example questions and share the answers")
    p.add_argument("--url", default=None, help=URL_HELP)
    p.add_argument("--as", dest="as_user", default=None)
    p.set_defaults(func=_cmd_examples)

    # Commands owned by their own modules.
    from groundchat_cli.budget import add_budget_commands
    from groundchat_cli.corpus import add_corpus_commands
    from groundchat_cli.feedback import add_feedback_commands
    from groundchat_cli.mcp_stdio import add_mcp_command
    from groundchat_cli.runs import add_runs_commands

    add_runs_commands(sub)
    add_corpus_commands(sub)
    add_budget_commands(sub)
    add_feedback_commands(sub)
    add_mcp_command(sub)
    return parser


def expected_failure(exc: BaseException) -> str | None:
    """The one line to print for a failure a user can meet and fix (no stack, no credentials, a
    stack that went away); None for a bug, which keeps its traceback."""
    import botocore.exceptions as boto
    import httpx

    from groundchat.config import SettingsError
    from groundchat.corpus.dates import SourceDateError
    from groundchat_cli.stack_address import StackError

    if isinstance(exc, (StackError, SettingsError, SourceDateError)):
        return str(exc)
    if isinstance(exc, boto.NoCredentialsError):
        return "no AWS credentials: to use the local stack, start it with `make run` (or pass --endpoint)"
    if isinstance(exc, (boto.EndpointConnectionError, boto.ConnectionClosedError)):
        return f"DynamoDB does not answer ({exc}): is the local stack still running? (`make run`)"
    if isinstance(exc, boto.ClientError):
        error = exc.response.get("Error", {})
        if error.get("Code") == "ResourceNotFoundException":
            return f"a table is missing ({error.get('Message')}): start the local stack once with `make run`"
        return f"DynamoDB refused: {error.get('Code')}: {error.get('Message')}"
    if isinstance(exc, boto.BotoCoreError):
        return f"DynamoDB: {exc}"
    if isinstance(exc, httpx.HTTPError):
        return f"the app does not answer ({exc}): is the local stack running? (`make run`, or --url)"
    return None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # the reader left (`| head`): nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as exc:
        line = expected_failure(exc)
        if line is None:
            raise
        print(line, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
