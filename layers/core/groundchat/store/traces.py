"""Traces: one record per chat run, written for failures as well as successes.

Whoever holds `traces.read` reads them, so every step and failure passes through the redactor on
the way in (a tool argument or a debug record may echo a secret), and again on the way out for
records written before it. The question is the reader's own text and is kept as asked.
"""
from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from groundchat.json_shapes import as_list, as_object
from groundchat.redaction import redact_value
from groundchat.store.boto3_helpers import Key  # boto3 loads on first use
from groundchat.store.dynamo import Dynamo
from groundchat.store.tables import TRACES
from groundchat.store import item_values

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from groundchat.json_shapes import JsonValue
    from groundchat.store.items import StoredItem, StoredValue

# Our ceiling for the steps JSON, well under DynamoDB's 400 KB item limit.
MAX_STEPS_CHARS = 300_000


class TraceStore:
    def __init__(self, dynamo: Dynamo) -> None:
        self.dynamo = dynamo
        self.table = dynamo.table(TRACES)

    async def put(self, *, run_id: str, caller: str, conversation_id: str, started_at: float, outcome: str,
                  steps: Sequence[Mapping[str, object]], failure: Mapping[str, object] | None, question: str,
                  checks: Mapping[str, int | str] | None = None, recall: Mapping[str, object] | None = None) -> None:
        stored_steps, stored_failure = as_list(_redacted(steps)), _redacted(failure)
        steps_json = json.dumps(stored_steps, default=str)
        if len(steps_json) > MAX_STEPS_CHARS:
            steps_json = json.dumps({"cut": f"steps over {MAX_STEPS_CHARS} characters", "count": len(stored_steps), "steps": [
                {k: v for k, v in as_object(s).items() if k not in ("args", "debug")} for s in stored_steps]}, default=str)
        item = {
            "run_id": run_id,
            "caller": caller,
            "conversation_id": conversation_id,
            "started_at": datetime.fromtimestamp(started_at, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "duration_ms": int((time.time() - started_at) * 1000),
            "outcome": outcome,
            "question": question[:2000],
            "steps": steps_json,
            "failure": json.dumps(stored_failure, default=str) if stored_failure else None,
            # What the after-answer checks found (unverified refs and figures), as counts, and whether the support check ran.
            "checks": json.dumps(checks) if checks else None,
            # The recall plan: whether past conversations were offered as a source, and why.
            "recall": json.dumps(recall) if recall else None,
            "expires_at": int(time.time()) + self.dynamo.settings.retention_days * 86400,
        }
        # Put is safe here: the run id is fresh per request and only this run writes it.
        await self.dynamo.run(self.table.put_item, Item={k: v for k, v in item.items() if v is not None})

    async def get(self, run_id: str, caller: str) -> dict[str, StoredValue | JsonValue] | None:
        resp = await self.dynamo.run(self.table.get_item, Key={"run_id": run_id}, ConsistentRead=True)
        item = resp.get("Item")
        if item is None or item.get("caller") != caller:
            return None
        return _public(item)

    async def latest(self, caller: str) -> dict[str, StoredValue | JsonValue] | None:
        resp = await self.dynamo.run(
            self.table.query, IndexName="by_caller", KeyConditionExpression=Key("caller").eq(caller),
            ScanIndexForward=False, Limit=1,
        )
        items = resp.get("Items", [])
        return _public(items[0]) if items else None


def _redacted(value: object) -> JsonValue:
    # Through JSON first, as it will be stored: an object's text (default=str) is redacted too.
    return redact_value(json.loads(json.dumps(value, default=str)))


def _public(item: StoredItem) -> dict[str, StoredValue | JsonValue]:
    return {
        "run_id": item["run_id"],
        "caller": item["caller"],
        "conversation_id": item.get("conversation_id"),
        "started_at": item.get("started_at"),
        "duration_ms": item_values.whole(item, "duration_ms", 0),
        "outcome": item.get("outcome"),
        "question": item.get("question"),
        "steps": redact_value(json.loads(item_values.text(item, "steps", "[]"))),
        "failure": redact_value(json.loads(item_values.text(item, "failure"))) if item.get("failure") else None,
        "checks": json.loads(item_values.text(item, "checks")) if item.get("checks") else None,
        # The recall plan: searched or not, and why (also when it said no).
        "recall": json.loads(item_values.text(item, "recall")) if item.get("recall") else None,
    }
