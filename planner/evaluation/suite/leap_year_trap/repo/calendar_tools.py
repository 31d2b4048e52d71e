def is_leap(year: int) -> bool:
    """Whether `year` has a 29th of February."""
    return year % 4 == 0


def days_in_year(year: int) -> int:
    return 366 if is_leap(year) else 365
