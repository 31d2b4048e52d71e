"""What counts as history in a directory, shared by the backends."""

from __future__ import annotations

from pathlib import Path

from planner.memory.history import is_entry

Weight = tuple[int, int]
"""(readable entries, bytes): of two copies of one history file, the heavier is the newer."""


def history_files(directory: Path) -> list[Path]:
    """The JSONL history files under `directory` (none if it does not exist)."""
    if not directory.is_dir():
        return []
    return sorted(path for path in directory.rglob("*.jsonl") if path.is_file())


def history_weight(path: Path) -> Weight:
    """History files only grow, so the copy with more entries is the newer one. Entries count
    before bytes: a cut-off or damaged copy never beats a longer readable one."""
    with path.open("rb") as handle:
        entries = sum(1 for raw in handle if raw.strip() and is_entry(raw))
    return entries, path.stat().st_size
