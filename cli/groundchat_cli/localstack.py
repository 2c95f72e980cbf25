"""The local stack: moto's server on 127.0.0.1 for DynamoDB (its state logged to disk) and S3 beside
it (the images bucket, its objects kept as files), tables, a dev user, sample runs, the corpus
index, and the app (chat and share together) on 127.0.0.1:$PORT.

Only configuration differs from AWS: the same boto3 code talks to moto through `endpoint_url`.

With `GROUNDCHAT_SEARCH_BACKEND=opensearch` and no `GROUNDCHAT_OPENSEARCH_ENDPOINT`, the stack also
runs a local OpenSearch node (opensearch_node.py), ingests into it through the same code as AWS, and
serves the chat's search and recall from it; the node stops with the stack.

`serve` writes the stack's address file (stack_address.py), through which every other command finds
it; moto itself is moto_store.py.
"""
from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from groundchat.config import Settings, get_settings, reset_settings_cache
from groundchat_cli.moto_store import LocalDynamo
from groundchat_cli.stack_address import (
    DEFAULT_PORT, Stack, StackError, _local_credentials, _point_at, env_port, free_port, port_in_use,
    remove_stack_file, s3_state_dir, state_log, write_stack_file,
)

if TYPE_CHECKING:
    import uvicorn


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
    from groundchat_cli.run_repair import check_views
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

    stub = collector = None
    try:
        if public:
            from groundchat_cli.public_stack import start_public_stand_ins

            stub = start_public_stand_ins()
        # A public chat with a hole in it refuses here, in one line, before anything starts.
        refuse_unsafe_public_mode(get_settings())
        if get_settings().local_collector:
            from groundchat_cli.local_collector import start_local_collector

            collector = start_local_collector(get_settings().local_collector)
        return _serve(port, reset_state)
    except PublicModeRefused as exc:
        print(exc, file=sys.stderr)
        return 2
    except StackError as exc:
        print(exc, file=sys.stderr)
        return 1
    finally:
        if stub is not None:
            stub.stop()
        if collector is not None:
            collector.stop()


def local_server_config(app: object, port: int) -> uvicorn.Config:
    """How the local stack serves: on this machine only, and with no proxy in front of it, so
    X-Forwarded-For / -Proto are whatever the client wrote and never name the visitor's address
    (the rate limit's key) or the scheme (the origin check's)."""
    import uvicorn

    return uvicorn.Config(app, host="127.0.0.1", port=port, log_level="info", proxy_headers=False)


def _serve(port: int | None, reset_state: bool) -> int:
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
        start_local_sweeps(Dynamo(current), images=images, retention_days=current.retention_days,
                           after=local.forget_deleted if local is not None else None)
        from groundchat_cli.local_app import combined_app

        warming = _warm_the_offline_gate(current)
        print(f"groundchat on {url}/chat  (token: .venv/bin/groundchat token {settings.dev_user})")
        import uvicorn

        try:
            uvicorn.Server(local_server_config(combined_app(), port)).run()
        except KeyboardInterrupt:
            pass  # Ctrl-C: the server re-raises the signal once it has shut down (as uvicorn.run handles it)
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
        from groundchat.warm_up import warm_up

        try:
            # What the chat function warms at its init (the model, the gate's examples, the bank's
            # words), then the heap the ingest and the loading freed goes back to the system.
            warm_up(settings)
        except Exception:  # the first question logs it, and the word lists decide alone
            pass

    thread = threading.Thread(target=warm, name="warm-offline-gate", daemon=True)
    thread.start()
    return thread
