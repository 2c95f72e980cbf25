"""The providers' own rules, checked on what an adapter really sends.

`assert_provider_transcript` (testing.py) checks our transcript; these check the translated
request, so a translation that drops or reorders something fails here as the provider would fail it.
"""
from __future__ import annotations

import base64
import binascii
import io
import json
from typing import Any

from groundchat_testkit.scripted import TranscriptError


class BedrockRuleBroken(TranscriptError):
    """A Converse `messages` list Bedrock would refuse."""


class OpenAIRuleBroken(TranscriptError):
    """A chat completions `messages` list an OpenAI-compatible server would refuse."""


def assert_bedrock_messages(messages: list[dict[str, Any]]) -> None:
    """Converse rules: starts with user, roles alternate, every block non-empty, toolUse only from
    the assistant, and the user turn right after an assistant turn with toolUse holds exactly one
    toolResult per toolUse (and toolResults appear nowhere else); images only from the user, each
    really an image of the format it names, within Converse's limits."""
    if not messages:
        raise BedrockRuleBroken("no messages")
    if messages[0].get("role") != "user":
        raise BedrockRuleBroken(f"message 0 is {messages[0].get('role')!r}: Converse must start with a user turn")
    previous_calls: list[str] = []
    images = 0
    for i, message in enumerate(messages):
        role = message.get("role")
        if role not in ("user", "assistant"):
            raise BedrockRuleBroken(f"message {i}: role {role!r} (system goes in `system`, not `messages`)")
        if i and messages[i - 1].get("role") == role:
            raise BedrockRuleBroken(f"message {i}: two {role} turns in a row")
        content = message.get("content")
        if not isinstance(content, list) or not content:
            raise BedrockRuleBroken(f"message {i}: empty content")
        uses: list[str] = []
        results: list[str] = []
        for j, block in enumerate(content):
            where = f"message {i} block {j}"
            if not isinstance(block, dict) or len(block) != 1:
                raise BedrockRuleBroken(f"{where}: a content block holds exactly one member, got {block!r}")
            (kind, value), = block.items()
            if kind == "text":
                if not isinstance(value, str) or not value.strip():
                    raise BedrockRuleBroken(f"{where}: blank text")
            elif kind == "toolUse":
                if role != "assistant":
                    raise BedrockRuleBroken(f"{where}: toolUse in a {role} turn")
                if not value.get("toolUseId") or not value.get("name") or not isinstance(value.get("input"), dict):
                    raise BedrockRuleBroken(f"{where}: toolUse needs toolUseId, name and an input object")
                uses.append(value["toolUseId"])
            elif kind == "cachePoint":
                if value != {"type": "default"} or j == 0:
                    raise BedrockRuleBroken(f"{where}: a cachePoint is {{'type': 'default'}} and follows content")
            elif kind == "toolResult":
                if role != "user":
                    raise BedrockRuleBroken(f"{where}: toolResult in a {role} turn")
                _check_tool_result(where, value)
                results.append(value["toolUseId"])
            elif kind == "image":
                if role != "user":
                    raise BedrockRuleBroken(f"{where}: an image in a {role} turn")
                _check_bedrock_image(where, value)
                images += 1
            else:
                raise BedrockRuleBroken(f"{where}: unexpected block {kind!r}")
        if len(set(uses)) != len(uses):
            raise BedrockRuleBroken(f"message {i}: a toolUseId used twice")
        if role == "user":
            if len(set(results)) != len(results):
                raise BedrockRuleBroken(f"message {i}: two toolResults for one toolUse")
            if set(results) != set(previous_calls):
                raise BedrockRuleBroken(
                    f"message {i}: toolResults {sorted(results)} must answer exactly the previous turn's toolUse {sorted(previous_calls)}"
                )
        previous_calls = uses
    if previous_calls:
        raise BedrockRuleBroken(f"the messages end with toolUse {previous_calls} unanswered")
    if images > BEDROCK_MAX_IMAGES:
        raise BedrockRuleBroken(f"{images} images in one request: Converse takes at most {BEDROCK_MAX_IMAGES}")


# Converse's image limits (Anthropic's models on Bedrock): format, bytes, pixels, count.
BEDROCK_IMAGE_FORMATS = {"png": "PNG", "jpeg": "JPEG", "gif": "GIF", "webp": "WEBP"}
BEDROCK_MAX_IMAGE_BYTES = 3_750_000
BEDROCK_MAX_IMAGE_SIDE = 8000
BEDROCK_MAX_IMAGES = 20


