"""The shapes DynamoDB's low-level client speaks, named once so the store's signatures say what
travels: an item as attribute values ({"S": "…"}, {"N": "1.5"}, {"L": [...]}, {"M": {...}}), the
parameters of one request, and one action of a transaction ({"Update": {...}}).

And the shapes of boto3's resource layer (a `Table`, TypeSerializer / TypeDeserializer), which
speaks the same items as Python values: `StoredValue`, `StoredItem`, its requests and responses,
and the few methods of the resource and its tables that the store calls."""
from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Generic, Mapping, Protocol, Required, Sequence, TypeAlias, TypedDict, TypeVar, Union

AttributeValue = Mapping[str, "str | bool | Sequence[str] | Sequence[AttributeValue] | Mapping[str, AttributeValue]"]
Item = dict[str, AttributeValue]
# The parameters of a read (query, scan): TableName, IndexName, KeyConditionExpression,
# ExpressionAttributeNames / Values, ExclusiveStartKey, ConsistentRead, Limit…
RequestParam: TypeAlias = "str | int | bool | Mapping[str, AttributeValue] | Mapping[str, str]"
Request = dict[str, RequestParam]

if TYPE_CHECKING:
    from boto3.dynamodb.conditions import ConditionBase
    from botocore.client import BaseClient as DynamoClient  # noqa: F401 - the low-level client's type


# The item shape of a BatchGetItem's keys: `Item` for the low-level client, `StoredItem` for the resource.
KeyItem = TypeVar("KeyItem")


class KeysToGet(TypedDict, Generic[KeyItem], total=False):
    """One table's part of a BatchGetItem (and of its UnprocessedKeys)."""

    Keys: list[KeyItem]
    ProjectionExpression: str
    ExpressionAttributeNames: dict[str, str]
    ConsistentRead: bool


# ---- one action of a transaction (TransactWriteItems), also the shape of the plain write -------


class UpdateRequest(TypedDict, total=False):
    """An Update: the expression is required, the condition and its placeholders are not."""

    TableName: Required[str]
    Key: Required[Item]
    UpdateExpression: Required[str]
    ConditionExpression: str
    ExpressionAttributeNames: dict[str, str]
    # Never empty when present: DynamoDB refuses an empty map.
    ExpressionAttributeValues: dict[str, AttributeValue]
    ReturnValuesOnConditionCheckFailure: str  # "ALL_OLD": a refusal carries the item as it was


class PutRequest(TypedDict, total=False):
    TableName: Required[str]
    Item: Required[Item]
    ConditionExpression: str
    ExpressionAttributeNames: dict[str, str]
    ExpressionAttributeValues: dict[str, AttributeValue]
    ReturnValuesOnConditionCheckFailure: str


class DeleteRequest(TypedDict, total=False):
    TableName: Required[str]
    Key: Required[Item]
    ConditionExpression: str
    ExpressionAttributeNames: dict[str, str]
    ExpressionAttributeValues: dict[str, AttributeValue]
    ReturnValuesOnConditionCheckFailure: str


class ConditionCheckRequest(TypedDict, total=False):
    """A condition on an item the transaction does not write (it fails the whole transaction)."""

    TableName: Required[str]
    Key: Required[Item]
    ConditionExpression: Required[str]
    ExpressionAttributeNames: dict[str, str]
    ExpressionAttributeValues: dict[str, AttributeValue]
    ReturnValuesOnConditionCheckFailure: str


class UpdateAction(TypedDict):
    Update: UpdateRequest


class PutAction(TypedDict):
    Put: PutRequest


class DeleteAction(TypedDict):
    Delete: DeleteRequest


class ConditionCheckAction(TypedDict):
    ConditionCheck: ConditionCheckRequest


# One item of a TransactWriteItems: {"Update": {...}}, {"Put": {...}}, {"Delete": {...}} or
# {"ConditionCheck": {...}}; `"Update" in action` tells them apart.
TransactAction: TypeAlias = "UpdateAction | PutAction | DeleteAction | ConditionCheckAction"


class CancellationReason(TypedDict, total=False):
    """Why a transaction refused one of its actions, in the actions' order (`Code` "None": not it)."""

    Code: str
    Message: str
    Item: Item  # the item as it was, when the action asked for it on a failed condition


