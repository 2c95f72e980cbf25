"""The per-model image token bounds: each published formula against the provider's own worked
examples, the table keyed like the price table, and no bound for a model without an entry."""
from decimal import Decimal

import pytest

from groundchat.attachments.resize import MAX_LONG_EDGE, MAX_PIXELS, target_size
from groundchat.attachments.token_bounds import (
    IMAGE_TOKEN_BOUNDS,
    AreaFormula,
    NoImageTokenBound,
    PatchFormula,
    TileFormula,
    dearest_image_tokens,
    image_token_bound,
)
from groundchat.spending.prices import BUILTIN_PRICES

SONNET = "bedrock:anthropic.claude-3-5-sonnet-20241022-v2:0"


@pytest.mark.parametrize("size, tokens", [((200, 200), 54), ((1000, 1000), 1334), ((1092, 1092), 1590)])
def test_anthropic_area_formula_matches_the_vision_guide_examples(size, tokens):
    # The guide's table: ~54, ~1334 and ~1590 tokens (width × height / 750, rounded up here).
    assert AreaFormula().tokens(*size) == tokens
    assert image_token_bound(SONNET, *size) == tokens


def test_anthropic_larger_images_are_counted_after_their_resize_at_its_ceiling():
    assert AreaFormula().tokens(4000, 3000) == 1600  # scaled down to the ~1,600-token ceiling
    assert AreaFormula().tokens(3136, 100) == 105  # long edge 1568: 1568 × 50 / 750, rounded up


@pytest.mark.parametrize("size, tokens", [((1024, 1024), 765), ((2048, 4096), 1105)])
def test_openai_tile_formula_matches_the_guides_examples(size, tokens):
    # 1024²: scaled to 768², 4 tiles → 85 + 4 × 170; 2048 × 4096: 1024 × 2048, then 768 × 1536, 6 tiles.
    assert TileFormula(base=85, per_tile=170).tokens(*size) == tokens
    assert image_token_bound("openai:gpt-4.1", *size) == tokens


def test_tile_formula_counts_a_small_image_as_if_scaled_up():
    # Whether a 500 × 300 image is scaled up to a 768-px short side is not said: the dearer reading
    # (1280 × 768, 6 tiles) is counted, never the cheaper one (1 tile, 255 tokens).
    assert TileFormula(base=85, per_tile=170).tokens(500, 300) == 85 + 6 * 170


def test_gpt_4o_mini_has_its_own_tile_prices():
    assert image_token_bound("openai:gpt-4o-mini", 1024, 1024) == 2833 + 4 * 5667


@pytest.mark.parametrize("size, patches", [((1024, 1024), 1024), ((1800, 2400), 1452)])
def test_openai_patch_formula_matches_the_guides_examples(size, patches):
    # 1800 × 2400 is 4275 patches: shrunk by √(1536·32²/(1800·2400)), width fitted to 33 whole
    # patches (1056 px), height 1408 px → 33 × 44 = 1452.
    assert PatchFormula(Decimal(1)).patches(*size) == patches


@pytest.mark.parametrize("model, small, large", [
    ("openai:gpt-4.1-mini", 1659, 2353),  # 1024 × 1.62 = 1658.88; 1452 × 1.62 = 2352.24 (rounded up)
    ("openai:gpt-4.1-nano", 2520, 3572),  # 1024 × 2.46 = 2519.04; 1452 × 2.46 = 3571.92
])
def test_patch_models_multiply_by_their_published_factor(model, small, large):
    assert image_token_bound(model, 1024, 1024) == small
    assert image_token_bound(model, 1800, 2400) == large
    assert PatchFormula(Decimal("1.72")).tokens(1024, 1024) == 1762  # o4-mini's factor: 1761.28


def test_patches_never_pass_the_cap_whatever_the_shape():
    formula = PatchFormula(Decimal(1))
    for size in [(8000, 8000), (8000, 40), (40, 8000), (1537 * 32, 32), (2049, 1537)]:
        assert formula.patches(*size) <= 1536


def test_a_model_without_an_entry_has_no_bound_and_no_prefix_matches():
    for model in ["bedrock:amazon.nova-pro-v1:0", "bedrock:anthropic.claude-3-5-haiku-20241022-v1:0",
                  "openai:gpt-4.1-mini-2025-04-14", "bedrock:anthropic.claude-3-5-sonnet", "offline", "scripted"]:
        with pytest.raises(NoImageTokenBound, match=f"^no published finite image token bound for {model}$"):
            image_token_bound(model, 100, 100)


def test_the_table_is_keyed_like_the_price_table():
    assert set(IMAGE_TOKEN_BOUNDS) <= set(BUILTIN_PRICES)


def test_our_resize_keeps_every_image_inside_the_anthropic_limits():
    for size in [(1920, 1080), (4000, 3000), (3840, 2160), (1568, 1568), (100, 7000), (500, 300)]:
        w, h = target_size(*size)
        assert max(w, h) <= MAX_LONG_EDGE and w * h <= MAX_PIXELS
        assert AreaFormula().tokens(w, h) == -(-(w * h) // 750)  # no resize of theirs left to count
    assert target_size(500, 300) == (500, 300)  # never enlarged
    assert target_size(1920, 1080) == (1429, 804)


def test_an_image_counted_for_no_model_is_counted_at_the_dearest_entry():
    assert dearest_image_tokens(1024, 1024) == max(image_token_bound(m, 1024, 1024) for m in IMAGE_TOKEN_BOUNDS)
    assert dearest_image_tokens(1024, 1024) == 2833 + 4 * 5667
