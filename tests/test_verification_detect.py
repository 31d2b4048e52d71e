"""Which test command and setup a repository gets (issue 23), what each runner's output says,
and the configuration that decides both: real files in temporary repositories, real outputs
of the runners as they print them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.ci.inputs import read_inputs, settings_from
from planner.ci.report.tracking import verification_lines
from planner.config import VerificationConfig, load_config
from planner.core.errors import ConfigError
from planner.outcome.evidence import (
    AttemptNote,
    TestRun,
    VerificationNote,
    new_failures,
    recorded_runs,
    verification_note,
)
from planner.text.prompts import render
from planner.verification.suite.detect import resolve
from planner.verification.suite.parse import parse_output
from tests.snapshot import assert_snapshot

AUTO = VerificationConfig()


def files(root: Path, **contents: str) -> Path:
    """Write `contents` (keys use __ for /) under `root`."""
    for name, text in contents.items():
        path = root / name.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("contents", "command", "source"),
    [
        (
            {"tests__test_a.py": "", "pytest.ini": "[pytest]\n"},
            ["python3", "-m", "pytest", "-q"],
            "pytest",
        ),
        (
            {"test_a.py": "", "pyproject.toml": "[tool.pytest.ini_options]\n"},
            ["python3", "-m", "pytest", "-q"],
            "pytest",
        ),
        (
            {"tests__test_a.py": "", "requirements-dev.txt": "pytest==8\n"},
            ["python3", "-m", "pytest", "-q"],
            "pytest",
        ),
        (
            {"tests__test_a.py": "import unittest\n"},
            ["python3", "-m", "unittest", "discover", "-s", "tests"],
            "unittest",
        ),
        ({"test_a.py": "import unittest\n"}, ["python3", "-m", "unittest", "discover"], "unittest"),
        # plain `def test_` functions: unittest would run none of them and say OK
        ({"test_a.py": "def test_a():\n    pass\n"}, ["python3", "-m", "pytest", "-q"], "pytest"),
        (
            {"package.json": json.dumps({"scripts": {"test": "jest"}})},
            ["npm", "test"],
            "package.json",
        ),
        ({"go.mod": "module example.com/x\n"}, ["go", "test", "./..."], "go.mod"),
        ({"Cargo.toml": "[package]\nname = 'x'\n"}, ["cargo", "test"], "Cargo.toml"),
        ({"Makefile": "build:\n\tcc x.c\n\ntest: build\n\t./x\n"}, ["make", "test"], "Makefile"),
    ],
)
def test_each_runner_is_detected(
    tmp_path: Path, contents: dict[str, str], command: list[str], source: str
) -> None:
    found = resolve(files(tmp_path, **contents), AUTO)
    assert found.command == command
    assert source in found.source


@pytest.mark.parametrize(
    "contents",
    [
        {},
        {"README.md": "# no tests\n"},
        {"package.json": json.dumps({"scripts": {"test": 'echo "Error: no test specified"'}})},
        {"package.json": "{not json"},
        {"Makefile": "TEST := 1\nbuild:\n\ttrue\n"},
        {"node_modules__pkg__test_x.py": ""},  # dependencies' tests are not the repository's
    ],
)
def test_no_tests_means_no_command(tmp_path: Path, contents: dict[str, str]) -> None:
    assert resolve(files(tmp_path, **contents), AUTO).command == []


def test_the_configured_command_wins_over_detection(tmp_path: Path) -> None:
    root = files(tmp_path, **{"go.mod": "module x\n"})
    found = resolve(root, VerificationConfig(command="make check -j2"))
    assert (found.command, found.source) == (["make", "check", "-j2"], "verification.command")


def test_python_setup_goes_into_its_own_environment(tmp_path: Path) -> None:
    pyproject = (
        "[project]\nname = 'x'\n[project.optional-dependencies]\n"
        "test = ['pytest']\ndocs = ['sphinx']\ndev = ['ruff']\n"
    )
    root = files(
        tmp_path,
        **{"pyproject.toml": pyproject, "requirements.txt": "requests\n", "tests__test_a.py": ""},
    )
    found = resolve(root, AUTO)
    assert found.python
    assert found.setup == [
        ["pip", "install", "-r", "requirements.txt"],
        ["pip", "install", "-e", ".[test,dev]"],
    ]


def test_npm_setup_comes_from_the_lock_file(tmp_path: Path) -> None:
    scripts = json.dumps({"scripts": {"test": "node --test"}})
    root = files(tmp_path, **{"package.json": scripts, "package-lock.json": "{}"})
    assert resolve(root, AUTO).setup == [["npm", "ci"]]
    assert resolve(root, VerificationConfig(detect_setup=False)).setup == []
    configured = resolve(root, VerificationConfig(setup="npm install --no-audit"))
    assert configured.setup == [["npm", "install", "--no-audit"]]


PYTEST_OUT = """\
..F                                                                      [100%]
=================================== FAILURES ===================================
___________________________________ test_sub ___________________________________
E       assert 8 == 2
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_sub - assert 8 == 2
ERROR tests/test_db.py::test_connect - ConnectionError
==================== 1 failed, 14 passed, 1 error in 0.31s =====================
"""
UNITTEST_OUT = """\
F.E
======================================================================
ERROR: test_b (test_mod.T.test_b)
----------------------------------------------------------------------
FAIL: test_a (test_mod.T.test_a)
----------------------------------------------------------------------
Ran 3 tests in 0.001s

