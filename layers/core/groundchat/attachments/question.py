"""The one call the answer use case makes for a question's images, before any model call and
before anything is stored: the envelope, the model's willingness, then every file by content.
Each image leaves stamped with its token bound for the model that will see it."""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from groundchat.attachments.token_bounds import NoImageTokenBound, image_formula
from groundchat.attachments.uploads import ImagesRefused, UploadProblem, Uploads
from groundchat.attachments.validation import ImageLimits, prepare_images
from groundchat.models.messages import ImageRef

if TYPE_CHECKING:
    from groundchat.config import Settings
    from groundchat.json_shapes import JsonObject
    from groundchat.models.messages import ChatModel


def model_refusal(model: ChatModel) -> str | None:
    """Why this model takes no images, or None when it has a published finite bound."""
    refused = getattr(model, "images_refused", None)
    if refused:
        return refused
    try:
        image_formula(model.price_id)
    except NoImageTokenBound as exc:
        return f"{exc}: ask in words, or configure a model that accepts images"
    return None


async def prepare_question_images(settings: Settings, model: ChatModel, uploads: Uploads) -> list[ImageRef]:
    """The question's images, resized, encoded and stamped; ImagesRefused (400) otherwise."""
    if isinstance(uploads, UploadProblem):
        raise ImagesRefused("bad-request", uploads.message)
    if not uploads:
        return []
    refused = model_refusal(model)
    if refused is not None:
        raise ImagesRefused("images-not-accepted", refused)
    # Decoding and resizing are CPU work: off the event loop, so other answers keep streaming.
    images = await asyncio.to_thread(prepare_images, list(uploads), ImageLimits.from_settings(settings))
    formula = image_formula(model.price_id)
    return [image.model_copy(update={"token_bound": formula.tokens(image.width, image.height)}) for image in images]


def images_status(settings: Settings, model: ChatModel | None) -> JsonObject:
    """What the page needs to offer attachments: whether this model takes images (and why not),
    and the limits it will be held to. `model` None: the chat is not configured."""
    if settings.max_images_per_question == 0:
        refused = "images are turned off on this server (GROUNDCHAT_MAX_IMAGES_PER_QUESTION=0)"
    else:
        refused = "the chat is not configured" if model is None else model_refusal(model)
    return {"accepted": refused is None, "reason": refused, "max_images": settings.max_images_per_question,
            "max_image_bytes": settings.max_image_bytes, "max_images_bytes": settings.max_images_bytes,
            "max_image_pixels": settings.max_image_pixels}
