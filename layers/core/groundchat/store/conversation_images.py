"""A conversation's images as its messages hold them: a reference in the message item (key, hash,
media type, size, alt text) and the bytes in S3 (`groundchat.attachments.storage`).

The bytes are written before the exchange's transaction, so a committed message never names an
image that is not there; an exchange that then fails to commit leaves its images to the bucket's
lifecycle rule (same prefix, same retention), never to a message. Deleting a conversation deletes
its prefix (`delete_conversation_images`), and every answer that moves a conversation's expiry
renews its images, so they expire with it.
"""
from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Protocol

from groundchat.store import item_values
from groundchat.attachments.storage import ImageStore, image_key
from groundchat.models.messages import ImageRef, Message

if TYPE_CHECKING:
    from groundchat.json_shapes import JsonList
    from groundchat.store.items import StoredItem

log = logging.getLogger("groundchat.store")

_STORED = ("key", "sha256", "media_type", "width", "height", "alt")
_SHOWN = ("sha256", "media_type", "width", "height", "alt")


class ConversationImages(Protocol):
    """What `read_image` reads a conversation's images through: a `ConversationStore`."""

    images: ImageStore

    async def read_items(self, conversation_id: str) -> list[StoredItem]: ...


async def store_images(store: ImageStore, conversation_id: str, messages: list[Message]) -> bool:
    """Puts the bytes of every image the exchange brings (the question's; the same image twice is
    one object). Returns whether the exchange holds any image."""
    fresh = {image.sha256: image for m in messages for image in m.images if image.data is not None}
    await asyncio.gather(*(store.put(conversation_id, image) for image in fresh.values()))
    return any(m.images for m in messages)


def images_attribute(conversation_id: str, message: Message) -> str | None:
    """The message item's `images`: a JSON list of references, None without images."""
    if not message.images:
        return None
    refs = [{**image.model_dump(include=set(_STORED)), "key": image.key or image_key(conversation_id, image)}
            for image in message.images]
    return json.dumps(refs)


def is_sha256(text: str) -> bool:
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)


def images_from_attribute(raw: str | None) -> list[ImageRef]:
    return [ImageRef.model_validate(ref) for ref in json.loads(raw)] if raw else []


def public_images(raw: str | None) -> JsonList:
    """What a page needs to draw a stored message's images: never the S3 key."""
    return [{name: ref[name] for name in _SHOWN} for ref in json.loads(raw)] if raw else []


async def renew_images(store: ImageStore, conversation_id: str) -> None:
    """After an answer moved the conversation's expiry. The answer is committed already: a renew
    that fails is logged, and the next answer renews again."""
    try:
        await store.renew(conversation_id)
    except Exception:
        log.warning("could not renew the images of conversation %s", conversation_id, exc_info=True)


async def delete_conversation_images(store: ImageStore, conversation_id: str) -> int:
    """Every image of a deleted conversation; returns how many went."""
    return await store.delete_conversation(conversation_id)


async def read_image(conversations: ConversationImages, conversation_id: str, sha256: str) -> tuple[bytes, str] | None:
    """(bytes, media type) of one image of a conversation, found by its hash among the stored
    messages, so only an image the conversation holds can be read; None otherwise or when gone.
    The caller has checked who may see the conversation (its owner, or anyone once it is shared)."""
    for item in await conversations.read_items(conversation_id):
        for image in images_from_attribute(item_values.optional_text(item, "images")):
            if image.sha256 == sha256:
                data = await conversations.images.read(image.key)
                return (data, image.media_type) if data is not None else None
    return None
