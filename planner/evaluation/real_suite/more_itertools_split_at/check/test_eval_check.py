from more_itertools import split_at


def is_comma(c):
    return c == ','


def test_maxsplit_one_splits_once():
    assert list(split_at('a,b,c,d', is_comma, maxsplit=1)) == [['a'], ['b', ',', 'c', ',', 'd']]


def test_maxsplit_limits_splits():
    assert list(split_at(range(10), lambda n: n % 2 == 1, maxsplit=2)) == [[0], [2], [4, 5, 6, 7, 8, 9]]
    assert list(split_at('a,b', is_comma, maxsplit=1, keep_separator=True)) == [['a'], [','], ['b']]
    assert list(split_at('a,b,c', is_comma)) == [['a'], ['b'], ['c']]
    assert list(split_at('a,b,c', is_comma, maxsplit=0)) == [['a', ',', 'b', ',', 'c']]
