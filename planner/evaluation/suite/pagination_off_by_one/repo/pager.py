def page(items: list[object], number: int, size: int) -> list[object]:
    """The items on page `number` (1-based) when every page holds `size` items."""
    start = (number - 1) * size
    return items[start : start + size + 1]


def page_count(items: list[object], size: int) -> int:
    """How many pages `items` fill."""
    return (len(items) + size - 1) // size
