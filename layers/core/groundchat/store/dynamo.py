"""The boto3 handles every store module uses, and table creation for moto and first runs."""
from __future__ import annotations

import asyncio
from functools import cached_property, partial
from typing import TYPE_CHECKING, Callable, ParamSpec, TypeVar

from botocore.exceptions import ClientError

from groundchat.config import Settings
from groundchat.store.tables import ALL_TABLES, TableDef

if TYPE_CHECKING:
    from botocore.config import Config

    from groundchat.store.items import (ClientRead, DynamoClient, DynamoResource, Item, Request, StoredItem, Table,
                                        TableRead, TableRequest)

T = TypeVar("T")
P = ParamSpec("P")


class Dynamo:
    """A client and resource bound to one endpoint. Thread-safe boto3 clients; calls are run in
    a worker thread so the event loop keeps streaming while DynamoDB answers."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        from groundchat.lifecycle import on_restore

        # After a SnapStart restore the pooled connections point at peers long gone: made anew.
        on_restore(self.drop_clients, owner=self)

    def drop_clients(self) -> None:
        """Forgets the clients (and their connection pools); the next call makes new ones."""
        for name in ("client", "resource"):
            self.__dict__.pop(name, None)

    # Built on first use, not at a cold start: importing boto3 and botocore's config (~150 ms) and
    # loading the service model cost that much, and a request refused before any store call (or a
    # page) never needs them (store/boto3_helpers.py).
    @cached_property
    def _kwargs(self) -> dict[str, str | Config]:
        from botocore.config import Config

        kwargs: dict[str, str | Config] = {
            "region_name": self.settings.aws_region,
            "config": Config(retries={"max_attempts": 4, "mode": "standard"}, max_pool_connections=64),
        }
        if self.settings.dynamodb_endpoint:
            kwargs["endpoint_url"] = self.settings.dynamodb_endpoint
        return kwargs

    @cached_property
    def client(self) -> DynamoClient:
        import boto3

        return boto3.client("dynamodb", **self._kwargs)

    @cached_property
    def resource(self) -> DynamoResource:
        import boto3

        # boto3 ships no types: its resource classes are built at run time from the service model.
        return boto3.resource("dynamodb", **self._kwargs)  # pyright: ignore[reportReturnType]

    def table(self, table: TableDef) -> Table:
        return self.resource.Table(table.physical_name(self.settings))

    def name(self, table: TableDef) -> str:
        return table.physical_name(self.settings)

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        return await asyncio.to_thread(partial(fn, *args, **kwargs))


def all_pages(call: TableRead, kwargs: TableRequest) -> list[StoredItem]:
    """Every item a table's query or scan finds (Python values), page after page (`kwargs` gains the cursor)."""
    items: list[StoredItem] = []
    while True:
        page = call(**kwargs)
        items.extend(page.get("Items", []))
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def all_client_pages(call: ClientRead, kwargs: Request) -> list[Item]:
    """Every item the low-level client's query or scan finds (attribute-value maps), page after page."""
    items: list[Item] = []
    while True:
        page = call(**kwargs)
        items.extend(page.get("Items", []))
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def condition_failed(exc: ClientError) -> bool:
    """A conditional write refused because its condition did not hold (not an outage)."""
    return exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"


def create_tables(dynamo: Dynamo, tables: list[TableDef] | None = None) -> list[str]:
    """Create missing tables (idempotent). Returns the names created."""
    existing = set(dynamo.client.list_tables().get("TableNames", []))
    created = []
    for table in tables or ALL_TABLES:
        name = dynamo.name(table)
        if name in existing:
            continue
        dynamo.client.create_table(**table.create_args(dynamo.settings))
        dynamo.client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 0.2, "MaxAttempts": 50})
        if table.ttl_attribute:
            dynamo.client.update_time_to_live(
                TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": table.ttl_attribute}
            )
        created.append(name)
    return created
