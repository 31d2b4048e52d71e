"""Evaluation tasks: a small repository snapshot, an issue, a check command.

A task directory holds `task.yaml` (title, body, category, check; optional answer),
`repo/` (the snapshot planner works on), `check/` (files copied over a copy of the result
before the check runs: hidden tests the model can neither see nor edit) and `solution/` (a
reference solution: files written over the snapshot, proving the check can pass).

A real-repository task (planner.evaluation.packages) has no `repo/` nor `solution/`: its
`task.yaml` names a `source` (package, version, sha256 of the source distribution) and the
recorded `edits` that put its bug in. The snapshot is the unpacked archive with the edits
applied; the reference solution is the edited files as the archive has them.
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

from planner.core.errors import UserInputError
from planner.evaluation.packages import PackageSource, RecordedEdit, apply_edits, fetch, unpack
from planner.tools.sandbox.safe_env import git_text, scrubbed_environment

SUITE_DIR = Path(__file__).resolve().parent / "suite"
REAL_SUITE_DIR = Path(__file__).resolve().parent / "real_suite"
HOLDOUT_SUITE_DIR = Path(__file__).resolve().parent / "real_suite_holdout"
"""Real-repository tasks kept apart: run as a baseline when chosen and again at the end of a
piece of work, never looked at in between, so that nothing is shaped after them."""
SUITES = {"builtin": SUITE_DIR, "real": REAL_SUITE_DIR, "holdout": HOLDOUT_SUITE_DIR}
"""Suites `planner eval --suite` knows by name."""
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
    source: PackageSource | None = None
    """A real-repository task's released package (its snapshot is that package)."""
    edits: tuple[RecordedEdit, ...] = ()
    """The recorded edits that put the bug into the package."""

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
            source=_source(data.get("source")),
            edits=tuple(_edit(edit) for edit in data.get("edits") or ()),
        )
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError) as exc:
        raise UserInputError(f"bad evaluation task {path}: {exc}") from None


def _source(data: Any) -> PackageSource | None:
    if data is None:
        return None
    source = PackageSource(str(data["package"]), str(data["version"]), str(data["sha256"]))
    if len(source.sha256) != 64 or any(c not in "0123456789abcdef" for c in source.sha256):
        raise ValueError(f"source.sha256 is not a sha256 hex digest: {source.sha256!r}")
    return source


def _edit(data: Any) -> RecordedEdit:
    edit = RecordedEdit(str(data["path"]), str(data["old"]), str(data["new"]))
    if not edit.old or edit.old == edit.new:
        raise ValueError(f"the edit of {edit.path} changes nothing")
    return edit


def load_suite(directory: Path = SUITE_DIR, names: list[str] | None = None) -> list[Task]:
    """Every task under `directory` (sorted), or only `names`, in the order given."""
    if not directory.is_dir():
        raise UserInputError(
            f"no such suite: {directory} is neither a suite's name ({', '.join(SUITES)}) "
            "nor a folder"
        )
    available = {p.name: p for p in directory.iterdir() if (p / "task.yaml").is_file()}
    unknown = sorted(set(names or []) - set(available))
    if unknown:
        raise UserInputError(
            f"no such task(s): {', '.join(unknown)}; the suite has: {', '.join(sorted(available))}"
        )
    return [load_task(available[name]) for name in (names or sorted(available))]


def materialize(task: Task, destination: Path, branch: str = "", download: bool = True) -> Path:
    """A fresh git repository holding the task's snapshot, committed on `main` (and checked
    out on a new `branch` when one is given). A real-repository task's package comes from the
    cache, or is downloaded first when `download` allows it."""
    if task.source is None:
        shutil.copytree(task.snapshot, destination)
    else:
        unpack(fetch(task.source, download=download), destination)
        apply_edits(destination, task.edits)
    _git(destination, "init", "-q", "-b", "main")
    # Every file of the snapshot, those its .gitignore names too (a released package ships
    # generated files such as `_version.py`): the check runs on a clone, which has only
    # what was committed.
    _git(destination, "add", "-A", "--force")
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
    for path, content in solution_files(task):
        (workspace / path).parent.mkdir(parents=True, exist_ok=True)
        (workspace / path).write_text(content, encoding="utf-8")


def solution_files(task: Task, download: bool = True) -> list[tuple[str, str]]:
    """The reference solution's files (relative path, content): the `solution/` folder, or
    for a real-repository task the files its edits change, as the released package has them."""
    if task.source is None:
        files = sorted(p for p in task.solution.rglob("*") if p.is_file())
        return [(p.relative_to(task.solution).as_posix(), p.read_text("utf-8")) for p in files]
    with tempfile.TemporaryDirectory(prefix=f"eval-solution-{task.name}-") as scratch:
        package = unpack(fetch(task.source, download=download), Path(scratch) / "package")
        paths = dict.fromkeys(edit.path for edit in task.edits)
        return [(path, (package / path).read_text(encoding="utf-8")) for path in paths]


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
    return git_text(cwd, *args, check=check)
