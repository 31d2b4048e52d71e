"""Which command runs a repository's tests, and which installs what they need.

`verification.command` and `verification.setup` win; otherwise the repository's own files
decide, in this order: Python (pytest when the repository uses it, else unittest), package.json
with a test script (`npm test`), go.mod (`go test ./...`), Cargo.toml (`cargo test`), a Makefile
with a test target (`make test`). Setup: requirements*.txt and pyproject.toml extras named
test/dev (installed into a virtual environment of their own), package-lock.json (`npm ci`).
When the interpreter cannot import pytest, provision_steps() install what the project declares
next to it (planner.verification.suite.declared), and the project itself.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from planner.config import VerificationConfig
from planner.verification.suite.declared import RUNNER, Declared, declared_tests, names_runner

PYTHON = "python3"
SKIPPED_DIRECTORIES = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox"})
PYTEST_MARKERS = {
    "pytest.ini": "",
    "conftest.py": "",
    "tests/conftest.py": "",
    "pyproject.toml": "[tool.pytest",
    "setup.cfg": "[tool:pytest]",
    "tox.ini": "[pytest]",
}
"""A file that says the repository uses pytest (with this text in it, when not empty)."""
TEST_EXTRAS = ("test", "tests", "testing", "dev")
NPM_PLACEHOLDER = "no test specified"
MAX_READ_BYTES = 4_000_000
"""More of a marker file (package.json, pyproject.toml, a Makefile) is never needed."""
"""`npm init`'s test script, which only fails: no tests."""
MAKE_TEST_TARGET = re.compile(r"^test\s*:(?!=)", re.MULTILINE)
NO_TESTS = (
    "No tests detected: no Python tests, no test script in package.json, no go.mod, no "
    "Cargo.toml and no Makefile with a test target. Set verification.command to run them."
)


@dataclass
class Verification:
    """What verification runs in one repository."""

    command: list[str] = field(default_factory=list)
    """The test command's argv ([]: none found)."""
    source: str = ""
    """Where the command came from: `verification.command` or `detected from <file>`."""
    setup: list[list[str]] = field(default_factory=list)
    """Setup commands in order; `pip` stands for the virtual environment's pip."""
    python: bool = False
    """A Python repository: setup and tests run in a virtual environment of their own."""
    runner: str = ""
    """The Python test runner `command` runs (`pytest`, `unittest`; "" for other commands)."""
    declared: Declared = field(default_factory=Declared)
    """Where the project declares pytest and what it lists with it."""
    packaged: bool = False
    """A Python project with pyproject.toml, setup.py or setup.cfg: it can be installed."""
    installs_project: bool = False
    """The setup already installs the project itself (`pip install -e .…`)."""

    @property
    def display(self) -> str:
        return shlex.join(self.command)


def resolve(workspace: Path, config: VerificationConfig) -> Verification:
    """The command and setup for `workspace` under `config` (command [] when none)."""
    found = resolve_command(workspace, config)
    found.python = found.python or (not found.command and _is_python(workspace))
    if found.python:
        found.declared = declared_tests(workspace)
        found.packaged = any((workspace / name).is_file() for name in PROJECT_FILES)
    if not found.command:
        return found  # no tests to set up for; the test may still run (provision_steps)
    if config.setup:
        found.setup = [shlex.split(config.setup)]
    elif config.detect_setup:
        found.setup = detect_setup(workspace, found)
    found.installs_project = bool(config.setup) or any(
        argv[:3] == ["pip", "install", "-e"] for argv in found.setup
    )
    return found


def provision_steps(
    found: Verification, environment: Mapping[str, str] | None = None
) -> list[list[str]]:
    """What installs pytest into the verification's environment when the test command's
    interpreter cannot import it: the requirements the project lists with pytest whose
    markers hold for that interpreter (`environment`, its marker values; None: planner's own)
    — pytest itself when none of them is pytest —, its requirements files that list it, and
    the project itself with the extras that list pytest, unless a setup already installs it.
    `pip` stands for the environment's pip."""
    declared = found.declared
    requirements = declared.applicable(environment or {})
    if not any(names_runner(text) for text in requirements):
        requirements.insert(0, RUNNER)
    steps = [["pip", "install", *requirements]]
    steps += [["pip", "install", "-r", path] for path in declared.files]
    if found.packaged and not found.installs_project:
        extras = f"[{','.join(declared.extras)}]" if declared.extras else ""
        steps.append(["pip", "install", "-e", f".{extras}"])
    return steps


PROJECT_FILES = ("pyproject.toml", "setup.py", "setup.cfg")


def runs_programs(workspace: Path, config: VerificationConfig) -> bool:
    """Whether verification will start programs in `workspace` (isolation is then set up):
    a test command, or a Python project whose changes are checked (the issue's test, imports)."""
    if config.enabled == "off":
        return False
    found = resolve_command(workspace, config)
    return bool(found.command) or _is_python(workspace)


def resolve_command(workspace: Path, config: VerificationConfig) -> Verification:
    if config.command:
        argv = shlex.split(config.command)
        python = _is_python(workspace)
        return Verification(argv, "verification.command", python=python, runner=runner_of(argv))
    return detect_command(workspace)


