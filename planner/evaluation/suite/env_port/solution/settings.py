import os

DEFAULT_PORT = 8000


def port() -> int:
    """The TCP port the service listens on (APP_PORT, else 8000)."""
    raw = os.environ.get("APP_PORT")
    if raw is None:
        return DEFAULT_PORT
    if not raw.isdigit() or not 1 <= int(raw) <= 65535:
        raise ValueError(f"APP_PORT must be a port number, not {raw!r}")
    return int(raw)
