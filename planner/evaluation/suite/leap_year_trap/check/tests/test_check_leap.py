from calendar_tools import is_leap


def test_century_years() -> None:
    assert not is_leap(1900)
    assert not is_leap(2100)
    assert is_leap(2000)
    assert is_leap(2400)
