"""The shapes DynamoDB's low-level client speaks, named once so the store's signatures say what
travels: an item as attribute values ({"S": "…"}, {"N": "1.5"}, {"L": [...]}, {"M": {...}}), the
parameters of one request, and one action of a transaction ({"Update": {...}})."""
from __future__ import annotations

from typing import TYPE_CHECKING

AttributeValue = dict[str, "str | bool | list[str] | list[AttributeValue] | dict[str, AttributeValue]"]
Item = dict[str, AttributeValue]
# TableName, Key, UpdateExpression, ConditionExpression, ExpressionAttributeNames / Values,
# IndexName, ExclusiveStartKey, ConsistentRead, Limit…
Request = dict[str, "str | int | bool | Item | dict[str, str]"]
TransactAction = dict[str, Request]

if TYPE_CHECKING:
    from botocore.client import BaseClient as DynamoClient  # noqa: F401 - the low-level client's type
