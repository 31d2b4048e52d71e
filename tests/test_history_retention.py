"""Local history retention (planning-process.md §11.1): the history of completed work is
deleted `planning.history.retention_days` (90) after its last entry; nothing else is.

Before, history files were never pruned: a runner's cache or a maintainer's checkout kept the
history of every issue planner ever worked on, growing without bound.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from planner.testing.scripted_server import ScriptedModelServer
from tests.harness import START, Harness
from tests.plans import completed, finish, planned, write


@pytest.fixture
def harness(tmp_path: Path, scripted_model: ScriptedModelServer) -> Iterator[Harness]:
    yield Harness(tmp_path, scripted_model)


def stamp(days_ago: float) -> str:
    return (START - timedelta(days=days_ago)).isoformat().replace("+00:00", "Z")


def entry(kind: str, days_ago: float, **fields: Any) -> str:
    return json.dumps({"type": kind, "timestamp": stamp(days_ago), **fields})


def history_file(directory: Path, name: str, *lines: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def other_histories(directory: Path) -> dict[str, Path]:
    return {
        "done_long_ago": history_file(
            directory, "done_long_ago",
            entry("run_start", 120), entry("completion", 120, done=True), entry("run_end", 100),
        ),
        "done_lately": history_file(
            directory, "done_lately",
            entry("run_start", 11), entry("completion", 10, done=True), entry("run_end", 10),
        ),
        "unfinished": history_file(
            directory, "unfinished",
            entry("completion", 300, done=True), entry("run_start", 200), entry("task", 200),
        ),
        "not_done": history_file(
            directory, "not_done", entry("run_start", 200), entry("completion", 200, done=False)
        ),
        "damaged": history_file(directory, "damaged", '{"type": "completion", "done": tr'),
    }  # fmt: skip


def test_completed_work_older_than_the_retention_is_deleted_and_nothing_else(
    harness: Harness,
) -> None:
    files = other_histories(harness.workspace / "planning_history")
    harness.server.add(*planned("task_1"), write("a.txt"), finish(), *completed())

    result = harness.run()

    assert result.status == "completed"
    assert not files["done_long_ago"].exists()
    for kept in ("done_lately", "unfinished", "not_done", "damaged"):
        assert files[kept].exists(), kept
    assert harness.types()[0] == "run_start"  # this pass's own history is there


def test_retention_days_zero_keeps_every_history(harness: Harness) -> None:
    files = other_histories(harness.workspace / "planning_history")
    harness.server.add(*planned("task_1"), write("a.txt"), finish(), *completed())

    harness.run(**{"planning.history.retention_days": 0})

    assert all(path.exists() for path in files.values())
