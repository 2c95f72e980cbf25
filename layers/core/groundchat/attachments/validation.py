"""Each uploaded file checked by its content (never its name or declared type), then resized and
re-encoded by us. The bytes we store and send are our own encoding: nothing of the upload's
metadata (a photo's EXIF location) goes further, and the sha256 names exactly what a model saw.

Refusals are one line naming the image; the cheap checks (count, sizes) run before any decoding,
and an image's pixel count is checked from its header before its pixels are decoded.
"""
from __future__ import annotations

import hashlib
import io
import re
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, NoReturn, Sequence

from groundchat.attachments.resize import target_size
from groundchat.attachments.uploads import ImagesRefused, Upload
from groundchat.models.messages import ImageMediaType, ImageRef

if TYPE_CHECKING:
    from PIL.Image import Image

    from groundchat.config import Settings

# Pillow's names for the formats we take, and what each is sent as. A GIF, animated or not, goes
# as its first frame in PNG: OpenAI refuses animated GIFs and a screenshot is one frame anyway.
MEDIA_TYPES: dict[str, ImageMediaType] = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp"}
SENT_AS = {"PNG": "PNG", "JPEG": "JPEG", "WEBP": "WEBP", "GIF": "PNG"}
# Bedrock's Converse takes an image of at most 3.75 MB: an encoding over it is redone as JPEG.
MAX_SENT_BYTES = 3_750_000
MAX_ALT_CHARS = 300
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class ImageLimits:
    max_images: int = 5
    max_image_bytes: int = 3 * 1024 * 1024
    max_images_bytes: int = 4 * 1024 * 1024
    max_pixels: int = 25_000_000

    @classmethod
    def from_settings(cls, settings: Settings) -> "ImageLimits":
        return cls(settings.max_images_per_question, settings.max_image_bytes, settings.max_images_bytes,
                   settings.max_image_pixels)


def prepare_images(uploads: Sequence[Upload], limits: ImageLimits) -> list[ImageRef]:
    """Every upload as an image to send, or ImagesRefused("bad-image") naming the first bad one."""
    check_sizes(uploads, limits)
    return [prepare_image(upload, limits, position) for position, upload in enumerate(uploads, start=1)]


def check_sizes(uploads: Sequence[Upload], limits: ImageLimits) -> None:
    if len(uploads) > limits.max_images:
        raise ImagesRefused("bad-image", f"{len(uploads)} images: at most {limits.max_images} per question")
    for position, upload in enumerate(uploads, start=1):
        if not upload.data:
            _refuse(upload, position, "is empty")
        if len(upload.data) > limits.max_image_bytes:
            _refuse(upload, position, f"is {_size(len(upload.data))}, over the limit of {_size(limits.max_image_bytes)} per image")
    total = sum(len(u.data) for u in uploads)
    if total > limits.max_images_bytes:
        raise ImagesRefused("bad-image", f"the images add up to {_size(total)}, over the limit of "
                                         f"{_size(limits.max_images_bytes)} per question")


def prepare_image(upload: Upload, limits: ImageLimits, position: int = 1) -> ImageRef:
    from PIL import ImageOps

    alt = _alt_text(upload, position)
    decoded, kind = _decode(upload, limits, position)
    try:
        # A phone photo is drawn the way it was taken; a palette is widened so resizing blends.
        image = _working_mode(ImageOps.exif_transpose(decoded))
        image.thumbnail(target_size(*image.size))
        data, sent_as = _encode(image, SENT_AS[kind])
        width, height = image.size
    finally:
        decoded.close()
    return ImageRef(media_type=MEDIA_TYPES[sent_as], width=width, height=height, alt=alt, data=data,
                    sha256=hashlib.sha256(data).hexdigest())