def _check_bedrock_image(where: str, value: dict[str, Any]) -> None:
    """An image block: a known format, raw bytes (never base64 text: botocore encodes them), and
    bytes that really are an image of that format within Converse's limits."""
    if set(value) != {"format", "source"} or value["format"] not in BEDROCK_IMAGE_FORMATS:
        raise BedrockRuleBroken(f"{where}: an image needs format (png|jpeg|gif|webp) and source, got {sorted(value)}")
    source = value["source"]
    if set(source) != {"bytes"} or not isinstance(source["bytes"], (bytes, bytearray)) or not source["bytes"]:
        raise BedrockRuleBroken(f"{where}: an image source is {{'bytes': <raw bytes>}}")
    _check_image_bytes(where, bytes(source["bytes"]), BEDROCK_IMAGE_FORMATS[value["format"]], BedrockRuleBroken,
                       BEDROCK_MAX_IMAGE_BYTES, BEDROCK_MAX_IMAGE_SIDE)


def _check_image_bytes(where: str, data: bytes, expected: str, error: type[TranscriptError], max_bytes: int, max_side: int) -> None:
    from PIL import Image, UnidentifiedImageError

    if len(data) > max_bytes:
        raise error(f"{where}: an image of {len(data)} bytes, over {max_bytes}")
    try:
        with Image.open(io.BytesIO(data)) as image:
            found, size = image.format, image.size
            image.verify()
    except (UnidentifiedImageError, OSError, SyntaxError) as exc:
        raise error(f"{where}: the image bytes are not an image ({exc})") from exc
    if found != expected:
        raise error(f"{where}: the bytes are {found}, the block says {expected}")
    if max(size) > max_side:
        raise error(f"{where}: an image of {size[0]}×{size[1]} px, over {max_side} px on a side")


def _check_tool_result(where: str, value: dict[str, Any]) -> None:
    if not value.get("toolUseId"):
        raise BedrockRuleBroken(f"{where}: toolResult without toolUseId")
    blocks = value.get("content")
    if not isinstance(blocks, list) or not blocks:
        raise BedrockRuleBroken(f"{where}: toolResult with empty content")
    for block in blocks:
        if "text" in block and not str(block["text"]).strip():
            raise BedrockRuleBroken(f"{where}: toolResult with blank text")
    if "status" in value and value["status"] not in ("success", "error"):
        raise BedrockRuleBroken(f"{where}: toolResult status {value['status']!r}")


def assert_bedrock_request(body: dict[str, Any]) -> None:
    """The whole converse_stream request: botocore's own validator on the service model, then the
    ordering rules it cannot express."""
    from botocore.session import get_session
    from botocore.validate import validate_parameters

    shape = get_session().get_service_model("bedrock-runtime").operation_model("ConverseStream").input_shape
    validate_parameters(body, shape)
    assert_bedrock_messages(body["messages"])
    uses_tools = any("toolUse" in b or "toolResult" in b for m in body["messages"] for b in m["content"])
    if uses_tools and not body.get("toolConfig"):
        raise BedrockRuleBroken("toolUse/toolResult blocks need a toolConfig")


