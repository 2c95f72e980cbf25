"""The scheduled functions as Lambda runs them: the packaged handler under the runtime interface
client (awslambdaric) from /var/task with the core layer in /opt, behind the real emulator, invoked
with the event EventBridge sends on their `Schedule`. The ingest embeds through a Bedrock stand-in
(boto3's own endpoint setting points the function's client at it) into the embedded index, on a
corpus small enough to convert in a moment."""
from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from decimal import Decimal
from http.server import BaseHTTPRequestHandler
from urllib.parse import unquote

import pytest

from groundchat_cli.local_lambda import invoke, load_template
from tests.lambda_shape.local_stack import (build_package, chat_env, local_dynamo, require_local_lambda, serve_in_thread,
                                            start_function)
from tests.lambda_shape.small_corpus import write_small_corpus
from tests.spending.helpers import first_request, registry
from tests.spending.test_sweep_handler import SCHEDULED_EVENT

TITAN = "amazon.titan-embed-text-v2:0"
INGEST_EVENT = {**SCHEDULED_EVENT, "resources": ["arn:aws:events:eu-west-1:123456789012:rule/groundchat-dev-IngestFunctionNightly"]}


@pytest.fixture(scope="module")
def bedrock():
    """Titan Text Embeddings v2's InvokeModel: each text's words hashed into the asked dimensions,
    so equal texts get equal vectors. Records every model id and text it was sent."""
    calls: list[tuple[str, str]] = []
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out as two writes: with Nagle's algorithm each of a thousand calls
        # would wait for the client's delayed acknowledgement (some 40 ms).
        disable_nagle_algorithm = True

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            model = unquote(self.path.split("/")[2])  # /model/<id>/invoke, the id URL-encoded
            with lock:
                calls.append((model, body["inputText"]))
            vector = [0] * body["dimensions"]
            words = re.findall(r"\w+", body["inputText"].lower())
            for word in words:
                vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % len(vector)] += 1
            data = json.dumps({"embedding": vector, "inputTextTokenCount": len(words)}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = serve_in_thread(Handler)
    yield {"url": f"http://127.0.0.1:{server.server_port}", "calls": calls}
    server.shutdown()


@pytest.fixture(scope="module")
def stack(tmp_path_factory, bedrock):
    tools = require_local_lambda()
    template = load_template()
    root = tmp_path_factory.mktemp("scheduled")
    build = build_package(root, tools)
    corpus = write_small_corpus(root / "corpus")
    with local_dynamo() as db:
        sweep = start_function(template, "SweepFunction", build, root / "sweep", chat_env(db.endpoint, root / "home"))
        # The template's ingest fetches the official sources into OpenSearch; here it reads the
        # small corpus into the embedded index, and embeds through the Bedrock stand-in.
        ingest_env = chat_env(db.endpoint, root / "home", GROUNDCHAT_CORPUS_SOURCE="local",
                              GROUNDCHAT_CORPUS_DIR=str(corpus), GROUNDCHAT_DOCS_DIR=str(corpus / "docs"),
                              GROUNDCHAT_EMBEDDING_MODEL=f"bedrock:{TITAN}",
                              AWS_ENDPOINT_URL_BEDROCK_RUNTIME=bedrock["url"])
        ingest = start_function(template, "IngestFunction", build, root / "ingest", ingest_env)
        try:
            yield {"sweep": sweep, "ingest": ingest, "db": db, "template": template, "home": root / "home",
                   "corpus": corpus}
        finally:
            sweep.stop()
            ingest.stop()


async def test_the_sweep_releases_an_expired_reservation_from_its_scheduled_event(stack, settings):
    from groundchat.spending.budget_guard import BudgetGuard
    from groundchat.store.dynamo import Dynamo

    settings = settings.model_copy(update={"dynamodb_endpoint": stack["db"].endpoint})
    dynamo = Dynamo(settings)
    request = await first_request(registry(), "ann", "q", settings.max_output_tokens)
    crashed = BudgetGuard(dynamo, settings, "ann", "c1", "r1", "scripted", reservation_ttl_seconds=600,
                          clock=lambda: time.time() - 3600)
    stale = await crashed.reserve(request, 0)

    result = invoke(stack["sweep"], SCHEDULED_EVENT)

    assert result["count"] == 1, stack["sweep"].log()
    [released] = result["released"]
    assert released["reservation_id"] == stale.id and released["caller"] == "ann"
    assert Decimal(result["amount"]) == stale.amount
    # A second run finds nothing left to release.
    assert invoke(stack["sweep"], SCHEDULED_EVENT)["count"] == 0


def test_the_sweep_ran_under_the_runtime_interface_client_with_the_templates_handler(stack):
    sweep = stack["sweep"]
    assert sweep.config.handler == stack["template"]["Resources"]["SweepFunction"]["Properties"]["Handler"]
    assert not sweep.config.adapter_layer
    assert sweep.environment()["AWS_LAMBDA_FUNCTION_TIMEOUT"] == "300"
    assert any("REPORT RequestId" in line for line in sweep.output)


def test_the_ingest_builds_the_index_from_its_scheduled_event_and_a_second_run_does_nothing(stack, bedrock):
    from groundchat.config import Settings
    from groundchat.search import open_index_store

    first = invoke(stack["ingest"], INGEST_EVENT, timeout=300)

    assert first["changed"] is True, stack["ingest"].log()
    by_source = {s["source"]: s for s in first["sources"]}
    assert set(by_source) == {"wcag22", "eaa", "docs", "questions"}
    # The small corpus's chunks, converted by the layer's code in /opt.
    assert (by_source["wcag22"]["chunks"], by_source["eaa"]["chunks"], by_source["docs"]["chunks"]) == (4, 6, 2)
    assert all(s["status"] == "converted" and s["embedded"] == s["chunks"] for s in first["sources"])
    assert first["total_chunks"] == sum(s["chunks"] for s in first["sources"])
    assert first["model_id"] == f"bedrock:{TITAN}:1024"
    # Every text went to Titan once, by the model id the template's setting names.
    assert {model for model, _ in bedrock["calls"]} == {TITAN}
    sent = len(bedrock["calls"])
    assert sent == len({text for _, text in bedrock["calls"]}) == first["total_chunks"]

    # The index the function committed, read from the host: the same chunks, the same model.
    store = open_index_store(Settings(home=stack["home"], search_backend="embedded"))
    meta = store.serving_meta()
    assert meta["model_id"] == first["model_id"] and meta["chunks"] == str(first["total_chunks"])
    [criterion] = [c for c, _ in store.serving_chunks("wcag22") if c.section == "1.1.1"]
    assert "4.5:1" in criterion.text

    second = invoke(stack["ingest"], INGEST_EVENT, timeout=300)

    assert second["changed"] is False and second["total_chunks"] == 0
    assert second["summary"] == ["nothing changed (every source hash and the model match); the serving index was kept"]
    assert len(bedrock["calls"]) == sent  # nothing embedded again
    assert store.serving_meta() == meta
    # Two invocations of one execution environment: one init, two reports.
    reports = stack["ingest"].reports(expected=2)
    assert len(reports) == 2 and "init_duration_ms" in reports[0] and "init_duration_ms" not in reports[1]
