"""Money as text, for people and for storage: one place below every wing that shows or stores an
amount (the spending wing, the store, the tools), so none of them reaches up into the price table.

`cost_text` is the text twin every cost in a tool result carries. A reader who sees "$0.0126"
must never have been charged more than they think, so the text rounds up at the precision shown
and a non-zero cost never reads as "$0". `money_text` is the exact plain decimal DynamoDB and JSON
keep.
"""
from __future__ import annotations

from decimal import ROUND_CEILING, Context, Decimal, localcontext

# Below a dollar, three significant digits show a per-run cost honestly ("$0.0126").
_SIGNIFICANT = 3
_MIN_DECIMALS = 2


def cost_text(amount: Decimal) -> str:
    """"$0.0126" for Decimal("0.01256"): ceiling at the shown precision, thousands separated."""
    amount = Decimal(amount)
    if not amount.is_finite():
        raise ValueError(f"not a cost: {amount}")
    if amount == 0:
        return "$0.00"
    sign = "-" if amount < 0 else ""
    magnitude = abs(amount)
    decimals = _MIN_DECIMALS
    if magnitude < 1:
        # adjusted() is the exponent of the first significant digit (0.0126 -> -2).
        decimals = max(_MIN_DECIMALS, -magnitude.adjusted() + _SIGNIFICANT - 1)
    # Enough precision that quantize never fails on large or tiny amounts.
    ctx = Context(prec=max(28, magnitude.adjusted() + decimals + 2))
    # Ceiling of the signed amount: a negative (a refund) is shown no more negative than it is.
    shown = amount.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_CEILING, context=ctx)
    with localcontext(ctx):  # formatting rounds to the context precision too
        text = f"{abs(shown):,.{decimals}f}"
    whole, _, frac = text.partition(".")
    # Trailing zeros past the cents say nothing ("$0.50", not "$0.500"); dropping them is exact.
    frac = frac.rstrip("0").ljust(_MIN_DECIMALS, "0")
    return f"{sign}${whole}.{frac}"


def money_text(amount: Decimal) -> str:
    """A Decimal as a plain decimal string ("0.000123", never "1.23E-4"), for JSON and DynamoDB."""
    text = format(Decimal(amount).normalize(), "f")
    return "0" if text in ("-0", "") else text
