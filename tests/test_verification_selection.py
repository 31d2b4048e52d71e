"""Fast test runs in real suites (issue 46): after a task the tests that exercise the changed
files run first — the test files that import a changed module — and the whole command only
when they pass; the baseline and the final run use the whole command, so the pull request
shows the whole suite's result.

A real git repository with two modules and a pytest suite for each; the model is the scripted
stand-in over HTTP.
"""

from __future__ import annotations

from pathlib import Path

from planner.outcome.evidence import is_test_file
from planner.testing.scripted_server import ScriptedModelServer
from planner.verification.suite.selection import exercising_tests, module_names, pytest_on
from tests.plans import committed_repo, completion, finish, planning
from tests.test_verification_pass import PYTEST, of_type, run, write

CALC = "def add(a, b):\n    return a + b\n"
BROKEN = "def add(a, b):\n    return a * b\n"
TEXT = "def shout(word):\n    return word.upper()\n"


def two_module_repo(root: Path) -> Path:
    return committed_repo(
        root,
        {
            "calc.py": CALC,
            "text.py": TEXT,
            "pytest.ini": "[pytest]\npythonpath = .\n",
            "tests/test_calc.py": (
                "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
            ),
            "tests/test_text.py": (
                "import text\n\n\ndef test_shout():\n    assert text.shout('a') == 'A'\n\n\n"
                "def test_shout_twice():\n    assert text.shout('ab') == 'AB'\n"
            ),
        },
    )


def test_after_a_task_the_tests_of_the_changed_module_run_first_and_the_rest_once_they_pass(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = two_module_repo(tmp_path / "repo")
    scripted_model.add(
        planning("task_1"),
        write("calc.py", BROKEN),
        finish(),
        write("calc.py", CALC + "\n"),  # the repair
        finish(),
        completion(),
    )
    result = run(workspace, scripted_model, **{"verification.max_repair_attempts": 1})

    assert result.status == "completed", result.stop_reason
    runs = of_type(workspace, "verification")
    baseline, broken, mended = runs[0], runs[1], runs[2]
    assert (baseline["passed"], baseline["selected"]) == (3, [])
    # the broken module's tests only: test_text.py did not run
    assert broken["selected"] == ["tests/test_calc.py"]
    assert (broken["passed"], broken["failed"]) == (0, 1)
    assert broken["failing"] == ["tests/test_calc.py::test_add"]
    # they pass again: the whole command ran after them, and its result is what is shown
    assert mended["selected"] == [] and mended["passed"] == 3
    assert result.verification is not None
    assert (
        result.verification.line()
        == f"Tests (`{PYTEST}`): 3 passed, 0 failed — all passed before the change"
    )


def test_the_test_files_of_a_changed_module_are_found_by_their_imports(tmp_path: Path) -> None:
    files = {
        "tests/test_direct.py": "from shapes.area import square\n",
        "tests/test_package.py": "from shapes import area\n",
        "tests/test_dotted.py": "import shapes.area as a\n",
        "tests/test_relative.py": "from .area import square\n",
        "tests/test_other.py": "from shapes.perimeter import square\n",
        "tests/test_mentions.py": "# area is mentioned, not imported\nimport os\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    tests = sorted(files)

    def is_test(path: str) -> bool:
        return is_test_file(path, ["test_*.py"])

    chosen = exercising_tests(
        tmp_path, ["src/shapes/area.py", "tests/test_other.py"], tests, is_test
    )
    assert chosen == [
        "tests/test_other.py",  # changed itself
        "tests/test_direct.py",
        "tests/test_dotted.py",
        "tests/test_package.py",
        "tests/test_relative.py",
    ]
    assert module_names("src/shapes/__init__.py") == ["shapes"]
    assert module_names("README.md") == [] and module_names("my-tool/run.py") == []


def test_the_repositorys_pytest_options_are_kept_and_its_paths_replaced(tmp_path: Path) -> None:
    (tmp_path / "tests" / "unit").mkdir(parents=True)
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    command = ["python3", "-m", "pytest", "-q", "-c", "pytest.ini", "-k", "fast", "tests/unit"]
    assert pytest_on(command, ["tests/unit/test_a.py"], tmp_path) == [
        "python3", "-m", "pytest", "-q", "-c", "pytest.ini", "-k", "fast", "tests/unit/test_a.py",
    ]  # fmt: skip
    assert pytest_on(["tox", "-e", "py"], ["t.py"], tmp_path)[:3] == ["python3", "-m", "pytest"]
