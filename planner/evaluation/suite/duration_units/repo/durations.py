UNITS = {"s": 1, "m": 60, "h": 3600}


def parse_duration(text: str) -> int:
    """Seconds in a duration such as '45s', '5m', '2h' or '1h30m'."""
    return int(text[:-1]) * UNITS[text[-1]]
