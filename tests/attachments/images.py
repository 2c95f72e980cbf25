"""Image files made in the test, so every case is a real file of known content."""
from __future__ import annotations

import io
import struct
import zlib

from PIL import Image, ImageDraw


def picture(width: int, height: int, fmt: str = "PNG", mode: str = "RGB", **save: object) -> bytes:
    """A screenshot-like picture: a light page with dark bars of 'text' on it."""
    image = Image.new(mode, (width, height), "white" if mode in ("RGB", "RGBA", "L") else 0)
    draw = ImageDraw.Draw(image)
    for y in range(8, height - 8, 24):
        draw.rectangle([8, y, max(9, width // 2), y + 10], fill="black" if mode in ("RGB", "RGBA", "L") else 1)
    buffer = io.BytesIO()
    image.save(buffer, fmt, **save)
    return buffer.getvalue()


def photo_with_location(width: int = 640, height: int = 480) -> bytes:
    """A JPEG carrying EXIF GPS tags and an orientation (rotated 90°), as phones write them."""
    image = Image.new("RGB", (width, height), (30, 120, 200))
    exif = Image.Exif()
    exif[0x0112] = 6  # orientation: rotate 90° clockwise to display
    exif[0x8825] = {1: "N", 2: (48.0, 51.0, 24.0), 3: "E", 4: (2.0, 21.0, 3.0)}  # GPS
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", exif=exif)
    return buffer.getvalue()


def animated_gif(width: int = 120, height: int = 80, frames: int = 3) -> bytes:
    images = [Image.new("P", (width, height), i * 40) for i in range(frames)]
    buffer = io.BytesIO()
    images[0].save(buffer, "GIF", save_all=True, append_images=images[1:], duration=100, loop=0)
    return buffer.getvalue()


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def bomb_png(width: int = 10_000, height: int = 10_000) -> bytes:
    """A real decompression bomb: a grey PNG of width × height pixels, all zero, whose compressed
    data is a few hundred KB (100 MB once decoded at the default size)."""
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    packer = zlib.compressobj(9)
    row = b"\x00" * (width + 1)  # filter byte + pixels
    body = b"".join(packer.compress(row * 100) for _ in range(height // 100)) + packer.flush()
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", body) + _chunk(b"IEND", b"")
