from decimal import Decimal


def total(lines: list[Decimal]) -> Decimal:
    """The invoice total of the line amounts, in whole cents."""
    return round(sum(lines, Decimal(0)), 2)
