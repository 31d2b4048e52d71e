from durations import parse_duration


def test_single_unit() -> None:
    assert parse_duration("45s") == 45
    assert parse_duration("2h") == 7200
