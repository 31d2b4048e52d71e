"""Evaluation tasks: a small repository snapshot, an issue, a check command.

A task directory holds `task.yaml` (title, body, category, check; optional answer),
`repo/` (the snapshot planner works on), `check/` (files copied over a copy of the result
before the check runs: hidden tests the model can neither see nor edit) and `solution/` (a
reference solution: files written over the snapshot, proving the check can pass).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from planner.engine.errors import UserInputError
from planner.tools.safe_env import git_argv, git_environment, scrubbed_environment

SUITE_DIR = Path(__file__).resolve().parent / "suite"
CHECK_TIMEOUT_SECONDS = 120
GIT_IDENTITY = ("-c", "user.name=planner-eval", "-c", "user.email=eval@planner.invalid")


@dataclass(frozen=True)
class Task:
    """One evaluation task, read from its directory."""

    name: str
    directory: Path
    title: str
    body: str
    category: str
    check: tuple[str, ...]
    answer: str = ""
    """What a person answers when planner asks a question (clarification tasks)."""

    @property
    def snapshot(self) -> Path:
        return self.directory / "repo"

    @property
    def solution(self) -> Path:
        return self.directory / "solution"

    @property
    def check_files(self) -> Path:
        return self.directory / "check"


@dataclass(frozen=True)
class CheckResult:
    passed: bool
    output: str


def load_task(directory: Path) -> Task:
    path = directory / "task.yaml"
    try:
        data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
        return Task(
            name=directory.name,
            directory=directory,
            title=str(data["title"]),
            body=str(data["body"]),
            category=str(data.get("category", "")),
            check=tuple(str(part) for part in data["check"]),
            answer=str(data.get("answer") or ""),
        )
    except (OSError, yaml.YAMLError, KeyError, TypeError) as exc:
        raise UserInputError(f"bad evaluation task {path}: {exc}") from None


def load_suite(directory: Path = SUITE_DIR, names: list[str] | None = None) -> list[Task]:
    """Every task under `directory` (sorted), or only `names`, in the order given."""
    available = {p.name: p for p in directory.iterdir() if (p / "task.yaml").is_file()}
    unknown = sorted(set(names or []) - set(available))
    if unknown:
        raise UserInputError(
            f"no such task(s): {', '.join(unknown)}; the suite has: {', '.join(sorted(available))}"
        )
    return [load_task(available[name]) for name in (names or sorted(available))]


def materialize(task: Task, destination: Path, branch: str = "") -> Path:
    """A fresh git repository holding the task's snapshot, committed on `main` (and checked
    out on a new `branch` when one is given)."""
    shutil.copytree(task.snapshot, destination)
    _git(destination, "init", "-q", "-b", "main")
    commit_all(destination, "snapshot")
    if branch:
        _git(destination, "checkout", "-q", "-b", branch)
    return destination


def commit_all(tree: Path, message: str) -> None:
    """Commit every change of the working tree (planner's history is excluded from git)."""
    _git(tree, "add", "-A")
    _git(tree, *GIT_IDENTITY, "commit", "-q", "--allow-empty", "-m", message)


def apply_solution(task: Task, workspace: Path) -> None:
    """Write the reference solution over a working tree."""
    shutil.copytree(task.solution, workspace, dirs_exist_ok=True)


def run_check(task: Task, tree: Path) -> CheckResult:
    """Run the check on a copy of `tree` with the hidden check files laid over it."""
    with tempfile.TemporaryDirectory(prefix=f"eval-check-{task.name}-") as scratch:
        copy = Path(scratch) / "tree"
        shutil.copytree(tree, copy, ignore=shutil.ignore_patterns(".git", ".planner"))
        shutil.copytree(task.check_files, copy, dirs_exist_ok=True)
        argv = [sys.executable if part == "python" else part for part in task.check]
        try:
            done = subprocess.run(
                argv,
                cwd=copy,
                env=_check_environment(Path(scratch) / "tmp"),
                capture_output=True,
                text=True,
                timeout=CHECK_TIMEOUT_SECONDS,
            )
        except subprocess.TimeoutExpired:
            return CheckResult(False, f"check timed out after {CHECK_TIMEOUT_SECONDS}s")
        return CheckResult(done.returncode == 0, (done.stdout + done.stderr)[-4000:])


def _check_environment(temporary: Path) -> dict[str, str]:
    """The scrubbed environment with a temporary folder of the check's own: a check's test
    runner never reads, nor (pytest's cleanup of old `tmp_path` roots) deletes, what other
    programs left in the machine's shared temporary folder."""
    temporary.mkdir()
    return {**scrubbed_environment(os.environ), "TMPDIR": str(temporary)}


def branch_tree(workspace: Path, branch: str, destination: Path) -> Path:
    """A clone of `branch` (what planner pushed), or of `main` when the branch does not exist."""
    exists = _git(workspace, "rev-parse", "--verify", "--quiet", branch, check=False)
    chosen = branch if exists.returncode == 0 else "main"
    _git(workspace, "clone", "-q", "--branch", chosen, str(workspace), str(destination))
    return destination


def _git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        git_argv(*args, repository=cwd),
        cwd=cwd,
        env=git_environment(os.environ),
        capture_output=True,
        text=True,
        check=check,
    )
