"""The local stack: moto's server on 127.0.0.1 for DynamoDB (its state logged to disk) and S3 beside
it (the images bucket, its objects kept as files), tables, a dev user, sample runs, the corpus
index, and the app (chat and share together) on 127.0.0.1:$PORT.

Only configuration differs from AWS: the same boto3 code talks to moto through `endpoint_url`.

With `GROUNDCHAT_SEARCH_BACKEND=opensearch` and no `GROUNDCHAT_OPENSEARCH_ENDPOINT`, the stack also
runs a local OpenSearch node (opensearch_node.py), ingests into it through the same code as AWS, and
serves the chat's search and recall from it; the node stops with the stack.

`serve` writes one address file per port, `$GROUNDCHAT_HOME/stack-<port>.json` (the app's URL, the
DynamoDB endpoint, the OpenSearch node's when it runs one, its pid), and removes it on a clean exit. Every other command finds the stack
through `find_stack` (PORT, or the one stack running from this checkout), so they all agree.
"""
from __future__ import annotations

import json
import os
import socket
import sys
import threading
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
    tables in AWS (as infra/deploy.md does); otherwise StackError, never a call to AWS."""
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


# ---- moto ----------------------------------------------------------------------------------------


def make_moto_faithful():
    """Two places where moto's DynamoDB differs from the real one, in ways our budget meets:

    - It checks and writes a transaction item by item with no lock, so concurrent requests can
      interleave inside one transaction, which DynamoDB never allows (concurrent chats could then
      pass a spending cap locally). One request at a time gives moto DynamoDB's atomicity; the
      requests still race as they would against AWS.
    - Arithmetic that lands on zero stores a number like "0E-7", which moto itself then fails to
      read back (it parses numbers without a point as int). DynamoDB normalises numbers; so do we.

    Under the same lock, each successful write is appended to the state log when one is active
    (`dynamodb_log`), before its response is returned.

    Idempotent; returns the original request handler, to undo the first."""
    import threading
    from decimal import Decimal

    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.responses import DynamoHandler

    from groundchat_cli import dynamodb_log

    # Transactions and Queries cost per item, as in DynamoDB (the runs' views write ~30 items a run).
    from groundchat_cli.runs import make_moto_costs_faithful

    make_moto_costs_faithful()
    original = DynamoHandler.call_action
    if getattr(original, "_serialized", False):
        return original
    lock = threading.RLock()

    def call_action(self):
        with lock:
            refused = dynamodb_log.refuse_if_unlogged(self)
            if refused is not None:
                return refused
            result = original(self)
            dynamodb_log.record(self, result)
            return result

    call_action._serialized = True  # type: ignore[attr-defined]
    DynamoHandler.call_action = call_action

    original_init = DynamoType.__init__

    def normalised_init(self, type_as_dict):
        original_init(self, type_as_dict)
        if self.type == "N" and isinstance(self.value, str) and "E" in self.value.upper():
            text = format(Decimal(self.value).normalize(), "f")
            self.value = "0" if text in ("-0", "") else text

    DynamoType.__init__ = normalised_init
    return original


class LocalDynamo:
    """moto's server on a free port of 127.0.0.1; with `log`, its DynamoDB state is that file, and
    with `s3_root`, its S3 objects are the files in that folder (s3_state.py)."""

    def __init__(self, log: Path | None = None, reset: bool = False, s3_root: Path | None = None) -> None:
        self.log_path = Path(log) if log else None
        self.reset = reset
        self.s3_root = Path(s3_root) if s3_root else None
        self.server = None
        self.endpoint = ""
        self.replayed = None
        self.s3_objects = 0
        self._log = None
        self._lock = None
        self._s3 = None

    def start(self) -> "LocalDynamo":
        import logging

        from moto.server import ThreadedMotoServer

        from groundchat_cli import dynamodb_log

        # moto's server logs every request; the local stack's own output is what a user needs to see.
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        make_moto_faithful()
        dynamodb_log.reset_moto_dynamodb()  # moto's DynamoDB is one per process: this server's
        try:
            if self.log_path is not None:
                self._take_log()
                self.replayed = dynamodb_log.load(self.log_path)  # before anyone can reach the server
                self._log = dynamodb_log.WriteLog(self.log_path)
                dynamodb_log.activate(self._log)
            if self.s3_root is not None:
                self._start_s3_state()
            port = free_port()
            self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
            self.server.start()
        except BaseException:
            self.stop()
            raise
        self.endpoint = f"http://127.0.0.1:{port}"
        return self

    def _start_s3_state(self) -> None:
        import shutil

        from groundchat_cli import s3_state

        if self.reset and self.s3_root.exists():
            shutil.rmtree(self.s3_root)
        s3_state.make_moto_s3_durable()
        mirror = s3_state.S3Mirror(self.s3_root)
        self.s3_objects = s3_state.load(mirror)  # before anyone can reach the server
        s3_state.activate(mirror)
        self._s3 = mirror

    @property
    def log(self):
        """The open state log (`dynamodb_log.WriteLog`), or None in memory."""
        return self._log

    def _take_log(self) -> None:
        """One server per log: a second one would fork the state."""
        import fcntl

        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = open(self.log_path.with_name(self.log_path.name + ".lock"), "w")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock.close()
            self._lock = None
            raise StackError(f"{self.log_path} is in use by another `groundchat serve`") from None
        if self.reset:
            self.log_path.unlink(missing_ok=True)

    def stop(self) -> None:
        from groundchat_cli import dynamodb_log

        if self.server is not None:
            self.server.stop()
            if self.server._server is not None:
                self.server._server.server_close()
            self.server = None
        if self._log is not None:
            dynamodb_log.deactivate(self._log)
            self._log.close()
            self._log = None
        if self._s3 is not None:
            from groundchat_cli import s3_state

            s3_state.deactivate(self._s3)
            self._s3 = None
        if self._lock is not None:
            self._lock.close()
            self._lock = None


def prepare(settings: Settings, say=print) -> None:
    """Tables, dev user, sample runs and the corpus index: each only if missing."""
    import asyncio

    from groundchat.auth.tokens import dev_secret
    from groundchat.auth.callers import ALL_PERMISSIONS
    from groundchat.store.dynamo import Dynamo, create_tables
    from groundchat.store.users import UserStore

    dynamo = Dynamo(settings)
    created = create_tables(dynamo)
    say(f"tables: {len(created)} created")
    migrate_indexes(dynamo, say)
    dev_secret(settings, create=True)
    asyncio.run(UserStore(dynamo).grant(settings.dev_user, list(ALL_PERMISSIONS)))
    say(f"user {settings.dev_user!r} granted {', '.join(ALL_PERMISSIONS)}")
    from botocore.exceptions import BotoCoreError, ClientError

    from groundchat.attachments.storage import ImageStore

    try:
        created_bucket = ImageStore(settings).ensure_bucket()
        say(f"images: bucket {settings.images_bucket!r} {'created' if created_bucket else 'present'}")
    except (BotoCoreError, ClientError) as exc:
        # An outside DynamoDB with no S3 beside it: the chat works without images rather than not at all.
        os.environ["GROUNDCHAT_MAX_IMAGES_PER_QUESTION"] = "0"
        reset_settings_cache()
        say(f"images: off, no S3 bucket reachable ({type(exc).__name__}); set GROUNDCHAT_IMAGES_ENDPOINT to an S3 endpoint to allow them")
    from groundchat_cli.sample import load_sample_if_empty

    loaded = asyncio.run(load_sample_if_empty(dynamo))
    say(f"benchmark runs: {'sample of ' + str(loaded) + ' runs loaded' if loaded else 'already present'}")
    ingest_if_needed(settings, say)


def migrate_indexes(dynamo, say=print) -> None:
    """A store kept from before a table gained an index gets it; when the run views gain theirs, the
    run list entries written before are given the index keys (`runs repair --fix`), once."""
    from groundchat.store.run_repair import check_views
    from groundchat.store.table_indexes import IndexNotReady, add_missing_indexes
    from groundchat.store.tables import RUN_VIEWS

    try:
        added = add_missing_indexes(dynamo)
    except IndexNotReady as exc:
        raise StackError(str(exc)) from None
    if not added:
        return
    say(f"tables: index(es) added: {', '.join(added)}")
    if any(name.startswith(f"{RUN_VIEWS.logical}/") for name in added):
        report = check_views(dynamo, fix=True)
        say(f"benchmark runs: views of {report.runs} runs brought up to date ({report.fixed} item(s) rewritten"
            + (f", {report.skipped} changed meanwhile: run `groundchat runs repair`)" if report.skipped else ")"))


def ingest_if_needed(settings: Settings, say=print) -> None:
    """Build the search index from the sources present; unchanged sources do no work."""
    from groundchat.search.embeddings import make_embedder
    from groundchat.search import open_index_store
    from groundchat.search.ingest import run_ingest, specs_for
    from groundchat_cli.progress import IngestBars

    specs = specs_for(settings)
    present = [s for s in specs if s.path.exists()]
    for spec in specs:
        if spec not in present:
            say(f"corpus: {spec.name} is not at {spec.path}; set GROUNDCHAT_CORPUS_DIR to index it")
    if not present:
        return
    say("corpus: checking the search index (the first build embeds every chunk and takes a minute or two)")
    bars = IngestBars()
    try:
        summary = run_ingest(present, open_index_store(settings), make_embedder(settings.embedding_model, region=settings.aws_region),
                             progress=bars)
    finally:
        bars.close()
    for line in summary.lines():
        say(f"corpus: {line}")


def _start_state(settings: Settings, port: int, reset: bool) -> tuple[LocalDynamo | None, str]:
    """The DynamoDB this stack uses: GROUNDCHAT_DYNAMODB_ENDPOINT as it is, or moto with its log."""
    if settings.dynamodb_endpoint:
        if reset:
            raise StackError("--reset-state resets the local store only; GROUNDCHAT_DYNAMODB_ENDPOINT is set")
        _local_credentials()
        print(f"DynamoDB: {settings.dynamodb_endpoint} (GROUNDCHAT_DYNAMODB_ENDPOINT; not started here)")
        return None, settings.dynamodb_endpoint
    local = LocalDynamo(state_log(settings, port), reset=reset, s3_root=s3_state_dir(settings, port)).start()
    replayed = local.replayed
    notes = [f"{replayed.records} logged write(s) replayed"]
    if replayed.failed:
        notes.append(f"{replayed.failed} FAILED to replay")
    if replayed.compacted_to is not None:
        notes.append(f"log compacted to {replayed.compacted_to}")
    print(f"DynamoDB (moto) on {local.endpoint}; state in {local.log_path} ({'; '.join(notes)})")
    print(f"S3 (moto) on {local.endpoint}; objects in {local.s3_root} ({local.s3_objects} loaded)")
    _point_at(local.endpoint)
    return local, local.endpoint


def serve(port: int | None = None, reset_state: bool = False, public: bool = False) -> int:
    from groundchat.public.startup_check import PublicModeRefused, refuse_unsafe_public_mode

    stub = None
    try:
        if public:
            from groundchat_cli.public_stack import start_public_stand_ins

            stub = start_public_stand_ins()
        # A public chat with a hole in it refuses here, in one line, before anything starts.
        refuse_unsafe_public_mode(get_settings())
        return _serve(port, reset_state)
    except PublicModeRefused as exc:
        print(exc, file=sys.stderr)
        return 2
    finally:
        if stub is not None:
            stub.stop()


def _serve(port: int | None, reset_state: bool) -> int:
    import uvicorn

    from groundchat_cli import dynamodb_log

    settings = get_settings()
    try:
        port = port or env_port() or DEFAULT_PORT
    except StackError as exc:
        print(exc, file=sys.stderr)
        return 2
    if port_in_use(port):
        print(f"port {port} is in use (another stack?): stop it, or set PORT to another port", file=sys.stderr)
        return 1
    try:
        local, endpoint = _start_state(settings, port, reset_state)
    except (StackError, dynamodb_log.LogCorrupt) as exc:
        print(exc, file=sys.stderr)
        return 1
    node = None
    try:
        node = _start_search_node(get_settings(), port)
    except StackError as exc:
        print(exc, file=sys.stderr)
        if local is not None:
            local.stop()
        return 1
    settings = get_settings()
    url = f"http://127.0.0.1:{port}"
    stack = Stack(port=port, url=url, dynamodb_endpoint=endpoint, pid=os.getpid(), table_prefix=settings.table_prefix,
                  state=str(local.log_path) if local else None,
                  opensearch_endpoint=node.endpoint if node else None)
    write_stack_file(settings, stack)
    warming = None
    try:
        prepare(settings)
        from groundchat.store.dynamo import Dynamo
        from sweep_function.local import start_local_sweeps

        # What AWS runs on a schedule, by TTL and by the bucket's lifecycle rule (expired
        # reservations; expired conversations, whole; their images).
        from groundchat.attachments.storage import ImageStore

        current = get_settings()  # `prepare` turns images off when no S3 answers
        images = ImageStore(current) if current.max_images_per_question else None
        start_local_sweeps(Dynamo(current), images=images, retention_days=current.retention_days)
        from groundchat_cli.local_app import combined_app

        warming = _warm_the_offline_gate(current)
        print(f"groundchat on {url}/chat  (token: .venv/bin/groundchat token {settings.dev_user})")
        uvicorn.run(combined_app(), host="127.0.0.1", port=port, log_level="info")
    finally:
        if warming is not None:
            # A Ctrl-C while the model still loads: the interpreter must not finish under the model's
            # own threads (onnxruntime aborts the process, exit code -6), so the loading ends first.
            warming.join(timeout=60)
        remove_stack_file(settings, port)
        if node is not None:
            node.stop()
        if local is not None:
            local.stop()
    return 0


def _start_search_node(settings: Settings, port: int):
    """The local OpenSearch node, when the OpenSearch backend is chosen without an endpoint; its data
    under GROUNDCHAT_HOME/opensearch-<port>, kept from one start to the next (a re-ingest is then a
    no-op). Points this process's search and recall at it. None for the embedded index or an outside
    endpoint."""
    from groundchat.search import backend_kind
    from groundchat_cli.opensearch_node import LocalOpenSearch, NodeUnavailable

    if settings.opensearch_endpoint:
        if backend_kind(settings) == "opensearch":
            print(f"OpenSearch: {settings.opensearch_endpoint} (GROUNDCHAT_OPENSEARCH_ENDPOINT; not started here)")
        return None
    if settings.search_backend != "opensearch":
        return None
    node = LocalOpenSearch(Path(settings.home) / f"opensearch-{port}", free_port())
    try:
        node.start(say=print)
    except NodeUnavailable as exc:
        raise StackError(f"{exc}; or run the stack on its embedded index (unset GROUNDCHAT_SEARCH_BACKEND)") from None
    print(f"OpenSearch (local node) on {node.endpoint}; data in {node.data_dir}; heap {node.heap}")
    os.environ["GROUNDCHAT_OPENSEARCH_ENDPOINT"] = node.endpoint
    reset_settings_cache()
    return node


def _warm_the_offline_gate(settings: Settings) -> threading.Thread | None:
    """The offline answerer's gate (offline/topic_neighbours.py) loads its model and embeds its examples
    on the first question, about a second; a background thread does it while the server starts, so the
    first question does not wait. A failure here is the answerer's to report when it asks. Returns the
    thread, which the server joins before it exits."""
    from groundchat.models.adapters import parse_model_setting
    from groundchat.offline.topic_neighbours import local_topic_neighbours

    if parse_model_setting(settings.model)[0] != "offline":
        return None
    judge = local_topic_neighbours(settings.embedding_model)
    if judge is None:
        return None

    def warm() -> None:
        try:
            judge.margin("warm up")
        except Exception:  # the first question logs it, and the word lists decide alone
            pass

    thread = threading.Thread(target=warm, name="warm-offline-gate", daemon=True)
    thread.start()
    return thread
