from pathlib import Path

import shop.cart
from shop.report import summary


def test_renamed_without_alias() -> None:
    assert shop.cart.compute_total([2.0, 2.0], discount=0.25) == 3.0
    assert not hasattr(shop.cart, "calc_total")
    assert summary([1.0]) == "1 items, total 1.00"
    root = Path(__file__).resolve().parent.parent
    for path in [*root.glob("shop/*.py"), *root.glob("tests/test_cart.py")]:
        assert "calc_total" not in path.read_text(), path
