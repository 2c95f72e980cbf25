"""Lambda entry point: run the ingest (on the EventBridge schedule or on demand) and report the summary.

In AWS the sources come from their official addresses (GROUNDCHAT_CORPUS_SOURCE=official) and the
index is OpenSearch; a failure leaves the serving index untouched and fails the invocation, so the
alarm on the function's errors sees it.
"""
from __future__ import annotations

import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from groundchat.config import get_settings
from groundchat.search.embeddings import make_embedder
from groundchat.search.ingest import run_ingest, specs_for
from groundchat.search import open_index_store
from groundchat.observability import logger, tracer


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def handler(event: dict[str, Any] | None, context: Any) -> dict[str, Any]:
    settings = get_settings()
    force = bool((event or {}).get("force"))
    with tempfile.TemporaryDirectory(prefix="groundchat-corpus-") as workdir:
        summary = run_ingest(
            specs_for(settings, Path(workdir)), open_index_store(settings),
            make_embedder(settings.embedding_model, region=settings.aws_region),
            force=force,
        )
    result = {"changed": summary.changed, "total_chunks": summary.total_chunks, "model_id": summary.model_id,
              "sources": [asdict(s) for s in summary.sources], "seconds": round(summary.seconds, 2),
              "summary": summary.lines()}
    logger.info(
        "ingest finished" if summary.changed else "ingest finished: nothing changed",
        extra={k: result[k] for k in ("changed", "total_chunks", "model_id", "seconds", "summary", "sources")},
    )
    return result
