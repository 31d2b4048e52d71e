"""Keeping tool output within a size the model can take, saying what was left out."""

from __future__ import annotations

import os
from typing import IO


def cap_bytes(data: bytes, limit: int, label: str) -> str:
    """`data` as text, cut in the middle when longer than `limit` bytes, sizes noted.

    Head and tail are both kept: a failing test run says what ran first and why it failed last.
    """
    if len(data) <= limit:
        return data.decode("utf-8", errors="replace")
    half = limit // 2
    return _joined(data[:half], data[-half:], len(data), label)


def cap_file(handle: IO[bytes], limit: int, label: str) -> tuple[int, str]:
    """(size, capped text) of a whole file, reading only the parts that are shown."""
    fd = handle.fileno()
    size = os.fstat(fd).st_size
    if size <= limit:
        return size, os.pread(fd, size, 0).decode("utf-8", errors="replace")
    half = limit // 2
    return size, _joined(os.pread(fd, half, 0), os.pread(fd, half, size - half), size, label)


def _joined(head: bytes, tail: bytes, size: int, label: str) -> str:
    note = f"[{label}: {size} bytes, cut to the first and last {len(head)} bytes]"
    return (
        f"{head.decode('utf-8', errors='ignore')}\n{note}\n{tail.decode('utf-8', errors='ignore')}"
    )


def cap_text(text: str, limit: int, label: str) -> str:
    return cap_bytes(escaped(text).encode("utf-8"), limit, label)


def escaped(text: str) -> str:
    """`text` with the undecodable bytes of file names (surrogate escapes, as os.listdir gives
    them) shown as `\\xNN`: valid UTF-8 for the prompt and the history."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return text


def looks_binary(data: bytes) -> bool:
    """Git's heuristic: a NUL byte in the first 8000 bytes."""
    return b"\0" in data[:8000]
