"""The local stack: moto's DynamoDB server on 127.0.0.1, tables, a dev user, sample runs, the
corpus index, and the app (chat and share together) on 127.0.0.1:8000.

Only configuration differs from AWS: the same boto3 code talks to moto through `endpoint_url`.
"""
from __future__ import annotations

import os
import socket
from pathlib import Path

from groundchat.config import Settings, get_settings, reset_settings_cache

ENDPOINT_FILE = "dynamodb_endpoint"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def endpoint_file(settings: Settings) -> Path:
    return Path(settings.home) / ENDPOINT_FILE


def use_running_stack() -> Settings:
    """For CLI commands run beside `groundchat serve`: point at its DynamoDB unless configured."""
    settings = get_settings()
    if not settings.dynamodb_endpoint and endpoint_file(settings).exists():
        os.environ["GROUNDCHAT_DYNAMODB_ENDPOINT"] = endpoint_file(settings).read_text().strip()
        _local_credentials()
        reset_settings_cache()
        settings = get_settings()
    return settings


def _local_credentials() -> None:
    # moto accepts any credentials; boto3 still needs some to sign with.
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")


def make_moto_faithful():
    """Two places where moto's DynamoDB differs from the real one, in ways our budget meets:

    - It checks and writes a transaction item by item with no lock, so concurrent requests can
      interleave inside one transaction, which DynamoDB never allows (concurrent chats could then
      pass a spending cap locally). One request at a time gives moto DynamoDB's atomicity; the
      requests still race as they would against AWS.
    - Arithmetic that lands on zero stores a number like "0E-7", which moto itself then fails to
      read back (it parses numbers without a point as int). DynamoDB normalises numbers; so do we.

    Idempotent; returns the original request handler, to undo the first."""
    import threading
    from decimal import Decimal

    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.responses import DynamoHandler

    original = DynamoHandler.call_action
    if getattr(original, "_serialized", False):
        return original
    lock = threading.RLock()

    def call_action(self):
        with lock:
            return original(self)

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


def start_dynamodb(settings: Settings):
    from moto.server import ThreadedMotoServer

    port = free_port()
    import logging

    # moto's server logs every request; the local stack's own output is what a user needs to see.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    make_moto_faithful()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    Path(settings.home).mkdir(parents=True, exist_ok=True)
    endpoint_file(settings).write_text(endpoint)
    os.environ["GROUNDCHAT_DYNAMODB_ENDPOINT"] = endpoint
    _local_credentials()
    reset_settings_cache()
    return server, endpoint


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
    dev_secret(settings, create=True)
    asyncio.run(UserStore(dynamo).grant(settings.dev_user, list(ALL_PERMISSIONS)))
    say(f"user {settings.dev_user!r} granted {', '.join(ALL_PERMISSIONS)}")
    from groundchat_cli.sample import load_sample_if_empty

    loaded = asyncio.run(load_sample_if_empty(dynamo))
    say(f"benchmark runs: {'sample of ' + str(loaded) + ' runs loaded' if loaded else 'already present'}")
    ingest_if_needed(settings, say)


def ingest_if_needed(settings: Settings, say=print) -> None:
    """Build the search index from the sources present; unchanged sources do no work."""
    from groundchat.search.embeddings import make_embedder
    from groundchat.search.ingest import run_ingest, specs_for
    from groundchat.search import open_index_store

    specs = specs_for(settings)
    present = [s for s in specs if s.path.exists()]
    for spec in specs:
        if spec not in present:
            say(f"corpus: {spec.name} is not at {spec.path}; set GROUNDCHAT_CORPUS_DIR to index it")
    if not present:
        return
    say("corpus: checking the search index (the first build embeds every chunk and takes a minute or two)")
    summary = run_ingest(present, open_index_store(settings), make_embedder(settings.embedding_model, region=settings.aws_region))
    for line in summary.lines():
        say(f"corpus: {line}")


def serve(port: int | None = None) -> int:
    import uvicorn

    settings = get_settings()
    server, endpoint = start_dynamodb(settings)
    settings = get_settings()
    print(f"DynamoDB (moto) on {endpoint}")
    try:
        prepare(settings)
        from groundchat_cli.local_app import combined_app

        port = port or int(os.environ.get("PORT", "8000"))
        print(f"groundchat on http://127.0.0.1:{port}/chat  (token: .venv/bin/groundchat token {settings.dev_user})")
        uvicorn.run(combined_app(), host="127.0.0.1", port=port, log_level="info")
    finally:
        server.stop()
        endpoint_file(settings).unlink(missing_ok=True)
    return 0
