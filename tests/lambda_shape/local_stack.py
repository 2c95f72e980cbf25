"""What the tests through the real adapter and emulator share: the skip (a failure under CI), the
package built once per module, a local DynamoDB with alice's grants, and the local Lambdas."""
from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from groundchat_cli import lambda_tools
from groundchat_cli.local_lambda import LambdaToolsMissing, LocalLambda, free_port, function_config, require_tools

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "infra"))
import package  # noqa: E402

GRANTS = {"chat.use", "runs.read", "docs.read", "views.show", "traces.read"}
DEV_SECRET = "test-secret-for-hs256-signing-0123456789"


def require_local_lambda() -> lambda_tools.Tools:
    """The tools, or a skip saying what is missing; with CI=true that skip fails the run."""
    try:
        return require_tools()
    except LambdaToolsMissing as missing:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI runs the Lambda-shaped tier: {missing}")
        pytest.skip(str(missing))


def build_package(root: Path, tools: lambda_tools.Tools) -> Path:
    """infra/package.py's code-only build (the layer's requirements come from the tools cache),
    compiled for Lambda's Python as `make package` ships it."""
    build = root / "build"
    functions = package.build_functions(build)
    layer = package.build_layer("x86_64", build, with_dependencies=False)
    model = package.build_model_layer("x86_64", build, with_dependencies=False)
    package.compile_bytecode(tools.python, [layer, model, *functions.values()])
    return build


@contextmanager
def local_dynamo():
    from groundchat_cli.moto_store import LocalDynamo

    from groundchat.config import Settings
    from groundchat.store.dynamo import Dynamo, create_tables
    from groundchat.store.tables import USERS

    # Module fixtures run before the per-test environment: moto takes any credentials, boto3 needs some.
    for name, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing"), ("AWS_DEFAULT_REGION", "eu-west-1")):
        os.environ.setdefault(name, value)
    db = LocalDynamo().start()
    try:
        dynamo = Dynamo(Settings(dynamodb_endpoint=db.endpoint))
        create_tables(dynamo)
        dynamo.table(USERS).put_item(Item={"user_id": "alice", "grants": GRANTS})
        yield db
    finally:
        db.stop()


def chat_env(endpoint: str, home: Path, **more: str) -> dict[str, str]:
    """The local values for what the template makes from the stack, and the local stack's own
    (dev tokens instead of Cognito, the offline answerer instead of Bedrock, the embedded index)."""
    return {"GROUNDCHAT_DYNAMODB_ENDPOINT": endpoint, "GROUNDCHAT_HOME": str(home),
            "GROUNDCHAT_DEV_SECRET": DEV_SECRET, "GROUNDCHAT_AUTH_MODE": "dev", "GROUNDCHAT_MODEL": "offline",
            "GROUNDCHAT_SEARCH_BACKEND": "embedded",
            "GROUNDCHAT_MODE": "private",
            # Lambda gives each function its own loopback; here they share one, so each app port is free.
            "PORT": str(free_port()), **more}


def start_function(template, logical: str, build: Path, workdir: Path, env: dict[str, str], host: str = "rie") -> LocalLambda:
    """`host`: the emulator it runs under (local_lambda.HOSTS); cargo-lambda's needs its binary."""
    if host == "cargo-lambda" and require_local_lambda().cargo_lambda is None:
        pytest.skip("cargo-lambda's emulator is not built (make lambda-tools)")
    workdir.mkdir(parents=True, exist_ok=True)
    return LocalLambda(function_config(template, logical), build, workdir, env, host=host).start()


def token(user: str = "alice") -> dict[str, str]:
    from groundchat.auth.tokens import issue_dev_token
    from groundchat.config import Settings

    return {"authorization": f"Bearer {issue_dev_token(Settings(dev_secret=DEV_SECRET), user)}"}


def frames(lines) -> list[tuple[str, dict]]:
    import json

    out, event = [], None
    for line in lines:
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            out.append((event, json.loads(line[6:])))
    return out


def init_durations(function: LocalLambda) -> list[float]:
    """The emulator's init phase durations (its `INIT REPORT` for the init phase, in ms)."""
    import re

    return [float(m.group(1)) for line in function.output
            if (m := re.search(r"INIT REPORT\(durationMs: ([\d.]+)\)", line))]


def serve_in_thread(handler) -> ThreadingHTTPServer:
    """A scripted HTTP peer on a free loopback port, each request on a thread of its own."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
