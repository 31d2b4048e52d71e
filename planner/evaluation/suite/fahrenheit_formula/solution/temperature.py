def to_fahrenheit(celsius: float) -> float:
    """Degrees Fahrenheit for `celsius`."""
    return celsius * 9 / 5 + 32


def to_celsius(fahrenheit: float) -> float:
    """Degrees Celsius for `fahrenheit`."""
    return (fahrenheit - 32) * 5 / 9
