"""The tests that exercise the files a task changed, and the pytest command that runs them.

After a task the tests of the changed files run first: the test files that import a changed
module (and changed test files themselves), named on the repository's own pytest command in
place of the paths it gives. Only when those pass does the whole command run, so a large
suite is not run whole after an edit that broke its own module's tests, and a suite that
timed out at the baseline is never run whole after a task at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from planner.outcome.evidence import is_test_file
from planner.verification.suite.changes import working_files
from planner.verification.suite.detect import PYTHON, runner_of
from planner.verification.suite.reading import plain_head

MAX_TEST_BYTES = 500_000
"""Characters read of one test file when looking for its imports."""
MAX_SELECTED = 50
"""Test files named on one command line; with more, the whole command runs."""
PYTEST_OPTIONS_WITH_VALUE = frozenset(
    {
        "-k",
        "-m",
        "-p",
        "-c",
        "-o",
        "-W",
        "-n",
        "--rootdir",
        "--confcutdir",
        "--basetemp",
        "--deselect",
        "--ignore",
        "--ignore-glob",
        "--import-mode",
        "--maxfail",
        "--tb",
        "--timeout",
        "--durations",
        "--cov",
        "--cov-report",
        "--junitxml",
        "--log-level",
        "--override-ini",
        "--config-file",
    }
)
"""pytest options whose value is the next word (`-c pytest.ini` names no test path)."""
QUIET_PYTEST = ["-q", "-p", "no:cacheprovider"]


def module_names(path: str) -> list[str]:
    """The names a Python file is imported by: `src/pkg/io.py` → pkg.io; `pkg/__init__.py`
    → pkg. [] for a file that is not Python."""
    pure = PurePosixPath(path)
    if pure.suffix != ".py":
        return []
    parts = list(pure.with_suffix("").parts)
    if len(parts) > 1 and parts[0] in ("src", "lib"):
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return [".".join(parts)] if parts and all(p.isidentifier() for p in parts) else []


def exercising_tests(
    workspace: Path, changed: list[str], test_files: list[str], is_test: Callable[[str], bool]
) -> list[str]:
    """The test files among `test_files` that exercise `changed`: changed test files, then
    those that import a changed module (by its dotted name, its last part, or `from pkg
    import mod`)."""
    selected = [path for path in changed if is_test(path) and path in test_files]
    modules = [name for path in changed if not is_test(path) for name in module_names(path)]
    if modules:
        pattern = _importing(modules)
        for path in test_files:
            if path not in selected and pattern.search(_head(workspace / path)):
                selected.append(path)
    return selected


def _importing(modules: list[str]) -> re.Pattern[str]:
    """An import line naming any of `modules` (`import a.b`, `from a.b import x`, `from a
    import b`, `from .b import x`)."""
    alternatives = []
    for module in modules:
        parent, _, last = module.rpartition(".")
        alternatives.append(rf"(?:from|import)\s+(?:[\w.]*\.)?{re.escape(module)}\b")
        alternatives.append(rf"from\s+\.*{re.escape(last)}\s+import\b")
        if parent:
            alternatives.append(rf"from\s+{re.escape(parent)}\s+import\s[^\n]*\b{last}\b")
        alternatives.append(rf"import\s+{re.escape(last)}\b")
    return re.compile(r"^\s*(?:" + "|".join(alternatives) + ")", re.MULTILINE)


def _head(path: Path) -> str:
    return plain_head(path, MAX_TEST_BYTES)


def pytest_on(command: list[str], files: list[str], workspace: Path) -> list[str]:
    """A command that runs pytest on `files` only: the repository's pytest command with its
    options kept and the test paths it names replaced; for any other command (unittest,
    tox, none) planner's `python3 -m pytest`."""
    if runner_of(command) != "pytest":
        return [PYTHON, "-m", "pytest", *QUIET_PYTEST, *files]
    kept: list[str] = []
    takes_value = False
    for index, word in enumerate(command):
        if takes_value or word.startswith("-") or not _is_path(word, workspace, index, command):
            kept.append(word)
            takes_value = word in PYTEST_OPTIONS_WITH_VALUE
            continue
        takes_value = False
    return [*kept, *files]


def _is_path(word: str, workspace: Path, index: int, command: list[str]) -> bool:
    """`word` names tests (a path of the workspace, or `path::test`), not the program."""
    if index == 0 or (index > 0 and command[index - 1] == "-m"):
        return False
    target = word.split("::", 1)[0]
    return bool(target) and (workspace / target).exists()


def tracked_tests(workspace: Path, patterns: list[str]) -> list[str]:
    """The working tree's Python test files by verification.test_paths."""
    return [
        path
        for path in working_files(workspace)
        if path.endswith(".py") and is_test_file(path, patterns)
    ]