def assert_openai_messages(messages: list[dict[str, Any]]) -> None:
    """Chat completions rules: every tool_call_id answered by a `tool` message before the next
    user or assistant turn, exactly once; no tool message that answers no preceding call; content a
    string (never null) beside tool calls; arguments a JSON object in a string."""
    if not messages:
        raise OpenAIRuleBroken("no messages")
    pending: set[str] = set()
    open_calls: set[str] = set()
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "system":
            if i != 0:
                raise OpenAIRuleBroken(f"message {i}: a system message after the start")
            continue
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in open_calls:
                raise OpenAIRuleBroken(f"message {i}: tool message {call_id!r} answers no call of the preceding assistant turn")
            if call_id not in pending:
                raise OpenAIRuleBroken(f"message {i}: a second answer to {call_id!r}")
            if not isinstance(message.get("content"), str) or not message["content"].strip():
                raise OpenAIRuleBroken(f"message {i}: tool message with empty content")
            pending.discard(call_id)
            continue
        if pending:
            raise OpenAIRuleBroken(f"message {i}: {role} turn while {sorted(pending)} are unanswered")
        open_calls = set()
        if role == "user":
            if isinstance(message.get("content"), list):
                _check_openai_user_parts(i, message["content"])
            elif not isinstance(message.get("content"), str):
                raise OpenAIRuleBroken(f"message {i}: user content must be text")
        elif role == "assistant":
            if not isinstance(message.get("content"), str):
                raise OpenAIRuleBroken(f"message {i}: assistant content is {message.get('content')!r}, not a string")
            calls = message.get("tool_calls")
            if calls is not None:
                if not calls:
                    raise OpenAIRuleBroken(f"message {i}: an empty tool_calls list")
                for call in calls:
                    _check_openai_call(i, call)
                ids = [c["id"] for c in calls]
                if len(set(ids)) != len(ids):
                    raise OpenAIRuleBroken(f"message {i}: a tool call id used twice")
                open_calls = set(ids)
                pending = set(ids)
            elif not message["content"]:
                raise OpenAIRuleBroken(f"message {i}: an assistant turn with neither content nor tool calls")
        else:
            raise OpenAIRuleBroken(f"message {i}: role {role!r}")
    if pending:
        raise OpenAIRuleBroken(f"the messages end with {sorted(pending)} unanswered")


# What chat completions take in an image_url part (OpenAI's vision guide): these types, a data URL
# or https URL, detail low|high|auto, at most 20 MB an image.
OPENAI_IMAGE_TYPES = {"image/png": "PNG", "image/jpeg": "JPEG", "image/webp": "WEBP", "image/gif": "GIF"}
OPENAI_MAX_IMAGE_BYTES = 20 * 1024 * 1024


def _check_openai_user_parts(i: int, parts: list[Any]) -> None:
    """A user turn as content parts: non-empty text parts, and image_url parts whose data URL
    decodes to an image of the type it names."""
    if not parts:
        raise OpenAIRuleBroken(f"message {i}: an empty list of content parts")
    for j, part in enumerate(parts):
        where = f"message {i} part {j}"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            if set(part) != {"type", "text"} or not isinstance(part["text"], str) or not part["text"].strip():
                raise OpenAIRuleBroken(f"{where}: a text part is {{type, text}} with text")
        elif kind == "image_url":
            _check_openai_image(where, part)
        else:
            raise OpenAIRuleBroken(f"{where}: a user part is text or image_url, got {kind!r}")


def _check_openai_image(where: str, part: dict[str, Any]) -> None:
    image_url = part.get("image_url")
    if set(part) != {"type", "image_url"} or not isinstance(image_url, dict) or not isinstance(image_url.get("url"), str):
        raise OpenAIRuleBroken(f"{where}: an image part is {{type, image_url: {{url, detail?}}}}")
    if set(image_url) - {"url", "detail"} or image_url.get("detail", "auto") not in ("low", "high", "auto"):
        raise OpenAIRuleBroken(f"{where}: image_url holds url and detail (low|high|auto) only")
    head, _, payload = image_url["url"].partition(",")
    media_type = head.removeprefix("data:").removesuffix(";base64")
    if not head.startswith("data:") or not head.endswith(";base64") or media_type not in OPENAI_IMAGE_TYPES:
        raise OpenAIRuleBroken(f"{where}: a data URL of a png, jpeg, webp or gif image in base64, got {head[:40]!r}")
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise OpenAIRuleBroken(f"{where}: the data URL is not base64") from exc
    _check_image_bytes(where, data, OPENAI_IMAGE_TYPES[media_type], OpenAIRuleBroken, OPENAI_MAX_IMAGE_BYTES, 10**9)


def _check_openai_call(i: int, call: dict[str, Any]) -> None:
    if not call.get("id") or call.get("type") != "function":
        raise OpenAIRuleBroken(f"message {i}: a tool call needs an id and type 'function': {call!r}")
    function = call.get("function") or {}
    if not function.get("name") or not isinstance(function.get("arguments"), str):
        raise OpenAIRuleBroken(f"message {i}: a tool call needs function.name and function.arguments as a string")
    try:
        args = json.loads(function["arguments"])
    except json.JSONDecodeError as exc:
        raise OpenAIRuleBroken(f"message {i}: arguments are not JSON: {function['arguments']!r}") from exc
    if not isinstance(args, dict):
        raise OpenAIRuleBroken(f"message {i}: arguments must be a JSON object")
