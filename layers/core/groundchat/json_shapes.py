"""The shapes of JSON as it travels: tool arguments and results, provider payloads, stored
documents and frames. One recursive alias below every wing, so a value that is "some JSON" says so
instead of `Any`.

Pydantic models keep `pydantic.JsonValue` (it validates) where a value is JSON by construction,
and `Jsonable` where it only has to travel as JSON (a tool's result may hold a Decimal read from
DynamoDB: it goes as its text, as every frame always sent it). Plain annotations use the aliases,
which cost nothing at run time under `from __future__ import annotations`.
"""
from __future__ import annotations

from typing import Annotated, TypeAlias, Union

import pydantic
from pydantic_core import to_jsonable_python

JsonScalar: TypeAlias = Union[str, int, float, bool, None]
JsonValue: TypeAlias = Union[JsonScalar, list["JsonValue"], dict[str, "JsonValue"]]
JsonObject: TypeAlias = dict[str, JsonValue]
JsonList: TypeAlias = list[JsonValue]

# For pydantic fields: any value that serialises to JSON, held as its JSON form.
Jsonable = Annotated[pydantic.JsonValue, pydantic.BeforeValidator(to_jsonable_python)]


# Reading a value whose shape nothing promised (a model's view, a provider's answer): the array or
# object it is, or an empty one, so a wrong shape reads as missing instead of failing on an index.
def as_list(value: JsonValue) -> JsonList:
    return value if isinstance(value, list) else []


def as_object(value: JsonValue) -> JsonObject:
    return value if isinstance(value, dict) else {}
