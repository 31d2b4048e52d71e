DEFAULT_PORT = 8000


def port() -> int:
    """The TCP port the service listens on."""
    return DEFAULT_PORT
