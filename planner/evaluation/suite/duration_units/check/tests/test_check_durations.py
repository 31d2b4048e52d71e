from durations import parse_duration


def test_combined_units() -> None:
    assert parse_duration("1h30m") == 5400
    assert parse_duration("2m5s") == 125
    assert parse_duration("1h1m1s") == 3661
    assert parse_duration("45s") == 45
