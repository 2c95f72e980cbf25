"""Global indexes a table's definition gained after the table was made.

`create_tables` leaves an existing table as it is, so a local store kept from before an index was
added (the run views' rule × field indexes) has the table without it. This adds what is missing,
one UpdateTable per index: DynamoDB creates at most one index per call and takes the next call
only once the table is ACTIVE again. An index lists the items that already have its key
attributes at once (DynamoDB backfills it); items written before the attributes existed need them
written (`groundchat runs repair --fix` for the run views).

A deployed stack gets its indexes from template.yaml instead: CloudFormation, too, adds one index
to an existing table per stack update (docs/engineering/benchmark-store.md).
"""
from __future__ import annotations

import time

from botocore.exceptions import ClientError

from groundchat.store.dynamo import Dynamo
from groundchat.store.tables import ALL_TABLES, TableDef

_WAIT_SECONDS = 600.0  # an index on a large table in AWS backfills for minutes; moto's is ready at once
_POLL_SECONDS = 0.2


class IndexNotReady(Exception):
    """An index being added did not become ACTIVE in time: the message is one line to print."""


def missing_indexes(dynamo: Dynamo, table: TableDef) -> list[str]:
    """The names of the table's global indexes that the table lacks (none when there is no table:
    `create_tables` makes it with every index)."""
    try:
        described = dynamo.client.describe_table(TableName=dynamo.name(table))["Table"]
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
            return []
        raise
    present = {ix["IndexName"] for ix in described.get("GlobalSecondaryIndexes", [])}
    return [ix.name for ix in table.indexes if ix.name not in present]


def add_missing_indexes(dynamo: Dynamo, tables: list[TableDef] | None = None) -> list[str]:
    """Adds every global index the given tables (default: all) define and lack, each once ACTIVE
    before the next; returns them as "table/index". Idempotent."""
    added = []
    for table in tables or ALL_TABLES:
        missing = missing_indexes(dynamo, table) if table.indexes else []
        if not missing:
            continue
        args = table.create_args(dynamo.settings)
        by_name = {ix["IndexName"]: ix for ix in args.get("GlobalSecondaryIndexes", [])}
        for name in missing:
            dynamo.client.update_table(TableName=args["TableName"], AttributeDefinitions=args["AttributeDefinitions"],
                                       GlobalSecondaryIndexUpdates=[{"Create": by_name[name]}])
            _wait_active(dynamo, args["TableName"], name)
            added.append(f"{table.logical}/{name}")
    return added


def _wait_active(dynamo: Dynamo, table_name: str, index_name: str) -> None:
    deadline = time.monotonic() + _WAIT_SECONDS
    while True:
        described = dynamo.client.describe_table(TableName=table_name)["Table"]
        status = {ix["IndexName"]: ix.get("IndexStatus", "ACTIVE") for ix in described.get("GlobalSecondaryIndexes", [])}
        if described.get("TableStatus", "ACTIVE") == "ACTIVE" and status.get(index_name) == "ACTIVE":
            return
        if time.monotonic() > deadline:
            raise IndexNotReady(f"index {index_name} of {table_name} is still {status.get(index_name, 'absent')} "
                                f"after {_WAIT_SECONDS:.0f} s; run the command again once it is ACTIVE")
        time.sleep(_POLL_SECONDS)
