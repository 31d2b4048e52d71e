from wcwidth import wcstwidth, wcswidth


def test_n_past_the_end_measures_the_whole_string():
    assert wcswidth("abc", 5) == 3
    assert wcswidth("コンニチハ", 10) == 10
    assert wcstwidth("abc", 5) == 3
    assert wcstwidth("コンニチハ", 10) == 10


def test_n_within_the_string_is_unchanged():
    assert wcswidth("abc", 3) == 3
    assert wcswidth("コンニチハ", 3) == 6
    assert wcswidth("abc", 2) == 2
    assert wcswidth("abc") == 3
