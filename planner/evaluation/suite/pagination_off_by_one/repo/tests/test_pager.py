from pager import page_count


def test_page_count() -> None:
    assert page_count(list(range(10)), 3) == 4
    assert page_count([], 3) == 0
