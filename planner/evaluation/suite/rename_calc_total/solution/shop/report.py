from shop.cart import compute_total


def summary(prices: list[float]) -> str:
    """One line for the receipt."""
    return f"{len(prices)} items, total {compute_total(prices):.2f}"
