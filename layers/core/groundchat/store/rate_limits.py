"""Rate-limit counters on DynamoDB: one item per visitor key and fixed window.

Every Lambda instance counts into the same item, and a hit is taken only by a conditional update
(`hits < room`), so however many requests race, no more than `room` of them are counted in a
window. Items carry a TTL: a window is read for one window after it ends, then deleted."""
from __future__ import annotations

from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from groundchat.store.dynamo import Dynamo, condition_failed
from groundchat.store.tables import RATE_LIMITS

if TYPE_CHECKING:
    from groundchat.store.items import Response


def bucket(key: str, window_start: int) -> str:
    return f"{key}#{window_start}"


class RateLimitStore:
    def __init__(self, dynamo: Dynamo) -> None:
        self.dynamo = dynamo
        self.name = dynamo.name(RATE_LIMITS)

    def hits_sync(self, key: str, window_start: int) -> int:
        got = self.dynamo.client.get_item(TableName=self.name, Key={"bucket": {"S": bucket(key, window_start)}},
                                          ProjectionExpression="hits")
        return int(got.get("Item", {}).get("hits", {}).get("N", "0"))

    def take_sync(self, key: str, window_start: int, room: int, expires_at: int) -> tuple[bool, int]:
        """Count one hit if fewer than `room` are counted: (taken, hits counted before this one)."""
        try:
            answer: Response = self.dynamo.client.update_item(
                TableName=self.name,
                Key={"bucket": {"S": bucket(key, window_start)}},
                UpdateExpression="ADD hits :one SET expires_at = :expires",
                ConditionExpression="attribute_not_exists(hits) OR hits < :room",
                ExpressionAttributeValues={":one": {"N": "1"}, ":room": {"N": str(room)}, ":expires": {"N": str(expires_at)}},
                ReturnValues="UPDATED_OLD",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as exc:
            if not condition_failed(exc):
                raise
            old = exc.response.get("Item", {})
            return False, int(str(old.get("hits", {}).get("N", "0")))
        return True, int(str(answer.get("Attributes", {}).get("hits", {}).get("N", "0")))

    async def hits(self, key: str, window_start: int) -> int:
        return await self.dynamo.run(self.hits_sync, key, window_start)

    async def take(self, key: str, window_start: int, room: int, expires_at: int) -> tuple[bool, int]:
        return await self.dynamo.run(self.take_sync, key, window_start, room, expires_at)
