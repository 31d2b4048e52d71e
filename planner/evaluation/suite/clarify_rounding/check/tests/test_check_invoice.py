from decimal import Decimal

from invoice import total


def test_each_line_rounds_half_up_before_summing() -> None:
    assert total([Decimal("0.125"), Decimal("0.125")]) == Decimal("0.26")
    assert total([Decimal("0.135")]) == Decimal("0.14")
    assert total([Decimal("1.10"), Decimal("2.20")]) == Decimal("3.30")
