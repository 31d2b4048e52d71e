from decimal import Decimal

from invoice import total


def test_whole_cents() -> None:
    assert total([Decimal("1.10"), Decimal("2.20")]) == Decimal("3.30")
