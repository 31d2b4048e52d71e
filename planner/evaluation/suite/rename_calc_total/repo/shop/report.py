from shop.cart import calc_total


def summary(prices: list[float]) -> str:
    """One line for the receipt."""
    return f"{len(prices)} items, total {calc_total(prices):.2f}"
