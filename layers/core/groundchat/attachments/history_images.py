"""What a model sees of the images in earlier turns: the latest few again, as images, the rest as
a one-line stand-in, by history profile; a model without a bound sees stand-ins only. Images sent
again are stamped with the model's bound, so the history profile and the spending reservation
count them as the provider will; a stand-in is text and is counted as text.
"""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from groundchat.attachments.question import model_refusal
from groundchat.attachments.storage import ImageStore
from groundchat.attachments.token_bounds import image_formula
from groundchat.models.messages import ImageRef, Message

if TYPE_CHECKING:
    from groundchat.models.messages import ChatModel

# How many of the latest earlier images each history profile sends again (the rest: stand-ins).
EARLIER_IMAGES_SENT: dict[str, int] = {"visitor-qa": 0, "standard": 5, "long-authoring": 20}


def stand_in(image: ImageRef, why: str = "attached earlier, not sent again") -> str:
    return f"[image: {image.alt} ({image.width}×{image.height} px), {why}]"


async def history_for_model(history: list[Message], model: ChatModel, profile: str, store: ImageStore) -> list[Message]:
    """`history` with its images fitted to `model` (copies; the stored turns are never changed)."""
    if not any(m.images for m in history):
        return history
    budget = EARLIER_IMAGES_SENT.get(profile, 0) if model_refusal(model) is None else 0
    kept: set[int] = set()  # ids of the ImageRefs sent again, newest first
    for message in reversed(history):
        for image in reversed(message.images):
            if len(kept) < budget:
                kept.add(id(image))
    loaded = await _load([image for m in history for image in m.images if id(image) in kept], store)
    formula = image_formula(model.price_id) if kept else None
    fitted = []
    for message in history:
        if not message.images:
            fitted.append(message)
            continue
        images, words = [], []
        for image in message.images:
            data = loaded.get(id(image))
            if formula is not None and data is not None:
                images.append(image.model_copy(update={"data": data, "token_bound": formula.tokens(image.width, image.height)}))
            else:
                words.append(stand_in(image) if id(image) not in kept else stand_in(image, "no longer stored"))
        content = "\n".join([message.content, *words]) if words else message.content
        fitted.append(message.model_copy(update={"images": images, "content": content}))
    return fitted


async def _load(images: list[ImageRef], store: ImageStore) -> dict[int, bytes | None]:
    async def one(image: ImageRef) -> bytes | None:
        if image.data is not None:
            return image.data
        return await store.read(image.key) if image.key else None

    found = await asyncio.gather(*(one(image) for image in images))
    return {id(image): data for image, data in zip(images, found)}
