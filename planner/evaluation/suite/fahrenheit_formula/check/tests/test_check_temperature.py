from temperature import to_celsius, to_fahrenheit


def test_to_fahrenheit() -> None:
    assert to_fahrenheit(100) == 212
    assert to_fahrenheit(0) == 32
    assert to_fahrenheit(-40) == -40
    assert to_celsius(to_fahrenheit(37)) == 37
