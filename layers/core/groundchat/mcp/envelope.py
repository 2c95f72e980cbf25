"""The JSON-RPC envelope of a message posted to `/mcp`, checked before the SDK reads it, so that a
malformed one is answered in one short line ("jsonrpc: Input should be '2.0'") instead of the SDK's
dump of every branch of its message union, with the validator's internals and documentation links.

The rule is the SDK's own (its message adapter), so nothing it would accept is refused here; only
the words of a refusal are ours.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:
    from pydantic import ValidationError

    from groundchat.json_shapes import JsonObject, JsonValue

# How many problems a refusal names: the first few say what to fix; the rest would be noise.
MOST_PROBLEMS = 3


def envelope_problem(body: bytes) -> JsonObject | None:
    """A JSON-RPC error response for a body that is not one JSON-RPC message, or None."""
    import pydantic_core
    from mcp.types import INVALID_REQUEST, PARSE_ERROR, jsonrpc_message_adapter
    from pydantic import ValidationError

    try:
        message: JsonValue = pydantic_core.from_json(body)
    except ValueError:
        return _error(PARSE_ERROR, "Parse error: the body is not JSON")
    if isinstance(message, list):
        return _error(INVALID_REQUEST, "Invalid request: send one JSON-RPC message per POST, not a batch")
    if not isinstance(message, dict):
        return _error(INVALID_REQUEST, "Invalid request: a JSON-RPC message is a JSON object")
    try:
        jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValidationError as exc:
        request_id = message.get("id")
        return _error(INVALID_REQUEST, "Invalid request: " + _problems(exc, _kind(message)),
                      request_id if isinstance(request_id, (str, int)) and not isinstance(request_id, bool) else None)
    return None


def _kind(message: Mapping[str, object]) -> str:
    """The message the sender meant, from its members: only that branch's problems are worth saying."""
    if "error" in message:
        return "JSONRPCError"
    if "result" in message:
        return "JSONRPCResponse"
    return "JSONRPCRequest" if "id" in message else "JSONRPCNotification"


def _problems(exc: ValidationError, kind: str) -> str:
    said: list[str] = []
    for err in exc.errors(include_url=False, include_input=False):
        location = [str(part) for part in err["loc"]]
        if location[:1] != [kind]:
            continue
        line = f"{'.'.join(location[1:]) or 'message'}: {err['msg']}"
        if line not in said:
            said.append(line)
    return "; ".join(said[:MOST_PROBLEMS]) or "not a JSON-RPC 2.0 request, notification or response"


def _error(code: int, message: str, request_id: str | int | None = None) -> JsonObject:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
