from calendar_tools import days_in_year, is_leap


def test_every_fourth_year() -> None:
    assert is_leap(2024)
    assert not is_leap(2023)


def test_2000_was_a_leap_year() -> None:
    assert is_leap(2000)
    assert days_in_year(2000) == 366