def _decode(upload: Upload, limits: ImageLimits, position: int) -> tuple[Image, str]:
    from PIL import Image, UnidentifiedImageError

    with warnings.catch_warnings():
        # Pillow warns, then raises, on a canvas far beyond any limit: both are bombs to us.
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            image = Image.open(io.BytesIO(upload.data), formats=tuple(SENT_AS))
        except (Image.DecompressionBombError, Image.DecompressionBombWarning):
            _refuse(upload, position, "declares more pixels than any image we take: refused as a decompression bomb")
        except UnidentifiedImageError:
            _refuse(upload, position, "is not a PNG, JPEG, WebP or GIF image (checked by its content, not its name)")
        except (OSError, SyntaxError, ValueError, EOFError):
            _refuse(upload, position, "is damaged or truncated")
    if image.format not in SENT_AS:
        image.close()
        _refuse(upload, position, "is not a PNG, JPEG, WebP or GIF image (checked by its content, not its name)")
    width, height = image.size
    if width * height > limits.max_pixels:
        image.close()
        _refuse(upload, position, f"is {width} × {height} pixels ({width * height / 1e6:.1f} megapixels), over the "
                                  f"limit of {limits.max_pixels / 1e6:g} megapixels")
    try:
        image.load()  # a truncated file fails here, since Pillow is not told to accept one
    except Exception:
        image.close()
        _refuse(upload, position, "is damaged or truncated")
    return image, image.format


def _encode(image: Image, sent_as: str) -> tuple[bytes, str]:
    buffer = io.BytesIO()
    fitted = _in_mode_for(image, sent_as)
    # Pillow writes back what it read (a JPEG's comment, a colour profile, XMP, text chunks), and a
    # profile or a comment can name a device or a person: only the pixels travel, and a PNG's
    # transparent colour, which is part of them.
    fitted.info = {key: value for key, value in fitted.info.items() if key == "transparency"}
    if sent_as == "JPEG":
        fitted.save(buffer, "JPEG", quality=90)
    elif sent_as == "WEBP":
        fitted.save(buffer, "WEBP", quality=90)
    else:
        fitted.save(buffer, "PNG", compress_level=6)
    data = buffer.getvalue()
    if len(data) > MAX_SENT_BYTES and sent_as != "JPEG":
        return _encode(image, "JPEG")
    return data, sent_as


def _working_mode(image):
    """L, LA, RGB or RGBA: what every encoder we use takes, and what resizes smoothly."""
    if image.mode in ("L", "LA", "RGB", "RGBA"):
        return image
    has_alpha = image.mode in ("PA", "RGBa", "La") or "transparency" in image.info
    return image.convert("RGBA" if has_alpha else "RGB")


def _in_mode_for(image, sent_as: str):
    if sent_as == "PNG" or (sent_as == "WEBP" and image.mode in ("RGB", "RGBA")):
        return image
    if sent_as == "WEBP":
        return image.convert("RGBA" if image.mode == "LA" else "RGB")
    if image.mode in ("L", "RGB"):
        return image
    from PIL import Image

    # JPEG has no transparency: the image is laid on white, as a page would show it.
    rgba = image.convert("RGBA")
    flat = Image.new("RGB", rgba.size, (255, 255, 255))
    flat.paste(rgba, mask=rgba.getchannel("A"))
    return flat


def _alt_text(upload: Upload, position: int) -> str:
    if upload.alt is not None:
        alt = _CONTROL.sub(" ", upload.alt).strip()
        if len(alt) > MAX_ALT_CHARS:
            _refuse(upload, position, f"its alt text is over {MAX_ALT_CHARS} characters")
        if alt:
            return alt
    name = _file_name(upload)
    return name[:MAX_ALT_CHARS] if name else f"image {position}"


def _file_name(upload: Upload) -> str:
    """The file's own name, without any folder a browser may have sent with it."""
    return _CONTROL.sub(" ", re.split(r"[\\/]", upload.filename or "")[-1]).strip()


def _refuse(upload: Upload, position: int, reason: str) -> NoReturn:
    name = _file_name(upload)
    shown = f' ("{name[:60]}")' if name else ""
    raise ImagesRefused("bad-image", f"image {position}{shown} {reason}")


def _size(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MiB" if n >= 1024 * 1024 else f"{n / 1024:.0f} KiB"
