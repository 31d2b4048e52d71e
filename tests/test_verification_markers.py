"""A project's test requirements as pip would read them for the interpreter that runs the tests
(issue 59): environment markers evaluated, PEP 735 dependency groups (with `include-group`, and
named by tox's `dependency_groups`) read, and a setup that leaves pytest missing is a failed
setup that says why.

pip installs for real, from a folder of wheels (tests/support/wheels.py) through
verification.find_links: no index is reached. The project installs itself with an in-tree
build backend (`backend-path`), so `pip install -e .` needs nothing from an index either.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from packaging.markers import default_environment

from planner.config import PlannerConfig
from planner.testing.scripted_server import ScriptedModelServer
from planner.verification.suite.declared import declared_tests
from planner.verification.suite.detect import provision_steps, resolve
from planner.verification.suite.runner import TestRunner
from tests.plans import committed_repo, completion, finish, planning, write_files
from tests.support.wheels import made_up_wheel, wheelhouse_with_pytest
from tests.test_verification_pass import of_type, write
from tests.test_verification_provisioning import (
    GREET,
    GREET_TEST,
    PROBE,
    VERIFY,
    no_pytest,
    run,
)

__all__ = ["no_pytest"]  # the fixture, used by name

OLD_PYTEST = "pytest>=7,<8; python_version < '3.8'"
NEW_PYTEST = "pytest>=8; python_version >= '3.8'"
BACKEND = '''"""An in-tree PEP 517 backend: an editable install is a .pth naming this folder."""
import base64, hashlib, os, zipfile

NAME, VERSION = "greeting", "1"


def _digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    info = f"{NAME}-{VERSION}.dist-info"
    files = {
        f"{NAME}.pth": (os.getcwd() + "\\n").encode(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\\nName: {NAME}\\nVersion: {VERSION}\\n"
        .encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\\nGenerator: x\\nRoot-Is-Purelib: true\\n"
        b"Tag: py3-none-any\\n",
    }
    name = f"{NAME}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as archive:
        record = []
        for path, data in files.items():
            archive.writestr(path, data)
            record.append(f"{path},{_digest(data)},{len(data)}")
        archive.writestr(f"{info}/RECORD", "\\n".join(record + [f"{info}/RECORD,,"]) + "\\n")
    return name


build_wheel = build_editable
'''
PYPROJECT = f"""[build-system]
requires = []
build-backend = "backend"
backend-path = ["_build"]

[project]
name = "greeting"
version = "1"

