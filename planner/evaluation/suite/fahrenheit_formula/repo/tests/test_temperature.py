from temperature import to_celsius


def test_to_celsius() -> None:
    assert to_celsius(212) == 100
