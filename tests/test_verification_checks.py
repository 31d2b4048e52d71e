"""What planner checks when no runner can run the tests (issue 46): every changed Python
file compiles and every changed module imports — run for real, as the phase runs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from planner.verification.suite.checks import IMPORT_SCRIPT, check_changed, importable


def files(root: Path, contents: dict[str, str]) -> Path:
    for name, text in contents.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def runs_in(root: Path):  # type: ignore[no-untyped-def]
    def run(argv: list[str]) -> tuple[str, str]:
        done = subprocess.run(
            [sys.executable, *argv[1:]], cwd=root, capture_output=True, text=True, timeout=60
        )
        return done.stdout + done.stderr, ""

    return run


def test_a_file_that_does_not_compile_and_a_module_that_does_not_import_are_named(
    tmp_path: Path,
) -> None:
    root = files(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/broken.py": "def f(:\n    pass\n",
            "pkg/names.py": "VALUE = undefined\n",
            "pkg/needs.py": "import a_package_nobody_installed_x\n",
            "pkg/fine.py": "VALUE = 1\n",
        },
    )
    changed = ["pkg/broken.py", "pkg/names.py", "pkg/needs.py", "pkg/fine.py", "README.md"]
    result = check_changed(root, changed, runs_in(root))

    assert result is not None and result.status == "failed"
    assert result.failing[0].startswith("pkg/broken.py (does not compile: SyntaxError")
    assert result.failing[1] == (
        "pkg.names (does not import: NameError: name 'undefined' is not defined)"
    )
    assert len(result.failing) == 2  # a package that is not installed is not the change's
    assert result.note == "not imported for want of a_package_nobody_installed_x"
    assert (result.passed, result.failed) == (2, 2)


def test_only_modules_are_imported_never_a_script(tmp_path: Path) -> None:
    """A script's top level is its program: importing it would run it."""
    root = files(
        tmp_path,
        {
            "tool.py": "import sys\nsys.exit('ran')\n",
            "lib.py": "X = 1\n",
            "app.py": "import lib\n",
            "conftest.py": "X = 1\n",
        },
    )
    assert importable(root, ["tool.py", "lib.py", "conftest.py"]) == ["lib"]
    assert check_changed(root, ["NOTES.md"], runs_in(root)) is None
    assert "import" in IMPORT_SCRIPT
