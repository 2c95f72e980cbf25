"""The shapes of JSON as it travels: tool arguments and results, provider payloads, stored
documents and frames. One recursive alias below every wing, so a value that is "some JSON" says so
instead of `Any`.

Pydantic models keep `pydantic.JsonValue` (it validates); plain annotations use these, which cost
nothing at run time under `from __future__ import annotations`.
"""
from __future__ import annotations

from typing import TypeAlias, Union

JsonScalar: TypeAlias = Union[str, int, float, bool, None]
JsonValue: TypeAlias = Union[JsonScalar, list["JsonValue"], dict[str, "JsonValue"]]
JsonObject: TypeAlias = dict[str, JsonValue]
JsonList: TypeAlias = list[JsonValue]
