"""How every command finds the local stack: the address file `serve` writes per port
(`$GROUNDCHAT_HOME/stack-<port>.json`: the app's URL, the DynamoDB endpoint, the OpenSearch node's
when it runs one, its pid), removed on a clean exit. `find_stack` takes PORT, or the one stack
running from this checkout, so all commands agree; `use_running_stack` and `use_stack_search` point
a command's settings at what it finds.
"""
from __future__ import annotations

import json
import os
import socket
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlparse

from groundchat.config import Settings, get_settings, reset_settings_cache

DEFAULT_PORT = 8000
START_HINT = "start it with `make run`"


class StackError(Exception):
    """No usable local stack (none running, several, a bad PORT, its state in use): the message is
    the one line the command prints."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_in_use(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


# ---- the address files ------------------------------------------------------------------------


@dataclass(frozen=True)
class Stack:
    port: int
    url: str
    dynamodb_endpoint: str
    pid: int
    table_prefix: str
    state: str | None = None  # the DynamoDB log, when the stack runs moto itself
    opensearch_endpoint: str | None = None  # the local OpenSearch node, when the stack runs one


def stack_file(settings: Settings, port: int) -> Path:
    return Path(settings.home) / f"stack-{port}.json"


def state_log(settings: Settings, port: int) -> Path:
    """Where the local DynamoDB of the stack on `port` keeps its state."""
    return Path(settings.home) / f"dynamodb-{port}.log"


def s3_state_dir(settings: Settings, port: int) -> Path:
    """Where the local S3 of the stack on `port` keeps its objects (one file each)."""
    return Path(settings.home) / f"s3-{port}"


def write_stack_file(settings: Settings, stack: Stack) -> Path:
    path = stack_file(settings, stack.port)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(asdict(stack), indent=2))
    os.replace(tmp, path)
    return path


def remove_stack_file(settings: Settings, port: int) -> None:
    """Remove the address file if it is still this process's (a later stack may own the port)."""
    path = stack_file(settings, port)
    stack = _read_stack(path)
    if stack is not None and stack.pid == os.getpid():
        path.unlink(missing_ok=True)


def _read_stack(path: Path) -> Stack | None:
    try:
        data = json.loads(path.read_text())
        return Stack(**{k: data.get(k) for k in Stack.__dataclass_fields__})
    except (OSError, ValueError, TypeError):
        return None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _answers(endpoint: str) -> bool:
    """A local endpoint accepts connections (remote ones are taken on trust)."""
    parsed = urlparse(endpoint)
    if parsed.hostname not in ("127.0.0.1", "localhost"):
        return True
    try:
        with socket.create_connection((parsed.hostname, parsed.port or 80), timeout=1):
            return True
    except OSError:
        return False


def running_stacks(settings: Settings) -> list[Stack]:
    """The stacks started from this checkout that are still running (a file left by a killed
    process is ignored), by port."""
    stacks = []
    for path in sorted(Path(settings.home).glob("stack-*.json")):
        stack = _read_stack(path)
        if stack and isinstance(stack.pid, int) and _pid_alive(stack.pid) and _answers(stack.dynamodb_endpoint):
            stacks.append(stack)
    return sorted(stacks, key=lambda s: s.port)


def env_port() -> int | None:
    raw = os.environ.get("PORT", "").strip()
    if not raw:
        return None
    if not raw.isdigit() or not 0 < int(raw) < 65536:
        raise StackError(f"PORT={raw!r} is not a port number")
    return int(raw)


def find_stack(settings: Settings, flag: str = "--url", table_prefix: str | None = None) -> Stack:
    """The stack on PORT if it is set; otherwise the one stack running from this checkout.
    `flag` is the option that names a stack explicitly instead (said in the error)."""
    port = env_port()
    stacks = running_stacks(settings)
    if table_prefix is not None:
        stacks = [s for s in stacks if s.table_prefix == table_prefix]
    if port is not None:
        for stack in stacks:
            if stack.port == port:
                return stack
        raise StackError(f"no local stack on port {port}: {START_HINT} (or set PORT / {flag})")
    if len(stacks) == 1:
        return stacks[0]
    if not stacks:
        raise StackError(f"no local stack on port {DEFAULT_PORT}: {START_HINT} (or set PORT / {flag})")
    ports = ", ".join(str(s.port) for s in stacks)
    raise StackError(f"{len(stacks)} local stacks are running (ports {ports}): set PORT or pass {flag}")


