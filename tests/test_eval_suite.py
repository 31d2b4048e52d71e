"""The built-in evaluation suite: every snapshot fails its check, every reference passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.evaluation.suite import (
    Task,
    apply_solution,
    load_suite,
    materialize,
    run_check,
)
from tests.support.stale_roots import ROOTS, shared_temporary_folder

SUITE = load_suite()
CATEGORIES = {"bug_fix", "feature", "refactor", "docs", "clarification", "trap"}


def test_the_suite_has_every_kind_of_task() -> None:
    assert len(SUITE) >= 12
    assert {task.category for task in SUITE} == CATEGORIES
    for task in SUITE:
        files = [p for p in task.snapshot.rglob("*") if p.is_file()]
        assert 0 < len(files) < 50, task.name
        assert task.title and task.body and task.check
    assert all(task.answer for task in SUITE if task.category == "clarification")


@pytest.mark.parametrize("task", SUITE, ids=[task.name for task in SUITE])
def test_snapshot_fails_and_reference_solution_passes(task: Task, tmp_path: Path) -> None:
    workspace = materialize(task, tmp_path / "repo")
    untouched = run_check(task, workspace)
    assert not untouched.passed, f"{task.name}: the check passes without any change"
    apply_solution(task, workspace)
    solved = run_check(task, workspace)
    assert solved.passed, f"{task.name}: the reference solution fails:\n{solved.output}"


def test_the_trap_task_punishes_the_obvious_fix(tmp_path: Path) -> None:
    (task,) = load_suite(names=["leap_year_trap"])
    workspace = materialize(task, tmp_path / "repo")
    source = workspace / "calendar_tools.py"
    source.write_text(
        source.read_text().replace("year % 4 == 0", "year % 4 == 0 and year % 100 != 0")
    )
    result = run_check(task, workspace)
    assert not result.passed and "test_2000_was_a_leap_year" in result.output


def test_the_hidden_check_cannot_be_edited_away(tmp_path: Path) -> None:
    (task,) = load_suite(names=["stats_median"])
    workspace = materialize(task, tmp_path / "repo")
    # A model that "resolves" the task by writing its own passing check file loses it.
    (workspace / "tests" / "test_check_stats.py").write_text("def test_ok() -> None: pass\n")
    assert not run_check(task, workspace).passed


def test_a_check_leaves_the_machines_temporary_folder_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pytest, run as a check whose tests use tmp_path, deletes every unlocked numbered root
    # but the last three under <temp>/pytest-of-<user> when it exits: other sessions' folders
    # (a CI run's check spent its whole timeout deleting them). The check has its own.
    _, roots = shared_temporary_folder(tmp_path, monkeypatch)
    (task,) = load_suite(names=["sort_reverse_flag"])
    workspace = materialize(task, tmp_path / "repo")
    apply_solution(task, workspace)
    assert run_check(task, workspace).passed
    assert sorted(path.name for path in roots.iterdir()) == ROOTS