class Response(TypedDict, total=False):
    """What a low-level read or write answers, of what the store reads."""

    Item: Item
    Items: list[Item]
    Attributes: Item
    LastEvaluatedKey: Item
    Responses: dict[str, list[Item]]
    UnprocessedKeys: dict[str, KeysToGet[Item]]


class ClientRead(Protocol):
    """One of the low-level client's paged reads (query, scan), called with its request."""

    def __call__(self, **request: RequestParam) -> Response: ...


# ---- CreateTable (tables.TableDef.create_args) -------------------------------------------------


class KeyElement(TypedDict):
    AttributeName: str
    KeyType: str  # "HASH" or "RANGE"


class AttributeDefinition(TypedDict):
    AttributeName: str
    AttributeType: str  # "S" or "N"


class Projection(TypedDict, total=False):
    ProjectionType: str  # "ALL" or "INCLUDE" (then NonKeyAttributes)
    NonKeyAttributes: list[str]


class GlobalSecondaryIndex(TypedDict):
    IndexName: str
    KeySchema: list[KeyElement]
    Projection: Projection


class CreateTableRequest(TypedDict, total=False):
    TableName: Required[str]
    KeySchema: Required[list[KeyElement]]
    AttributeDefinitions: Required[list[AttributeDefinition]]
    BillingMode: Required[str]
    GlobalSecondaryIndexes: list[GlobalSecondaryIndex]


# ---- the resource layer ------------------------------------------------------------------------

# An attribute as the resource layer speaks it: a Python value. Read back, every number is a
# Decimal; written, an int is taken too. No float (boto3 refuses one) and no binary (the store
# writes none); the only sets are of strings (a user's grants).
StoredValue: TypeAlias = Union[str, int, Decimal, bool, None, set[str], list["StoredValue"], dict[str, "StoredValue"]]
StoredItem = dict[str, StoredValue]
# Key, Item, ExclusiveStartKey and ExpressionAttributeValues are StoredItems; KeyConditionExpression
# and FilterExpression may be boto3's conditions (`Key("pk").eq(v)`); the rest as in `Request`.
TableParam: TypeAlias = "str | int | bool | Mapping[str, StoredValue] | Mapping[str, str] | ConditionBase"
TableRequest = dict[str, TableParam]


class TableResponse(TypedDict, total=False):
    """What a Table's read or write answers, of what the store reads."""

    Item: StoredItem
    Items: list[StoredItem]
    Attributes: StoredItem
    LastEvaluatedKey: StoredItem


class BatchGetResponse(TypedDict, total=False):
    Responses: dict[str, list[StoredItem]]
    UnprocessedKeys: dict[str, KeysToGet[StoredItem]]


class TableRead(Protocol):
    """One of a Table's paged reads (query, scan), called with its request."""

    def __call__(self, **request: TableParam) -> TableResponse: ...


class BatchWriter(Protocol):
    """A Table's batch writer: deletes sent in batches, what DynamoDB left unprocessed sent again."""

    def __enter__(self) -> BatchWriter: ...

    def __exit__(self, *exc_info: object) -> None: ...

    def delete_item(self, Key: StoredItem) -> None: ...  # noqa: N803 - boto3's keyword


class Table(Protocol):
    """What the store (and the CLI's repair) calls of boto3's `dynamodb.Table` (`Dynamo.table`)."""

    @property
    def name(self) -> str: ...

    def get_item(self, **request: TableParam) -> TableResponse: ...

    def put_item(self, **request: TableParam) -> TableResponse: ...

    def update_item(self, **request: TableParam) -> TableResponse: ...

    def delete_item(self, **request: TableParam) -> TableResponse: ...

    def query(self, **request: TableParam) -> TableResponse: ...

    def scan(self, **request: TableParam) -> TableResponse: ...

    def batch_writer(self) -> BatchWriter: ...


class ResourceMeta(Protocol):
    @property
    def client(self) -> DynamoClient: ...


class DynamoResource(Protocol):
    """What the store calls of boto3's `dynamodb` ServiceResource (`Dynamo.resource`), and the
    client beneath it (`meta.client`), whose calls the tests watch."""

    @property
    def meta(self) -> ResourceMeta: ...

    def Table(self, name: str) -> Table: ...  # noqa: N802 - boto3's name

    def batch_get_item(self, *, RequestItems: dict[str, KeysToGet[StoredItem]]) -> BatchGetResponse: ...  # noqa: N803