def app_url(url: str | None = None) -> str:
    """The app a client command talks to: `--url`, else the local stack's."""
    if url:
        return url.rstrip("/")
    return find_stack(get_settings(), "--url").url


def add_endpoint_option(parser) -> None:
    """For commands that read or write state: which DynamoDB (see `use_running_stack`)."""
    parser.add_argument(
        "--endpoint", default=None,
        help="DynamoDB endpoint URL, or 'aws' for the deployed tables "
             "(default: GROUNDCHAT_DYNAMODB_ENDPOINT, else the local stack on PORT, or the one running)",
    )


# The endpoint this process pointed itself at (so a later look-up does not take it for the user's).
_pointed_at: str | None = None


def _point_at(endpoint: str) -> Settings:
    global _pointed_at
    _pointed_at = endpoint
    if endpoint:
        os.environ["GROUNDCHAT_DYNAMODB_ENDPOINT"] = endpoint
        # A local stack's moto serves S3 on the same endpoint (the images bucket).
        os.environ["GROUNDCHAT_IMAGES_ENDPOINT"] = endpoint
        _local_credentials()
    else:
        os.environ.pop("GROUNDCHAT_DYNAMODB_ENDPOINT", None)
        os.environ.pop("GROUNDCHAT_IMAGES_ENDPOINT", None)
    reset_settings_cache()
    return get_settings()


def use_running_stack(endpoint: str | None = None) -> Settings:
    """The settings of a command that reads or writes state. In order: `--endpoint URL` (or
    `--endpoint aws` for the deployed tables), GROUNDCHAT_DYNAMODB_ENDPOINT, the local stack
    (`find_stack`). With none running, GROUNDCHAT_TABLE_PREFIX set alone names a deployed stack's
    tables in AWS (as docs/guide/deploy.md does); otherwise StackError, never a call to AWS."""
    settings = get_settings()
    if endpoint:
        return _point_at("" if endpoint.lower() == "aws" else endpoint)
    if settings.dynamodb_endpoint and settings.dynamodb_endpoint != _pointed_at:
        return _point_at(settings.dynamodb_endpoint)
    names_tables = "GROUNDCHAT_TABLE_PREFIX" in os.environ
    try:
        stack = find_stack(settings, "--endpoint", settings.table_prefix if names_tables else None)
    except StackError:
        if names_tables and env_port() is None:
            return settings  # the deployed tables, in AWS
        raise
    return _point_at(stack.dynamodb_endpoint)


def use_stack_search(backend: str | None = None) -> Settings:
    """The settings of a command that searches (`search`, `eval retrieval`, `ingest`): the backend
    named by `--backend`, else GROUNDCHAT_SEARCH_BACKEND / GROUNDCHAT_OPENSEARCH_ENDPOINT as set, else
    what the running local stack serves (its OpenSearch node, found as its DynamoDB is found). The
    embedded index is a file of this checkout, and needs no stack."""
    settings = get_settings()
    if backend:
        os.environ["GROUNDCHAT_SEARCH_BACKEND"] = backend
        reset_settings_cache()
        settings = get_settings()
    if settings.opensearch_endpoint or settings.search_backend == "embedded":
        return settings
    wanted = settings.search_backend == "opensearch"
    try:
        stack = find_stack(settings, "GROUNDCHAT_OPENSEARCH_ENDPOINT")
    except StackError as exc:
        if not wanted:
            return settings  # no stack, or several: the embedded index, as without one
        if running_stacks(settings):
            raise  # several: which one is the user's to say
        raise StackError("no local stack runs an OpenSearch node: start one with "
                         "`GROUNDCHAT_SEARCH_BACKEND=opensearch make run` (or set PORT, or "
                         "GROUNDCHAT_OPENSEARCH_ENDPOINT)") from None
    if not stack.opensearch_endpoint:
        if not wanted:
            return settings
        raise StackError(f"the local stack on port {stack.port} searches its embedded index, not OpenSearch: "
                         "restart it with `GROUNDCHAT_SEARCH_BACKEND=opensearch make run`")
    os.environ["GROUNDCHAT_OPENSEARCH_ENDPOINT"] = stack.opensearch_endpoint
    os.environ["GROUNDCHAT_SEARCH_BACKEND"] = "opensearch"
    reset_settings_cache()
    return get_settings()


def stack_services(endpoint: str | None = None):
    """The services of a command that reads or writes state, on the store `use_running_stack` finds."""
    from groundchat.services import build_services

    return build_services(use_running_stack(endpoint))


def _local_credentials() -> None:
    # moto accepts any credentials; boto3 still needs some to sign with.
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")
