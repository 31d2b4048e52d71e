from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def total(lines: list[Decimal]) -> Decimal:
    """The invoice total: each line rounded half up to whole cents, then summed."""
    return sum((line.quantize(CENT, rounding=ROUND_HALF_UP) for line in lines), Decimal(0))