[dependency-groups]
test = ["{OLD_PYTEST}", "{NEW_PYTEST}"]
dev = [{{include-group = "test"}}, "planner-probe-dep"]
"""
TOX = "[tox]\nenvlist = py\n\n[testenv]\ndependency_groups = dev\ncommands = pytest\n"
PROBE_TEST = f"from {PROBE} import VALUE\n\n\ndef test_value():\n    assert VALUE == 42\n"
HERE = {key: str(value) for key, value in default_environment().items()}


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = wheelhouse_with_pytest(tmp_path_factory.mktemp("wheels"))
    made_up_wheel(folder, "planner-probe-dep", PROBE, "VALUE = 42\n")
    return folder


def test_the_requirement_whose_marker_holds_is_installed_from_an_included_group(
    tmp_path: Path, scripted_model: ScriptedModelServer, wheels: Path, no_pytest: Path
) -> None:
    """The released project's way: pytest for old Pythons first, pytest for the rest second,
    the test group included in `dev`, and tox naming `dependency_groups = dev`. Installing the
    first pytest requirement is a no-op on this Python: the pass used to record the setup
    ok, and the baseline then ended `No module named pytest` with no test run at all."""
    workspace = committed_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": PYPROJECT,
            "_build/backend.py": BACKEND,
            "tox.ini": TOX,
            "greeting.py": GREET,
            "tests/test_probe.py": PROBE_TEST,
        },
    )
    scripted_model.add(planning("task_1"), write("NOTES.md", "n\n"), finish(), completion())
    result = run(workspace, scripted_model, wheels)

    (setup,) = of_type(workspace, "verification_setup")
    assert setup["ok"] is True, setup["problems"]
    installed = shlex.split(setup["commands"][1].split(" (pytest is not installed")[0])
    assert installed == ["pip", "install", NEW_PYTEST, "planner-probe-dep"]
    assert setup["commands"][2].startswith("pip install -e . (")
    baseline = of_type(workspace, "verification")[0]
    assert (baseline["status"], baseline["passed"]) == ("passed", 1), baseline["tail"]
    assert result.status == "completed", result.stop_reason


def test_a_setup_that_leaves_pytest_missing_is_a_failed_setup_that_says_why(
    tmp_path: Path, scripted_model: ScriptedModelServer, no_pytest: Path
) -> None:
    """Every install exits 0, yet the tests' interpreter cannot import pytest (here the
    package source's `pytest` installs no such module). The setup is recorded failed with its
    reason, and the line the user reads says it instead of a bare "No module named pytest"."""
    folder = tmp_path / "wheels"
    made_up_wheel(folder, "pytest", "not_the_runner", "")
    workspace = committed_repo(
        tmp_path / "repo", {"greet.py": GREET, "tests/test_greet.py": GREET_TEST}
    )
    scripted_model.add(planning("task_1"), write("NOTES.md", "n\n"), finish(), completion())
    result = run(workspace, scripted_model, folder)

    setup = of_type(workspace, "verification_setup")[0]
    assert setup["ok"] is False
    assert setup["commands"][-1] == "the test runner (pytest)"
    (problem,) = setup["problems"]
    assert "the setup ended without errors" in problem and "cannot import pytest" in problem
    baseline = of_type(workspace, "verification")[0]
    assert baseline["status"] == "not_run"
    assert "the setup ended without errors" in baseline["reason"]
    assert result.verification is not None
    assert "still cannot import pytest" in result.verification.line()


def test_markers_are_evaluated_for_the_interpreter_that_runs_the_tests(tmp_path: Path) -> None:
    """The same declaration gives the old pytest to a Python 3.7 and the new one to this one;
    a requirement for another platform is left out, and one without markers always stays."""
    tox = (
        f"[testenv]\ndeps =\n    {OLD_PYTEST}\n    {NEW_PYTEST}\n"
        '    pywin32; sys_platform == "win32"\n    mock\n'
    )
    root = write_files(tmp_path, {"tox.ini": tox, "tests/test_a.py": "def test_a():\n    pass\n"})
    found = resolve(root, VERIFY)
    old = {**HERE, "python_version": "3.7", "python_full_version": "3.7.9", "sys_platform": "linux"}
    new = {**HERE, "python_version": "3.12", "python_full_version": "3.12.1"}
    assert provision_steps(found, old) == [["pip", "install", OLD_PYTEST, "mock"]]
    assert provision_steps(found, {**new, "sys_platform": "linux"}) == [
        ["pip", "install", NEW_PYTEST, "mock"]
    ]
    assert provision_steps(found, {**new, "sys_platform": "win32"})[0][2:4] == [
        NEW_PYTEST,
        'pywin32; sys_platform == "win32"',
    ]


def test_only_markers_for_other_pythons_still_install_pytest(tmp_path: Path) -> None:
    """Where none of the declared pytest requirements applies, pytest itself is installed:
    the tests must run on this interpreter all the same."""
    root = write_files(
        tmp_path, {"tox.ini": f"[testenv]\ndeps = {OLD_PYTEST}\n", "tests/test_a.py": ""}
    )
    steps = provision_steps(resolve(root, VERIFY), {**HERE, "python_version": "3.11"})
    assert steps == [["pip", "install", "pytest"]]


@pytest.mark.parametrize(
    ("contents", "requirements", "where"),
    [
        (  # include-group, nested, and a cycle that adds nothing more
            {
                "pyproject.toml": "[dependency-groups]\n"
                "lint = ['ruff']\n"
                "test = ['pytest', {include-group = 'extra'}]\n"
                "extra = ['hypothesis', {include-group = 'test'}]\n"
                "dev = [{include-group = 'test'}, 'coverage']\n"
            },
            ["pytest", "hypothesis", "coverage"],
            ["pyproject.toml"],
        ),
        (  # tox names the group; pytest is only in the group
            {
                "pyproject.toml": "[dependency-groups]\ndev = ['pytest>=8', 'mock']\n",
                "tox.ini": "[testenv]\ndeps = coverage\ndependency_groups =\n    dev\n",
            },
            ["pytest>=8", "mock", "coverage"],
            ["pyproject.toml", "tox.ini"],
        ),
        (  # tox's TOML form, in tox.toml and in pyproject's [tool.tox]
            {
                "pyproject.toml": "[dependency-groups]\ntest = ['pytest']\n"
                "[tool.tox.env.unit]\ndeps = ['mock']\ndependency_groups = ['test']\n",
                "tox.toml": "[env_run_base]\ndeps = ['pytest', 'attrs']\n",
            },
            ["pytest", "attrs", "mock"],
            ["pyproject.toml", "tox.toml"],
        ),
        (  # the same distribution under two markers: both kept, for the interpreter to pick
            {"tox.ini": f"[testenv]\ndeps =\n    {OLD_PYTEST}\n    {NEW_PYTEST}\n    pytest\n"},
            [OLD_PYTEST, NEW_PYTEST, "pytest"],
            ["tox.ini"],
        ),
    ],
)
def test_dependency_groups_and_markers_are_read(
    tmp_path: Path, contents: dict[str, str], requirements: list[str], where: list[str]
) -> None:
    declared = declared_tests(write_files(tmp_path, contents))
    assert (declared.requirements, declared.where) == (requirements, where)


def test_the_probe_reports_the_interpreters_marker_values(tmp_path: Path, no_pytest: Path) -> None:
    """The tests' `python3` (here a venv of this interpreter) is asked for its marker values:
    they are those packaging computes for this interpreter, every one of them."""
    values = TestRunner(tmp_path, PlannerConfig()).marker_environment()
    assert values == HERE
