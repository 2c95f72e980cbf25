"""Lambda entry point: release spending reservations whose request died before settling, and remove
the recall entries of conversations that have expired or gone.

Every model step reserves its worst case against the spending caps with an expiry; a request that
crashes (a Lambda timeout, an out-of-memory kill) never settles or releases it, so until someone
sweeps, that amount stays held and the caps refuse more than they should. EventBridge runs this
every minute (reservations are leases of a minute, store/leases.py); it releases each expired reservation exactly once (see
`groundchat.spending.operator.sweep_expired`) and reports how many and how much.

A conversation's deletion that a crash left half done (store/deletion_jobs.py) is finished by the
same run: its messages, traces, images, recall entries, recall's copies, feedback and answer record;
and a first question whose process died, which only its answer record holds, is forgotten.

DynamoDB's TTL deletes an expired conversation's items, but not what the recall index keeps of it
(its questions and answers): the same run then removes those entries (`groundchat.recall.sweep`:
a range query on the entries' expiry, each conversation read before anything is removed), in
bounded rounds, and reports how many went. Reservations come first: they hold money.

It is its own function so that the only role allowed to touch the budget this way names just that
table, its expiry index and the two actions a release needs: the ingest has no business with money,
and the chat function runs behind the Web Adapter, which only passes HTTP requests to the app.
A run that fails raises, so the function's Errors alarm sees it; two runs that overlap are safe,
because each release is conditional on the reservation still being there, and removing or renewing
recall entries twice changes nothing the second time. Expired conversations themselves are DynamoDB
TTL's work in AWS; locally, `sweep_function.local` applies the same rule.
"""
from __future__ import annotations

import asyncio
import time
from decimal import Decimal
from typing import Any

from groundchat.spending.operator import sweep_expired
from groundchat.config import get_settings
from groundchat.observability import logger, record_released_reservations, tracer
from groundchat.recall.sweep import open_for_sweep, sweep_recall
from groundchat.money import money_text
from groundchat.store.deletion import sweep_deletions
from groundchat.store.deletion_jobs import cleaners_for
from groundchat.store.dynamo import Dynamo
from groundchat.store.retention import conversation_expiries_sync


def sweep(dynamo: Dynamo) -> dict[str, Any]:
    """One sweep: what was released, how many, and the amount given back (a decimal string)."""
    released = asyncio.run(sweep_expired(dynamo))
    amount = sum((Decimal(r["amount"]) for r in released), Decimal(0))
    return {"released": released, "count": len(released), "amount": money_text(amount)}


def finish_deletions(dynamo: Dynamo, recall: Any = None) -> dict[str, int]:
    """The deletions a crash left pending, finished (how many finished, how many failed again), and
    the words of first questions whose process died forgotten (how many)."""
    from groundchat.attachments.storage import ImageStore

    images = ImageStore(dynamo.settings) if dynamo.settings.max_images_per_question else None
    return asyncio.run(sweep_deletions(dynamo, cleaners_for(images, recall)))


def sweep_recall_entries(dynamo: Dynamo, recall: Any, now: float | None = None) -> dict[str, Any]:
    """The recall entries of expired or deleted conversations removed: how many, and how many
    entries of live conversations were moved to their conversation's expiry."""
    at = now if now is not None else time.time()
    return sweep_recall(recall, lambda ids: conversation_expiries_sync(dynamo, ids), at).public()


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def handler(event: dict[str, Any] | None, context: Any) -> dict[str, Any]:
    # A client per run: making one costs milliseconds beside the run's own queries.
    settings = get_settings()
    dynamo = Dynamo(settings)
    summary = sweep(dynamo)
    record_released_reservations(summary["count"], Decimal(summary["amount"]))
    logger.info(
        "released expired reservations" if summary["count"] else "no expired reservations",
        extra={"released_count": summary["count"], "released_usd": summary["amount"], "released": summary["released"]},
    )
    recall = open_for_sweep(settings)
    try:
        summary["deletions"] = finish_deletions(dynamo, recall)
        if any(summary["deletions"].values()):
            logger.info("unfinished deletions finished", extra={"deletions": summary["deletions"]})
        if recall is not None:
            summary["recall"] = sweep_recall_entries(dynamo, recall)
    finally:
        if recall is not None:
            recall.close()
    if recall is not None:
        logger.info("recall entries of expired conversations removed" if summary["recall"]["removed"]
                    else "no recall entries to remove", extra={"recall": summary["recall"]})
    if summary["deletions"]["failed"]:
        # Raised last, once everything else ran: the Errors alarm must see a deletion that keeps failing.
        raise RuntimeError(f"{summary['deletions']['failed']} deletion(s) still unfinished: see the log")
    return summary
