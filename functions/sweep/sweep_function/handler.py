"""Lambda entry point: release spending reservations whose request died before settling.

Every model step reserves its worst case against the spending caps with an expiry; a request that
crashes (a Lambda timeout, an out-of-memory kill) never settles or releases it, so until someone
sweeps, that amount stays held and the caps refuse more than they should. EventBridge runs this
every 15 minutes; it releases each expired reservation exactly once (see
`groundchat.spending.operator.sweep_expired`) and reports how many and how much.

It is its own function so that the only role allowed to touch the budget this way names just that
table, its expiry index and the two actions a release needs: the ingest has no business with money,
and the chat function runs behind the Web Adapter, which only passes HTTP requests to the app.
A run that fails raises, so the function's Errors alarm sees it; two runs that overlap are safe,
because each release is conditional on the reservation still being there. Expired conversations
are DynamoDB TTL's work in AWS; locally, `sweep_function.local` applies the same rule.
"""
from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

from groundchat.spending.operator import sweep_expired
from groundchat.config import get_settings
from groundchat.observability import logger, record_released_reservations, tracer
from groundchat.spending.prices import money_text
from groundchat.store.dynamo import Dynamo


def sweep(dynamo: Dynamo) -> dict[str, Any]:
    """One sweep: what was released, how many, and the amount given back (a decimal string)."""
    released = asyncio.run(sweep_expired(dynamo))
    amount = sum((Decimal(r["amount"]) for r in released), Decimal(0))
    return {"released": released, "count": len(released), "amount": money_text(amount)}


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
def handler(event: dict[str, Any] | None, context: Any) -> dict[str, Any]:
    # A client per run: the schedule is every 15 minutes, so there is nothing worth keeping warm.
    summary = sweep(Dynamo(get_settings()))
    record_released_reservations(summary["count"], Decimal(summary["amount"]))
    logger.info(
        "released expired reservations" if summary["count"] else "no expired reservations",
        extra={"released_count": summary["count"], "released_usd": summary["amount"], "released": summary["released"]},
    )
    return summary
