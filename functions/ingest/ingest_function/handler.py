"""Lambda entry point: run the ingest (on the EventBridge schedule or on demand) and report the summary.

In AWS the sources come from their official addresses (GROUNDCHAT_CORPUS_SOURCE=official) and the
index is OpenSearch; a failure leaves the serving index untouched and fails the invocation, so the
alarm on the function's errors sees it. A note out of date with the fetched text does not fail it:
the stack sets GROUNDCHAT_NOTES_CHECK=warn, so the index is built without that note, and every run
reports how many such notes the serving index lacks as the metric NotesOutOfDate, which has an
alarm of its own.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.metrics.provider.cloudwatch_emf.cloudwatch import AmazonCloudWatchEMFProvider

from groundchat.config import get_settings
from groundchat.search.embeddings import make_embedder
from groundchat.search.ingest import run_ingest, specs_for
from groundchat.search import open_index_store
from groundchat.observability import SERVICE, logger, namespace, tracer


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def handler(event: dict[str, Any] | None, context: Any) -> dict[str, Any]:
    settings = get_settings()
    force = bool((event or {}).get("force"))
    with tempfile.TemporaryDirectory(prefix="groundchat-corpus-") as workdir:
        summary = run_ingest(
            specs_for(settings, Path(workdir)), open_index_store(settings),
            make_embedder(settings.embedding_model, region=settings.aws_region),
            force=force, notes_check=settings.notes_check,
        )
    record_notes_out_of_date(len(summary.notes_problems))
    result = {"changed": summary.changed, "total_chunks": summary.total_chunks, "model_id": summary.model_id,
              "sources": [asdict(s) for s in summary.sources], "seconds": round(summary.seconds, 2),
              "summary": summary.lines(), "notes_problems": summary.notes_problems}
    logger.info(
        "ingest finished" if summary.changed else "ingest finished: nothing changed",
        extra={k: result[k] for k in ("changed", "total_chunks", "model_id", "seconds", "summary", "sources",
                                      "notes_problems")},
    )
    return result


def record_notes_out_of_date(count: int) -> None:
    """The note problems of the serving index (a note out of date or orphaned, left out; a section
    without its note), as an EMF line. Written every run, zero included, so the alarm sees the count
    fall back once the notes are fixed."""
    provider = AmazonCloudWatchEMFProvider(namespace=namespace(), service=os.environ.get("POWERTOOLS_SERVICE_NAME", SERVICE))
    provider.add_metric(name="NotesOutOfDate", unit=MetricUnit.Count, value=count)
    provider.flush_metrics()
