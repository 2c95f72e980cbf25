"""Users and their grants. `can(permission, caller)` reads these for every route and tool."""
from __future__ import annotations

import time

from groundchat.auth.callers import ALL_PERMISSIONS, Caller
from groundchat.store import item_values
from groundchat.store.dynamo import Dynamo
from groundchat.store.tables import USERS


class UnknownPermission(ValueError):
    pass


# One answer asks `can` many times (every tool offered, every call, every route); grants are read
# once per user for this long. A revoked grant stops working within this time on every instance.
GRANTS_TTL_SECONDS = 5.0


class UserStore:
    def __init__(self, dynamo: Dynamo) -> None:
        self.dynamo = dynamo
        self.table = dynamo.table(USERS)
        self._cache: dict[str, tuple[float, set[str]]] = {}

    async def grant(self, user_id: str, permissions: list[str]) -> list[str]:
        bad = [p for p in permissions if p not in ALL_PERMISSIONS]
        if bad:
            raise UnknownPermission(f"unknown permission(s) {bad}; known: {', '.join(ALL_PERMISSIONS)}")
        resp = await self.dynamo.run(
            self.table.update_item,
            Key={"user_id": user_id},
            UpdateExpression="ADD grants :g",
            ExpressionAttributeValues={":g": set(permissions)},
            ReturnValues="ALL_NEW",
        )
        self._cache.pop(user_id, None)
        return sorted(item_values.strings(resp.get("Attributes", {}), "grants"))

    async def revoke(self, user_id: str, permissions: list[str]) -> list[str]:
        resp = await self.dynamo.run(
            self.table.update_item,
            Key={"user_id": user_id},
            UpdateExpression="DELETE grants :g",
            ExpressionAttributeValues={":g": set(permissions)},
            ReturnValues="ALL_NEW",
        )
        self._cache.pop(user_id, None)
        return sorted(item_values.strings(resp.get("Attributes", {}), "grants"))

    async def grants(self, user_id: str) -> set[str]:
        resp = await self.dynamo.run(self.table.get_item, Key={"user_id": user_id})
        return item_values.strings(resp.get("Item", {}), "grants")

    async def list(self) -> list[dict]:
        items, kwargs = [], {}
        while True:
            resp = await self.dynamo.run(self.table.scan, **kwargs)
            items.extend(resp.get("Items", []))
            if "LastEvaluatedKey" not in resp:
                break
            kwargs["ExclusiveStartKey"] = resp["LastEvaluatedKey"]
        return sorted(({"user_id": i["user_id"], "grants": sorted(i.get("grants", set()))} for i in items), key=lambda u: u["user_id"])

    async def can(self, permission: str, caller: Caller) -> bool:
        now = time.monotonic()
        cached = self._cache.get(caller.id)
        if cached is None or now - cached[0] > GRANTS_TTL_SECONDS:
            cached = (now, await self.grants(caller.id))
            self._cache[caller.id] = cached
        return permission in cached[1]
