"""A question's images in each provider's shape: a caption before each image (its place and alt
text, so the model can tell several apart), images before the question's words (Anthropic's
guidance; harmless elsewhere), and words instead of an image whose bytes are not at hand."""
from __future__ import annotations

import base64
from typing import TYPE_CHECKING

from groundchat.models.messages import Message, image_caption, image_missing_text

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonList
    from groundchat.models.converse_shapes import ConverseObject

# Converse's image formats, by the media type our attachments are sent as.
CONVERSE_IMAGE_FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp"}


def converse_image_blocks(message: Message) -> list[ConverseObject]:
    """Bedrock Converse: a text block and an `image` block with the raw bytes, per image."""
    blocks: list[ConverseObject] = []
    for position, image in enumerate(message.images, start=1):
        if image.data is None:
            blocks.append({"text": image_missing_text(image)})
            continue
        blocks.append({"text": image_caption(position, image)})
        blocks.append({"image": {"format": CONVERSE_IMAGE_FORMATS[image.media_type], "source": {"bytes": image.data}}})
    return blocks


def openai_user_parts(message: Message) -> JsonList:
    """Chat completions: content parts, an `image_url` with a data URL per image (detail "high":
    what the token bound counts, and what reading a screenshot needs), then the question."""
    parts: JsonList = []
    for position, image in enumerate(message.images, start=1):
        if image.data is None:
            parts.append({"type": "text", "text": image_missing_text(image)})
            continue
        url = f"data:{image.media_type};base64,{base64.b64encode(image.data).decode('ascii')}"
        parts.append({"type": "text", "text": image_caption(position, image)})
        parts.append({"type": "image_url", "image_url": {"url": url, "detail": "high"}})
    if message.content.strip():
        parts.append({"type": "text", "text": message.content})
    return parts