FAILED (failures=1, errors=1)
"""
GO_OUT = """\
--- FAIL: TestAdd (0.00s)
    calc_test.go:9: got 6
FAIL
FAIL\texample.com/calc\t0.002s
"""
CARGO_OUT = """\
running 2 tests
test tests::adds ... ok
test tests::subtracts ... FAILED

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out
"""
JEST_OUT = """\
  ● calc › subtracts

    expect(received).toBe(expected)

Tests:       1 failed, 14 passed, 15 total
"""
TAP_OUT = """\
not ok 2 - subtracts
# tests 3
# pass 2
# fail 1
"""


@pytest.mark.parametrize(
    ("output", "passed", "failed", "failing"),
    [
        (
            PYTEST_OUT,
            14,
            2,
            ["tests/test_calc.py::test_sub", "tests/test_db.py::test_connect"],
        ),
        (UNITTEST_OUT, 1, 2, ["test_b (test_mod.T.test_b)", "test_a (test_mod.T.test_a)"]),
        (GO_OUT, None, 1, ["TestAdd"]),
        (CARGO_OUT, 1, 1, ["tests::subtracts"]),
        (JEST_OUT, 14, 1, ["calc › subtracts"]),
        (TAP_OUT, 2, 1, ["subtracts"]),
        ("  14 passing (20ms)\n  1 failing\n", 14, 1, []),
        ("random noise\n", None, None, []),
    ],
)
def test_failing_names_and_counts_are_parsed(
    output: str, passed: int | None, failed: int | None, failing: list[str]
) -> None:
    parsed = parse_output(output)
    assert (parsed.passed, parsed.failed, parsed.failing) == (passed, failed, failing)


def test_only_new_failures_count() -> None:
    baseline = TestRun(stage="baseline", status="failed", failed=1, failing=["t::old"])
    same = TestRun(status="failed", failed=1, failing=["t::old"])
    worse = TestRun(status="failed", failed=2, failing=["t::old", "t::new"])
    assert new_failures(baseline, same) == []
    assert new_failures(baseline, worse) == ["t::new"]
    unnamed_before = TestRun(stage="baseline", status="failed", failed=3)
    assert new_failures(unnamed_before, TestRun(status="failed", failed=3)) == []
    assert new_failures(unnamed_before, TestRun(status="failed", failed=4)) == [
        "(1 more failing tests than before the change)"
    ]
    passing = TestRun(stage="baseline", status="passed", passed=3, failed=0)
    assert new_failures(passing, TestRun(status="failed", exit_code=2)) == [
        "(the test command failed with exit code 2)"
    ]
    assert new_failures(passing, TestRun(status="timed_out")) == ["(the test command timed out)"]


def test_the_result_line_reads_as_the_issue_asks() -> None:
    note = VerificationNote(
        command="pytest",
        baseline=TestRun(stage="baseline", status="failed", passed=13, failed=1),
        latest=TestRun(status="passed", passed=14, failed=0),
    )
    assert note.line() == "Tests (`pytest`): 14 passed, 0 failed — 1 failing before"


def test_environment_and_action_inputs_set_the_section(tmp_path: Path) -> None:
    env = {
        "VERIFICATION_COMMAND": "npm test -- --ci",
        "VERIFICATION_TIMEOUT_SECONDS": "90",
        "VERIFICATION_MAX_REPAIR_ATTEMPTS": "0",
        "VERIFICATION_DETECT_SETUP": "false",
    }
    config = load_config(None, env=env).verification
    assert (config.command, config.timeout_seconds) == ("npm test -- --ci", 90)
    assert (config.max_repair_attempts, config.detect_setup) == (0, False)
    inputs = read_inputs(
        {"INPUT_VERIFICATION_COMMAND": "make test", "INPUT_VERIFICATION_SETUP": "npm ci"}
    )
    overrides = settings_from(inputs).overrides
    assert overrides["verification.command"] == "make test"
    assert overrides["verification.setup"] == "npm ci"


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("verification.command", "pytest 'unclosed", "cannot be split"),
        ("verification.command", "   ", "empty; leave it unset"),
        ("verification.timeout_seconds", 0, "greater than 0"),
        ("verification.enabled", "sometimes", "'auto', 'on' or 'off'"),
    ],
)
def test_bad_settings_name_the_key(key: str, value: object, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(None, env={}, overrides={key: value})
    assert key in str(caught.value) and message in str(caught.value)


def test_prompts_and_pull_request_lines_snapshot() -> None:
    """What the model and the reviewers read, as one snapshot (UPDATE_SNAPSHOTS=1 accepts)."""
    tail = "E   assert 6 == 5\nFAILED tests/test_calc.py::test_add - assert 6 == 5"
    baseline = TestRun(
        stage="baseline", command="pytest", status="failed", passed=1, failed=1,
        failing=["tests/test_calc.py::test_sub"],
    )  # fmt: skip
    latest = TestRun(
        command="pytest", status="failed", passed=1, failed=1, tail=tail,
        failing=["tests/test_calc.py::test_add"], changed_tests=["tests/test_calc.py"],
    )  # fmt: skip
    note = VerificationNote(
        command="pytest",
        baseline=baseline,
        latest=latest,
        new_failures=new_failures(baseline, latest),
        changed_tests=latest.changed_tests,
    )
    parts = [
        render(
            "verification_planning.md.j2",
            command="pytest",
            tool="run_tests",
            failing=baseline.failing,
            baseline_passed=False,
        ),
        render(
            "verification_feedback.md.j2",
            command="pytest",
            new_failures=note.new_failures,
            added_failures=[],
            issue_failures=[],
            tool="run_tests",
            tail=tail,
            change="--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
            "-    return a + b\n+    return a * b",
        ),
        render(
            "verification_feedback.md.j2",
            command="pytest",
            new_failures=[],
            added_failures=[],
            issue_failures=["tests/test_planner_issue_3.py::test_combined_units"],
            tool="run_tests",
            tail=tail,
            change="",
        ),
        render(
            "verification_result.md.j2",
            command="pytest",
            outcome=latest.counts(),
            new_failures=note.new_failures,
            old_failures=[],
            tail=tail,
        ),
        "\n".join(verification_lines(note)) + "\n",
        "\n".join(verification_lines(_issue_note(baseline, "failed"))) + "\n",
        "\n".join(verification_lines(_issue_note(baseline, "passed"))) + "\n",
        render(
            "verification_planning.md.j2",
            command="",
            issue_test="test_planner_issue_3.py",
            tool="run_tests",
            failing=[],
            baseline_passed=False,
        ),
        render("attempt_hint.md.j2", attempts=[_failed_attempt()], compact=False),
        "\n".join(verification_lines(_won_note(baseline))) + "\n",
    ]
    assert_snapshot("verification_prompts.txt", "\n----\n".join(parts))


def _failed_attempt() -> dict[str, object]:
    return {
        "attempt": 1,
        "failing": ["tests/test_planner_issue_3.py::test_combined_units"],
        "tail": "E   assert 90 == 5400",
        "diff": "--- a/durations.py\n+++ b/durations.py\n@@ -1 +1 @@\n-x = 1\n+x = 2",
    }


def _won_note(baseline: TestRun) -> VerificationNote:
    """The second attempt passes; the first failed the issue's test."""
    note = _issue_note(baseline, "passed")
    failing = ["tests/test_planner_issue_3.py::test_combined_units"]
    attempts = [
        AttemptNote(attempt=1, status="failed", failing=failing),
        AttemptNote(attempt=2, status="won"),
    ]
    return note.model_copy(update={"attempts": attempts})


