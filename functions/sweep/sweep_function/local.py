"""The local stack's sweep: what AWS does on a schedule and by TTL, done by one background thread.

In AWS, EventBridge runs this function's handler every minute (expired spending reservations,
and recall entries of expired conversations) and DynamoDB's TTL deletes expired conversations,
messages and traces. The local DynamoDB deletes nothing by TTL, so the local stack runs both here,
on the same period: the TTL rule is the same one (`groundchat.store.retention.expire_due`), so a
conversation expires whole locally as in AWS, and the recall sweep is the same code as there.
"""
from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from groundchat.recall.sweep import open_for_sweep, sweep_recall
from groundchat.spending.operator import sweep_expired
from groundchat.store.deletion import sweep_deletions
from groundchat.store.deletion_jobs import cleaners_for
from groundchat.store.dynamo import Dynamo
from groundchat.store.retention import conversation_expiries_sync, expire_due

PERIOD_SECONDS = 60
log = logging.getLogger("groundchat.sweep")


def sweep_once(dynamo: Dynamo, now: float | None = None, images: Any = None, retention_days: int = 0,
               recall: Any = None) -> dict[str, Any]:
    """One local sweep: reservations released, every deletion a crash left unfinished finished (and
    the words of first questions whose process died forgotten),
    every item whose expiry has come deleted, (given the images bucket) every image past the
    bucket's lifecycle rule, and (given the recall index) the recall entries of every conversation
    that has expired or gone."""
    at = now if now is not None else time.time()
    released = asyncio.run(sweep_expired(dynamo, now))
    deletions = asyncio.run(sweep_deletions(dynamo, cleaners_for(images, recall), now))
    expired = asyncio.run(expire_due(dynamo, now))
    if images is not None and retention_days:
        expired["images"] = asyncio.run(images.expire_older_than(retention_days, at))
    summary: dict[str, Any] = {"released": len(released), "expired": expired, "deletions": deletions}
    if recall is not None:
        summary["recall"] = sweep_recall(recall, lambda ids: conversation_expiries_sync(dynamo, ids), at).public()
    return summary


def start_local_sweeps(dynamo: Dynamo, period: float = PERIOD_SECONDS, images: Any = None,
                       retention_days: int = 0, recall: Any = None,
                       after: Callable[[], object] | None = None) -> threading.Event:
    """Sweep now and every `period` seconds in a daemon thread; set the returned event to stop.
    Without `recall`, each sweep opens the configured recall index (if there is one yet). `after`
    runs after each sweep (the local stack compacts its state log there, once something was deleted)."""
    stop = threading.Event()

    def run() -> None:
        while True:
            opened = None
            try:
                index = recall if recall is not None else (opened := open_for_sweep(dynamo.settings))
                summary = sweep_once(dynamo, images=images, retention_days=retention_days, recall=index)
                if summary["released"] or any(summary["expired"].values()) or any(summary["deletions"].values()) \
                        or summary.get("recall", {}).get("removed"):
                    log.info("local sweep: %s", summary)
                if after is not None:
                    after()
            except Exception:  # a sweep that fails is tried again next period; the stack keeps serving
                log.exception("local sweep failed")
            finally:
                if opened is not None:
                    opened.close()
            if stop.wait(period):
                return

    threading.Thread(target=run, name="groundchat-local-sweep", daemon=True).start()
    return stop
