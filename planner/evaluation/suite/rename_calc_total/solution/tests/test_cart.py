from shop.cart import compute_total
from shop.report import summary


def test_total() -> None:
    assert compute_total([1.0, 2.0], discount=0.5) == 1.5


def test_summary() -> None:
    assert summary([1.0, 2.5]) == "2 items, total 3.50"
