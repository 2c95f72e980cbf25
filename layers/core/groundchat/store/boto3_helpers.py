"""boto3's DynamoDB conditions and type (de)serializers, loaded when first called.

Importing anything of boto3 loads the package, its session and s3transfer (~75 ms), and
`botocore.config` another ~70 ms with urllib3. Every function imports the store modules at a cold
start, but only a request that reaches DynamoDB needs boto3, and the client it builds
(store/dynamo.py) loads it then. So the chat's pages and assets are served without it, and the
first request that reads the store pays for it once (docs/engineering/cold-import.md).
These stand in for boto3's own names with the same calls: `Key("pk").eq(v)`,
`TypeSerializer().serialize(v)`, `TypeDeserializer().deserialize(a)`.
"""
from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from boto3.dynamodb import conditions, types as dynamodb_types

    from groundchat.store.items import AttributeValue, StoredValue


def Key(name: str) -> conditions.Key:  # noqa: N802 - boto3's name, so call sites read as boto3's
    from boto3.dynamodb.conditions import Key as key

    return key(name)


def Attr(name: str) -> conditions.Attr:  # noqa: N802
    from boto3.dynamodb.conditions import Attr as attr

    return attr(name)


class TypeSerializer:
    def serialize(self, value: StoredValue) -> AttributeValue:
        return _serializer().serialize(value)


class TypeDeserializer:
    def deserialize(self, value: AttributeValue) -> StoredValue:
        return _deserializer().deserialize(value)


@cache
def _serializer() -> dynamodb_types.TypeSerializer:
    from boto3.dynamodb.types import TypeSerializer as serializer

    return serializer()


@cache
def _deserializer() -> dynamodb_types.TypeDeserializer:
    from boto3.dynamodb.types import TypeDeserializer as deserializer

    return deserializer()
