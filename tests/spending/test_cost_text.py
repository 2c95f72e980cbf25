"""cost_text: never rounded down, never "$0" for a non-zero cost, enough digits to show it."""
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundchat.money import cost_text


def parse(text: str) -> Decimal:
    assert text.startswith("$"), text
    return Decimal(text[1:].replace(",", ""))


@pytest.mark.parametrize(
    "amount, text",
    [
        ("0", "$0.00"),
        ("0.0126", "$0.0126"),
        ("0.01251", "$0.0126"),  # rounded up, not to nearest
        ("0.5", "$0.50"),
        ("0.000000012", "$0.000000012"),
        ("0.0000001", "$0.0000001"),
        ("1", "$1.00"),
        ("1.001", "$1.01"),
        ("9.999", "$10.00"),
        ("1234.5", "$1,234.50"),
    ],
)
def test_examples(amount, text):
    assert cost_text(Decimal(amount)) == text


def test_rejects_non_finite():
    with pytest.raises(ValueError):
        cost_text(Decimal("NaN"))


amounts = st.decimals(min_value=Decimal(0), max_value=Decimal("1e9"), allow_nan=False, allow_infinity=False, places=None)


@settings(max_examples=500)
@given(amounts)
def test_never_rounds_down_and_never_zero(amount):
    text = cost_text(amount)
    shown = parse(text)
    assert shown >= amount
    if amount > 0:
        assert shown > 0 and text != "$0.00"


@settings(max_examples=300)
@given(st.decimals(min_value=Decimal("1e-20"), max_value=Decimal("0.99"), allow_nan=False, allow_infinity=False))
def test_small_costs_keep_at_least_two_significant_digits(amount):
    shown = parse(cost_text(amount))
    # Within 1% above the amount: two (here three) significant digits, never a coarse ceiling.
    assert shown <= amount * Decimal("1.01") + Decimal("1e-30")
