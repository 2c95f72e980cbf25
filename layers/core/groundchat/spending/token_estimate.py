"""How many input tokens a request can be, counted high: the spending reservation and the history
profiles both count with this, so a history that fits never surprises the budget."""
from __future__ import annotations

import json
import math

from groundchat.models.messages import ModelRequest

# What providers add around what we send: Anthropic's tool-use preamble is a few hundred tokens
# on the models we price, and each turn carries role markers and separators.
REQUEST_OVERHEAD_TOKENS = 500
PER_MESSAGE_OVERHEAD_TOKENS = 8


def estimate_tokens(text: str) -> int:
    """A deliberately high token count for text we are about to send.

    Byte-level BPE tokenizers average about four characters of English per token and a little
    over three for JSON and code; one token per three UTF-8 bytes, rounded up, is therefore above
    the real count for what we send (prose, JSON tool results and schemas), and counting bytes
    rather than characters keeps it above for non-Latin scripts too, whose characters are 2-4
    bytes and often a token or more each.
    """
    return math.ceil(len(text.encode("utf-8")) / 3)


def estimate_request_tokens(request: ModelRequest) -> int:
    """Input tokens of a request, counted high: everything we send (system prompt, every message
    with its tool calls and results, the tool schemas) serialized as JSON, which is wordier than
    any provider's own encoding of the same content, at one token per three UTF-8 bytes (see
    `estimate_tokens`), plus the provider's own framing."""
    payload = json.dumps(
        {
            "system": request.system,
            # An image's description (key, hash, size, alt) is counted as text; its pixels below.
            "messages": [m.model_dump(mode="json", exclude_none=True, exclude=None if m.images else {"images"})
                         for m in request.messages],
            "tools": [t.model_dump(mode="json") for t in request.tools],
        },
        ensure_ascii=False,
        default=str,
    )
    return (estimate_tokens(payload) + estimate_image_tokens(request) + REQUEST_OVERHEAD_TOKENS
            + PER_MESSAGE_OVERHEAD_TOKENS * (len(request.messages) + 1))


def estimate_image_tokens(request: ModelRequest) -> int:
    """Every image at the worst case of its bound: the bound stamped for the model about to see it
    (`groundchat.attachments.question`), or, for an image no request stamped, the most any model
    in the bounds table would charge for it. Never the bytes: no provider bills an image as text."""
    from groundchat.attachments.token_bounds import dearest_image_tokens

    return sum(
        image.token_bound if image.token_bound is not None else dearest_image_tokens(image.width, image.height)
        for message in request.messages
        for image in message.images
    )
