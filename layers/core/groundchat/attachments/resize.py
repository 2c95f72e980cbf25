"""Our own resize: every image is sent inside the limits each provider documents for its own
resize (Anthropic: long edge at most 1568 px and about 1.15 megapixels; OpenAI's high detail:
768 px on the short side within 2000 px on the long one is what it keeps), so no provider resizes
it again and the token bound is counted on the image exactly as sent."""
from __future__ import annotations

import math

MAX_LONG_EDGE = 1568
MAX_PIXELS = 1_150_000


def target_size(width: int, height: int) -> tuple[int, int]:
    """The size we send: never larger than the upload, aspect kept, inside both limits."""
    scale = min(1.0, MAX_LONG_EDGE / max(width, height), math.sqrt(MAX_PIXELS / (width * height)))
    if scale >= 1.0:
        return width, height
    return max(1, math.floor(width * scale)), max(1, math.floor(height * scale))
