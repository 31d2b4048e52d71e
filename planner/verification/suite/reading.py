"""The start of a repository's file as the suite's detectors read it."""

from __future__ import annotations

from pathlib import Path


def plain_head(path: Path, limit: int) -> str:
    """The first `limit` characters of a regular file (UTF-8, bad bytes replaced); "" for a
    link, anything else that is no file, or a file that cannot be read."""
    try:
        if path.is_symlink() or not path.is_file():
            return ""
        with path.open(encoding="utf-8", errors="replace") as handle:
            return handle.read(limit)
    except OSError:
        return ""
