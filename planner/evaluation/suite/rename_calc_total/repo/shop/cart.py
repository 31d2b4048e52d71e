def calc_total(prices: list[float], discount: float = 0.0) -> float:
    """The sum of `prices` less a fractional `discount`."""
    return round(sum(prices) * (1 - discount), 2)