def runner_of(argv: list[str]) -> str:
    """`pytest` or `unittest` when `argv` runs one (`python -m pytest`, `pytest`, `py.test`)."""
    program = argv[0].rsplit("/", 1)[-1] if argv else ""
    if program in ("pytest", "py.test"):
        return "pytest"
    modules = [argv[i + 1] for i, word in enumerate(argv[:-1]) if word == "-m"]
    return next((name for name in modules if name in ("pytest", "unittest")), "")


def detect_command(workspace: Path) -> Verification:
    for detector in (_python, _npm, _go, _cargo, _make):
        found = detector(workspace)
        if found is not None:
            return found
    return Verification()


def _python(root: Path) -> Verification | None:
    if not _has_python_tests(root):
        return None
    if _uses_pytest(root):
        command = [PYTHON, "-m", "pytest", "-q"]
        return Verification(command, "detected from the Python tests (pytest)", [], True, "pytest")
    start = ["-s", "tests"] if (root / "tests").is_dir() else []
    command = [PYTHON, "-m", "unittest", "discover", *start]
    source = "detected from the Python tests (unittest)"
    return Verification(command, source, [], True, "unittest")


def _npm(root: Path) -> Verification | None:
    script = _package_scripts(root).get("test")
    if not isinstance(script, str) or not script.strip() or NPM_PLACEHOLDER in script:
        return None
    return Verification(["npm", "test"], "detected from package.json")


def _go(root: Path) -> Verification | None:
    found = (root / "go.mod").is_file()
    return Verification(["go", "test", "./..."], "detected from go.mod") if found else None


def _cargo(root: Path) -> Verification | None:
    found = (root / "Cargo.toml").is_file()
    return Verification(["cargo", "test"], "detected from Cargo.toml") if found else None


def _make(root: Path) -> Verification | None:
    for name in ("GNUmakefile", "makefile", "Makefile"):
        if MAKE_TEST_TARGET.search(_text(root / name)):
            return Verification(["make", "test"], f"detected from {name} (target test)")
    return None


def detect_setup(root: Path, found: Verification) -> list[list[str]]:
    """Install commands for what `found` needs; [] when nothing is to install."""
    if found.python:
        return _python_setup(root, found)
    if found.command[:1] == ["npm"] and (root / "package-lock.json").is_file():
        return [["npm", "ci"]]
    return []


def _python_setup(root: Path, found: Verification) -> list[list[str]]:
    steps = [["pip", "install", "-r", path.name] for path in sorted(root.glob("requirements*.txt"))]
    extras = _test_extras(root)
    if extras:
        steps.append(["pip", "install", "-e", f".[{','.join(extras)}]"])
    if steps and "pytest" in found.command and not _mentions(root, "pytest"):
        steps.append(["pip", "install", "pytest"])
    return steps


def _test_extras(root: Path) -> list[str]:
    try:
        project = tomllib.loads(_text(root / "pyproject.toml")).get("project", {})
    except tomllib.TOMLDecodeError:
        return []
    optional = project.get("optional-dependencies", {}) if isinstance(project, dict) else {}
    return [name for name in TEST_EXTRAS if isinstance(optional, dict) and name in optional]


def _is_python(root: Path) -> bool:
    """A Python project: its packaging files, or Python files in its first folders."""
    if any((root / name).is_file() for name in PROJECT_FILES):
        return True
    return any(path.suffix == ".py" for path in _walk(root, 2))


def _has_python_tests(root: Path) -> bool:
    return any(_python_test_files(root))


def _python_test_files(root: Path, depth: int = 3) -> list[Path]:
    found: list[Path] = []
    for path in _walk(root, depth):
        name = path.name
        if name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
            found.append(path)
    return found


def _walk(root: Path, depth: int) -> list[Path]:
    """Files up to `depth` directories down, skipping dependency and tool folders."""
    files: list[Path] = []
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return files
    for entry in entries:
        if entry.is_symlink():
            continue
        if entry.is_dir() and depth > 0 and entry.name not in SKIPPED_DIRECTORIES:
            files += _walk(entry, depth - 1)
        elif entry.is_file():
            files.append(entry)
    return files


def _uses_pytest(root: Path) -> bool:
    """pytest when the repository says so, or when its tests are plain `def test_…` functions
    (unittest would run none of them and report OK)."""
    for name, needle in PYTEST_MARKERS.items():
        path = root / name
        if path.is_file() and needle in _text(path):
            return True
    if _mentions(root, "pytest") or declared_tests(root).found:
        return True
    return not any("unittest" in _text(path) for path in _python_test_files(root))


def _mentions(root: Path, word: str) -> bool:
    """`word` is among the declared dependencies (requirements files, pyproject.toml)."""
    files = [*root.glob("requirements*.txt"), root / "pyproject.toml", root / "setup.py"]
    return any(word in _text(path) for path in files if path.is_file())


def _package_scripts(root: Path) -> dict[str, object]:
    try:
        document = json.loads(_text(root / "package.json") or "{}")
    except json.JSONDecodeError:
        return {}
    scripts = document.get("scripts") if isinstance(document, dict) else None
    return scripts if isinstance(scripts, dict) else {}


def _text(path: Path) -> str:
    """A regular file's text; "" for anything else (a link, a FIFO a program left, a folder)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        return ""
    with os.fdopen(descriptor, "rb") as handle:
        return handle.read(MAX_READ_BYTES).decode("utf-8", errors="replace")
