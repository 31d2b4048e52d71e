"""What planner checks of a Python change when no test runner can run the repository's tests:
every changed Python file compiles, and every changed module imports.

Compiling happens here (ast.parse runs nothing). Importing runs the repository's code, so it
is a command like the tests (planner.verification.suite.runner: the sandbox user, no token, the
effect check), and only modules are imported — files in a package, under src/, or imported
by another file — never a script, whose top level is its program. A module that fails only
because a third-party package is not installed is not counted against the change: it names
what is missing instead.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from pathlib import Path

from planner.outcome.evidence import CHECKS, TestRun
from planner.verification.suite.changes import working_files
from planner.verification.suite.detect import PYTHON
from planner.verification.suite.reading import plain_head
from planner.verification.suite.selection import module_names

MARKER = "PLANNER-IMPORT-CHECK "
IMPORT_SCRIPT = f"""
import importlib, json, os, sys
here = os.getcwd()
sys.path[:0] = [p for p in (here, os.path.join(here, "src")) if os.path.isdir(p)]
problems = {{}}
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except BaseException as exc:
        missing = getattr(exc, "name", None) if isinstance(exc, ImportError) else None
        problems[name] = [type(exc).__name__, str(exc)[:300], missing or ""]
print({MARKER!r} + json.dumps(problems))
"""
"""Imports each module named on its command line; prints what failed as one JSON line."""
MAX_FILES_READ = 2_000
"""Python files read to find which changed files other files import."""
MAX_READ = 200_000

Run = Callable[[list[str]], tuple[str, str]]
"""Runs an argv like the tests run: (its output, why it did not run or "")."""


def check_changed(workspace: Path, changed: list[str], run: Run) -> TestRun | None:
    """The check of the changed Python files `changed` (tests and conftest.py left out);
    None when none changed."""
    files = [path for path in changed if path.endswith(".py") and _plain(workspace / path)]
    if not files:
        return None
    failing = [
        f"{path} (does not compile: {why})"
        for path in files
        if (why := compile_problem(workspace / path))
    ]
    broken = {failure.split(" ", 1)[0] for failure in failing}
    modules = [name for name in importable(workspace, files) if _file_of(name, files) not in broken]
    missing: list[str] = []
    if modules:
        output, problem = run([PYTHON, "-c", IMPORT_SCRIPT, *modules])
        if problem:
            return TestRun(command=CHECKS, status="not_run", reason=problem)
        failing += _import_failures(workspace, output, missing)
    checked = len(files) - len(failing)
    return TestRun(
        command=CHECKS,
        status="failed" if failing else "passed",
        passed=checked,
        failed=len(failing),
        failing=failing,
        tail="\n".join(failing),
        note=f"not imported for want of {', '.join(sorted(set(missing)))}" if missing else "",
    )


def with_checks(issue: TestRun, checks: TestRun | None) -> TestRun:
    """The issue's test's run, with what the check of the changed files found failing (its
    files are not tests: they are not counted as passed)."""
    if checks is None or not checks.failing:
        return issue
    return issue.model_copy(
        update={
            "status": "failed" if issue.status == "passed" else issue.status,
            "failed": (issue.failed or 0) + len(checks.failing),
            "failing": [*issue.failing, *checks.failing],
            "tail": "\n".join([checks.tail, issue.tail]).strip(),
        }
    )


def compile_problem(path: Path) -> str:
    """Why the file does not compile ("" when it does)."""
    try:
        source = path.read_bytes()[: MAX_READ * 10]
        compile(ast.parse(source, str(path)), str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        return f"{type(exc).__name__}: {exc.msg} (line {exc.lineno})"
    except (OSError, ValueError) as exc:
        return str(exc)
    return ""


def importable(workspace: Path, files: list[str]) -> list[str]:
    """The module names of `files` that are modules, not scripts: in a package, under src/,
    or imported by another Python file of the working tree."""
    names: list[str] = []
    others: list[str] | None = None
    for path in files:
        found = module_names(path)
        if not found or Path(path).name == "conftest.py":
            continue
        parent = (workspace / path).parent
        packaged = (parent / "__init__.py").is_file() or path.startswith(("src/", "lib/"))
        if not packaged:
            others = others if others is not None else _python_files(workspace)
            packaged = _imported_elsewhere(workspace, path, found[0], others)
        if packaged:
            names.append(found[0])
    return names


def _imported_elsewhere(workspace: Path, path: str, module: str, others: list[str]) -> bool:
    last = module.rsplit(".", 1)[-1]
    pattern = re.compile(
        rf"^\s*(?:from\s+{re.escape(module)}\s+import|import\s+{re.escape(last)}\b)"
    )
    for other in others:
        if other == path:
            continue
        text = _head(workspace / other)
        if any(pattern.match(line) for line in text.splitlines()):
            return True
    return False


def _import_failures(workspace: Path, output: str, missing: list[str]) -> list[str]:
    """The failures the import script printed; a third-party package that is not installed
    goes to `missing` instead."""
    line = next((line for line in output.splitlines() if line.startswith(MARKER)), "")
    try:
        problems = json.loads(line.removeprefix(MARKER)) if line else {}
    except json.JSONDecodeError:
        problems = {}
    failures = []
    for name, (kind, message, absent) in problems.items():
        top = str(absent).split(".")[0]
        if kind == "ModuleNotFoundError" and top and not _in_repository(workspace, top):
            missing.append(top)
            continue
        failures.append(f"{name} (does not import: {kind}: {message})")
    return failures


def _in_repository(workspace: Path, name: str) -> bool:
    for root in (workspace, workspace / "src", workspace / "lib"):
        if (root / f"{name}.py").is_file() or (root / name).is_dir():
            return True
    return False


def _file_of(module: str, files: list[str]) -> str:
    return next((path for path in files if module in module_names(path)), "")


def _python_files(workspace: Path) -> list[str]:
    return [path for path in working_files(workspace) if path.endswith(".py")][:MAX_FILES_READ]


def _plain(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def _head(path: Path) -> str:
    return plain_head(path, MAX_READ)
