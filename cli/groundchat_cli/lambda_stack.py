"""`make run-lambda`: the routes of `make run`, served the way AWS serves them.

The same local state as `groundchat serve` (its DynamoDB stand-in and log, the dev user, the sample
runs and the corpus index under GROUNDCHAT_HOME), but the chat and share functions are the packaged
artifacts (infra/package.py, code only, with the layer's requirements from the Lambda tools cache)
under the real Lambda Web Adapter and the runtime interface emulator, behind the testkit's API
Gateway REST stand-in on http://127.0.0.1:$PORT (at / as a custom domain mapped to the stage, and at
/<stage>/ as the execute-api address). `LAMBDA_HOST=cargo-lambda` runs the chat function under
cargo-lambda's emulator, which streams an answer as the function writes it (the runtime interface
emulator hands it over whole when it ends); the share function stays under the latter.
"""
from __future__ import annotations

import os
import signal
import sys
import tempfile
import time
from pathlib import Path

from groundchat.config import get_settings

REPO = Path(__file__).resolve().parents[2]
DEFAULT_PORT = 8070


def _function_env(settings, home: Path) -> dict[str, str]:
    """What the local stack configured, handed to the functions (the template's stack-made values)."""
    from groundchat_cli.local_lambda import free_port

    env = {"GROUNDCHAT_HOME": str(home.resolve()), "GROUNDCHAT_DEV_SECRET": settings.dev_secret or "",
           "GROUNDCHAT_DYNAMODB_ENDPOINT": settings.dynamodb_endpoint, "GROUNDCHAT_TABLE_PREFIX": settings.table_prefix,
           "GROUNDCHAT_AUTH_MODE": "dev", "GROUNDCHAT_MODEL": settings.model, "GROUNDCHAT_MODE": "private",
           "GROUNDCHAT_SEARCH_BACKEND": "embedded", "GROUNDCHAT_CORPUS_DIR": str(Path(settings.corpus_dir).resolve()),
           "GROUNDCHAT_DOCS_DIR": "/var/task/docs", "PORT": str(free_port())}
    for name, value in os.environ.items():  # a model or gateway configured for `make run` holds here too
        if name.startswith("GROUNDCHAT_") and name not in env:
            env[name] = value
    return env


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def run(port: int | None = None) -> int:
    """Serves until Ctrl-C; an expected failure (no tools, the port taken, a function that does not
    start) is one line on stderr and a non-zero exit, never a traceback."""
    sys.path.insert(0, str(REPO / "infra"))
    import package

    from groundchat_cli import dynamodb_log
    from groundchat_cli.localstack import _start_state, prepare
    from groundchat_cli.stack_address import (
        Stack, StackError, env_port, port_in_use, remove_stack_file, write_stack_file,
    )
    from groundchat_cli.apigw_rest import RestApiStandIn
    from groundchat_cli.local_lambda import (
        HOSTS, LambdaToolsMissing, LocalLambda, function_config, load_template, require_tools,
    )

    host = os.environ.get("LAMBDA_HOST", "").strip() or "rie"
    if host not in HOSTS:
        print(f"run-lambda: LAMBDA_HOST={host!r} is not a local Lambda host; known: {', '.join(HOSTS)}", file=sys.stderr)
        return 1
    try:
        port = port or env_port() or DEFAULT_PORT
        tools = require_tools()
    except (StackError, LambdaToolsMissing) as exc:
        print(f"run-lambda: {exc}", file=sys.stderr)
        return 1
    if port_in_use(port):
        print(f"run-lambda: port {port} is in use (another stack?): stop it, or set PORT to another port", file=sys.stderr)
        return 1
    # The emulators run in sessions of their own (a Ctrl-C in the terminal does not reach them), so
    # a stop by signal must pass through the `finally` below that ends them, as Ctrl-C does.
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _interrupt)
    settings = get_settings()
    try:
        local, endpoint = _start_state(settings, port, False)
    except (StackError, dynamodb_log.LogCorrupt) as exc:
        print(f"run-lambda: {exc}", file=sys.stderr)
        return 1
    settings = get_settings()
    functions: dict[str, LocalLambda] = {}
    api = None
    with tempfile.TemporaryDirectory(prefix="groundchat-lambda-") as tmp:
        try:
            prepare(settings)
            settings = get_settings()
            if settings.dynamodb_endpoint != endpoint:
                settings = settings.model_copy(update={"dynamodb_endpoint": endpoint})
            root = Path(tmp)
            build = root / "build"
            built = package.build_functions(build)
            layer = package.build_layer("x86_64", build, with_dependencies=False)
            model = package.build_model_layer("x86_64", build, with_dependencies=False)
            package.compile_bytecode(tools.python, [layer, model, *built.values()])
            template = load_template()
            for logical in ("ChatFunction", "ShareFunction"):
                (root / logical).mkdir()
                config = function_config(template, logical)
                # cargo-lambda's emulator streams, but hosts only a function under the Web Adapter.
                functions[logical] = LocalLambda(config, build, root / logical, _function_env(settings, Path(settings.home)),
                                                 host=host if config.adapter_layer else "rie").start()
            api = RestApiStandIn(template, functions, port=port).start()
            # The address file `make run` writes: `groundchat try`, `search` and the rest find this stack.
            write_stack_file(settings, Stack(port=port, url=api.url, dynamodb_endpoint=endpoint, pid=os.getpid(),
                                             table_prefix=settings.table_prefix,
                                             state=str(local.log_path) if local else None))
            emulator = "cargo-lambda's emulator (streaming)" if host == "cargo-lambda" else "the runtime interface emulator"
            print(f"groundchat (packaged, under the Lambda Web Adapter and {emulator}) on "
                  f"{api.url}/chat and {api.stage_url}/chat  (token: .venv/bin/groundchat token {settings.dev_user})")
            while all(f.process and f.process.poll() is None for f in functions.values()):
                time.sleep(0.5)
            print("run-lambda: a local Lambda stopped; its last lines:\n" + "\n".join(f.log() for f in functions.values()),
                  file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            return 0
        except (StackError, RuntimeError, OSError) as exc:
            # A function that did not start says why in its own log (the exception carries it).
            print(f"run-lambda: {exc}", file=sys.stderr)
            return 1
        finally:
            remove_stack_file(settings, port)
            if api is not None:
                api.stop()
            for function in functions.values():
                function.stop()
            if local is not None:
                local.stop()


if __name__ == "__main__":
    sys.exit(run())