def test_damaged_entries_are_skipped_and_the_rest_still_counts() -> None:
    entries = [
        {"type": "verification", "stage": "baseline", "status": "failed", "failed": 1,
         "failing": ["t::old"], "command": "pytest"},
        {"type": "verification", "stage": "task", "status": "exploded", "failing": "t::x"},
        {"type": "verification", "stage": "task", "status": "failed", "failed": 2,
         "failing": ["t::old", "t::new"], "command": "pytest"},
        {"type": "verification", "stage": "task", "failing": {"not": "a list"}},
    ]  # fmt: skip
    note = verification_note(entries)
    assert note is not None and note.new_failures == ["t::new"]
    assert len(recorded_runs(entries)) == 2


def _issue_note(baseline: TestRun, status: str) -> VerificationNote:
    """The issue's own test failing (its failures are not regressions) or passing."""
    failing = ["tests/test_planner_issue_3.py::test_combined_units"] if status == "failed" else []
    latest = TestRun(
        stage="task", command="pytest", status=status, passed=2, failed=len(failing),
        failing=failing, issue_test="tests/test_planner_issue_3.py",
    )  # fmt: skip
    return VerificationNote(
        command="pytest",
        baseline=baseline,
        latest=latest,
        new_failures=new_failures(baseline, latest),
        issue_failures=latest.issue_failures,
    )
