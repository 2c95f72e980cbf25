"""The most tokens one image can cost, per model, from each provider's published formula.

Keyed exactly like the price table (`groundchat.spending.prices`): the configured model string. A
model without an entry accepts no images ("no published finite image token bound for MODEL"): an
entry is added deliberately, never matched by a name prefix, because a wrong guess would reserve
too little. Every formula is applied to the image as we send it (after `resize.fit_for_models`),
and where a provider's description leaves a choice open, the dearer reading is counted.

Sources (checked against the worked examples in tests/attachments/test_token_bounds.py):
- Anthropic, "Vision" guide, section "Evaluate image size" / "Calculate image costs":
  https://docs.anthropic.com/en/docs/build-with-claude/vision
- OpenAI, "Images and vision" guide, section "Calculating costs" (tile and patch formulas):
  https://platform.openai.com/docs/guides/images-vision#calculating-costs
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal
from fractions import Fraction
from typing import Protocol


class NoImageTokenBound(LookupError):
    """The model has no entry: an image sent to it could cost any number of tokens."""

    def __init__(self, model_id: str) -> None:
        super().__init__(f"no published finite image token bound for {model_id}")
        self.model_id = model_id


class ImageFormula(Protocol):
    def tokens(self, width: int, height: int) -> int: ...


@dataclass(frozen=True)
class AreaFormula:
    """Anthropic (Claude 3 and later on Bedrock): tokens = width × height / 750, after their own
    resize, which shrinks an image whose long edge is over 1568 px or which is over ~1,600 tokens.
    Our resize keeps images inside both, so this is the image as sent; for a larger one, the
    provider's resize is applied first, to its documented ceiling of 1,600 tokens."""

    pixels_per_token: int = 750
    max_long_edge: int = 1568
    max_tokens: int = 1600

    def tokens(self, width: int, height: int) -> int:
        scale = min(Fraction(1), Fraction(self.max_long_edge, max(width, height)))
        area = width * height * scale * scale
        area = min(area, Fraction(self.max_tokens * self.pixels_per_token))
        return math.ceil(area / self.pixels_per_token)


@dataclass(frozen=True)
class TileFormula:
    """OpenAI's tile formula (GPT-4o and GPT-4.1 classes), detail "high" (what we send): fit in a
    2048-px square, scale the shortest side to 768 px, then `base` + `per_tile` for each 512-px
    tile that covers the image."""

    base: int
    per_tile: int
    tile: int = 512
    box: int = 2048
    short_side: int = 768

    def tokens(self, width: int, height: int) -> int:
        w, h = Fraction(width), Fraction(height)
        fit = min(Fraction(1), Fraction(self.box) / max(w, h))
        w, h = w * fit, h * fit
        # The guide scales the shortest side *to* 768 px and does not say whether a smaller image is
        # scaled up: both readings are counted and the dearer one kept.
        to_short = Fraction(self.short_side) / min(w, h)
        readings = [(w * to_short, h * to_short)] + ([(w, h)] if to_short > 1 else [])
        tiles = max(math.ceil(rw / self.tile) * math.ceil(rh / self.tile) for rw, rh in readings)
        return self.base + self.per_tile * tiles


@dataclass(frozen=True)
class PatchFormula:
    """OpenAI's patch formula (GPT-4.1 mini and nano, o4-mini): one token per 32-px patch, at most
    1536 patches (a larger image is scaled down to fit, width first to a whole number of patches,
    as the guide's worked example does), times the model's multiplier."""

    multiplier: Decimal
    patch: int = 32
    cap: int = 1536

    def patches(self, width: int, height: int) -> int:
        count = math.ceil(width / self.patch) * math.ceil(height / self.patch)
        if count <= self.cap:
            return count
        shrink = math.sqrt(self.cap * self.patch * self.patch / (width * height))
        across = math.floor(width * shrink / self.patch)  # whole patches across the scaled width
        # The height follows the width exactly (same aspect), so no float noise adds a patch row.
        down = math.ceil(Fraction(across * self.patch * height, width) / self.patch)
        return min(self.cap, across * down)

    def tokens(self, width: int, height: int) -> int:
        scaled = Decimal(self.patches(width, height)) * self.multiplier
        return int(scaled.to_integral_value(rounding=ROUND_CEILING))


ANTHROPIC_ON_BEDROCK = AreaFormula()

IMAGE_TOKEN_BOUNDS: dict[str, ImageFormula] = {
    "bedrock:anthropic.claude-3-5-sonnet-20241022-v2:0": ANTHROPIC_ON_BEDROCK,
    "bedrock:anthropic.claude-3-haiku-20240307-v1:0": ANTHROPIC_ON_BEDROCK,
    # No entry for bedrock:anthropic.claude-3-5-haiku-20241022-v1:0 (Bedrock takes text only for
    # it) nor for the Nova models (Amazon publishes approximate counts per size, not a bound).
    "openai:gpt-4.1": TileFormula(base=85, per_tile=170),
    "openai:gpt-4o-mini": TileFormula(base=2833, per_tile=5667),
    "openai:gpt-4.1-mini": PatchFormula(Decimal("1.62")),
    "openai:gpt-4.1-nano": PatchFormula(Decimal("2.46")),
}


def image_formula(model_id: str) -> ImageFormula:
    """The model's formula; NoImageTokenBound when it has none (exact key only)."""
    formula = IMAGE_TOKEN_BOUNDS.get(model_id)
    if formula is None:
        raise NoImageTokenBound(model_id)
    return formula


def image_token_bound(model_id: str, width: int, height: int) -> int:
    return image_formula(model_id).tokens(width, height)


def dearest_image_tokens(width: int, height: int) -> int:
    """An image counted for no particular model: the most any entry charges for it. Only an
    image no request has stamped (`ImageRef.token_bound`) is counted this way."""
    return max(formula.tokens(width, height) for formula in IMAGE_TOKEN_BOUNDS.values())
