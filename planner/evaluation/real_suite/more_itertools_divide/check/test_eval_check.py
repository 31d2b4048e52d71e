from more_itertools import divide


def test_every_item_lands_in_one_part():
    assert [list(p) for p in divide(3, [1, 2, 3, 4, 5, 6, 7])] == [[1, 2, 3], [4, 5], [6, 7]]
    assert [list(p) for p in divide(4, range(10))] == [[0, 1, 2], [3, 4, 5], [6, 7], [8, 9]]
    assert [list(p) for p in divide(2, iter(range(5)))] == [[0, 1, 2], [3, 4]]


def test_even_and_short_inputs_still_work():
    assert [list(p) for p in divide(2, [1, 2, 3, 4])] == [[1, 2], [3, 4]]
    assert [list(p) for p in divide(5, [1, 2, 3])] == [[1], [2], [3], [], []]
