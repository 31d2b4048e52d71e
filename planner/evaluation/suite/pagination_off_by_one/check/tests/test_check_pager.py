from pager import page


def test_pages_hold_size_items_without_overlap() -> None:
    items = list(range(10))
    assert page(items, 1, 3) == [0, 1, 2]
    assert page(items, 2, 3) == [3, 4, 5]
    assert page(items, 4, 3) == [9]
    assert page(items, 5, 3) == []
