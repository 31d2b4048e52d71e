"""Snapshot assertions: compare with tests/snapshots/NAME; UPDATE_SNAPSHOTS=1 rewrites them."""

from __future__ import annotations

import os
from pathlib import Path

SNAPSHOTS = Path(__file__).parent / "snapshots"


def assert_snapshot(name: str, actual: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("UPDATE_SNAPSHOTS") == "1" or not path.exists():
        if os.environ.get("CI") and not path.exists():
            raise AssertionError(f"snapshot {name} is missing; run with UPDATE_SNAPSHOTS=1 locally")
        path.write_text(actual, encoding="utf-8")
        return
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"snapshot {name} differs; UPDATE_SNAPSHOTS=1 accepts the change"
