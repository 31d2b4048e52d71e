"""Retention of the local planning history (planning-process.md §11.1, "completed tasks'
history is deleted after 90 days, configurable").

At the start of a pass, every other issue's history file whose work was completed (its last
run ended in a completion that says done) and which has no entry newer than
`planning.history.retention_days` is deleted. Unfinished work, a file that cannot be read and
the issue of the pass itself are never touched.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from planner.engine.questions import ends_piece_of_work

log = logging.getLogger(__name__)

TAIL_BYTES = 1_000_000
"""How much of a file's end is read: the entries that decide are the last ones."""


def prune_history(directory: Path, days: float, now: datetime, keep: Path) -> list[str]:
    """Delete the history files of work completed more than `days` ago; their names."""
    if days <= 0 or not directory.is_dir():
        return []
    cutoff = now - timedelta(days=days)
    removed = []
    for path in sorted(directory.glob("*.jsonl")):
        if path.resolve() != keep.resolve() and _completed_before(path, cutoff):
            path.unlink(missing_ok=True)
            removed.append(path.name)
    if removed:
        log.info("history of work completed over %g days ago deleted: %s", days, removed)
    return removed


def _completed_before(path: Path, cutoff: datetime) -> bool:
    entries = _last_entries(path)
    marks = [e for e in entries if e.get("type") in ("run_start", "completion")]
    if not entries or not marks or not ends_piece_of_work(marks[-1]):
        return False
    stamp = _timestamp(entries[-1])
    return stamp is not None and stamp < cutoff


def _last_entries(path: Path) -> list[dict[str, Any]]:
    try:
        with path.open("rb") as handle:
            handle.seek(max(path.stat().st_size - TAIL_BYTES, 0))
            lines = handle.read().splitlines()
    except OSError:
        return []
    return [entry for entry in map(_entry, lines) if entry is not None]


def _entry(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except ValueError:  # a cut-off first line of the tail, or a damaged one
        return None
    return value if isinstance(value, dict) else None


def _timestamp(entry: dict[str, Any]) -> datetime | None:
    try:
        stamp = datetime.fromisoformat(str(entry.get("timestamp", "")).replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
