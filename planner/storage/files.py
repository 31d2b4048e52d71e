"""What counts as history in a directory, shared by the backends."""

from __future__ import annotations

from pathlib import Path


def history_files(directory: Path) -> list[Path]:
    """The JSONL history files under `directory` (none if it does not exist)."""
    if not directory.is_dir():
        return []
    return sorted(path for path in directory.rglob("*.jsonl") if path.is_file())
