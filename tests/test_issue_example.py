"""The issue's own example as its test (planner.verification.reproduction.transcript, issue 46):
a `>>>`
session in the issue and the value the issue says it expected become the issue's test, with
no model call, and go through the same path as a test the model writes.

Asked to write a test of such an issue, the 1.5B model wrote a unittest class importing a
mixin that does not exist with fifty invented assertions (dropped: no test), so its wrong
changes ended unproven at best. Whole passes below use the scripted model over real HTTP, a
real git repository and real pytest runs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from planner.outcome.result import PassResult
from planner.run.runner import PassSetup, run_pass
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_text
from planner.text.issue import IssueContext
from planner.verification.reproduction.transcript import expected_values, transcript_test
from tests.plans import completion, evaluation_ok, finish, planning
from tests.support.issue_test_replies import block, issue_test_then_fixes
from tests.test_issue_test import (
    FIXED,
    LEGACY,
    ONE_UNIT,
    TEST_PATH,
    WRONG_FIX,
    durations_repo,
    issue_test_entries,
)
from tests.test_verification_pass import config, last_prompt, of_type, write

SESSION_ISSUE = IssueContext(
    repository="octo/calc",
    number="3",
    title="Combined durations crash",
    body=(
        "Single units work, combined ones crash:\n\n"
        "```pycon\n"
        ">>> from durations import parse_duration\n"
        '>>> parse_duration("45s")\n'
        "45\n"
        '>>> parse_duration("1h30m")\n'
        "Traceback (most recent call last):\n"
        "  ...\n"
        "ValueError: invalid literal for int() with base 10: '1h30'\n"
        "```\n\n"
        "I expected `5400`, as `parse_duration` is documented to take `1h30m`.\n"
    ),
)


def run(
    workspace: Path, server: ScriptedModelServer, issue: IssueContext, **more: Any
) -> PassResult:
    setup = PassSetup(config=config(server, **{**LEGACY, **more}), workspace=workspace)
    return run_pass(setup, issue)


def pytest_on(folder: Path, name: str, content: str) -> subprocess.CompletedProcess[str]:
    (folder / name).write_text(content, encoding="utf-8")
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", name]
    return subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=120)


def fails_then_passes(folder: Path, name: str, test: str, module: str, right: str) -> None:
    """The test `name` fails on the code in `folder`, and passes once `module` holds `right`."""
    assert pytest_on(folder, name, test).returncode == 1
    (folder / module).write_text(right, encoding="utf-8")
    passed = pytest_on(folder, name, test)
    assert passed.returncode == 0, passed.stdout


# -- what is built from an issue -----------------------------------------------------------------


def module(folder: Path, name: str, text: str = "") -> Path:
    """A module of the repository the session may import."""
    (folder / f"{name}.py").write_text(text, encoding="utf-8")
    return folder


def built_test(folder: Path, body: str, name: str, text: str = "") -> str:
    """The issue's test built from `body` (there must be one), with the module `name` holding
    `text` in `folder`."""
    test = transcript_test(body, module(folder, name, text))
    assert test is not None
    return test


def test_the_exception_the_session_shows_is_the_call_the_expected_value_belongs_to(
    tmp_path: Path,
) -> None:
    """`45` is an int like `5400`, but the traceback is the bug the issue reports."""
    test = built_test(tmp_path, SESSION_ISSUE.body, "durations")
    assert '    assert (parse_duration("1h30m")) == 5400' in test
    assert "from durations import parse_duration" in test
    assert 'parse_duration("45s")' in test  # the session is replayed as it was shown
    assert "`1h30m`" not in test and "documented" not in test


def test_it_fails_on_the_bug_and_passes_on_the_fix_when_run_by_pytest(tmp_path: Path) -> None:
    test = built_test(tmp_path, SESSION_ISSUE.body, "durations", ONE_UNIT)
    fails_then_passes(tmp_path, "test_example.py", test, "durations.py", FIXED)


def test_a_shown_value_is_paired_with_an_expected_value_of_its_type_the_later_one_first(
    tmp_path: Path,
) -> None:
    body = (
        "```python\n>>> from shapes import area, label\n>>> label(2)\n'two'\n"
        ">>> area(2)\n4\n>>> area(3)\n6\n```\n\n"
        "Expected `9` for a side of 3. The label is right (`'two'`).\n"
    )
    test = built_test(tmp_path, body, "shapes")
    assert "assert (area(3)) == 9" in test
    assert "area(2)" in test.split("assert")[0]  # replayed before the check, not checked
    assert test.count("assert ") == 1  # 'two' is in a sentence that expects nothing


def test_several_values_one_sentence_expects_pair_in_order_with_the_calls_shown(
    tmp_path: Path,
) -> None:
    """Three numbers are equally alike to three shown numbers: the order the user lists them
    in says which call each belongs to. A value a call shows already is right: no check."""
    rounding = "def round_up(x):\n    return int(x)\n"
    session = (
        "```pycon\n>>> from rounding import round_up\n>>> round_up(1.2)\n1\n"
        ">>> round_up(2.5)\n2\n>>> round_up(3.0)\n3\n>>> round_up(3.7)\n3\n```\n\n"
    )
    body = session + "I expected `2`, `3`, `3` and `4`, in that order.\n"
    test = built_test(tmp_path, body, "rounding", rounding)
    checks = [line.strip() for line in test.splitlines() if line.strip().startswith("assert")]
    assert checks == [
        "assert (round_up(1.2)) == 2",
        "assert (round_up(2.5)) == 3",
        "assert (round_up(3.7)) == 4",
    ]
    right = "import math\n\n\ndef round_up(x):\n    return math.ceil(x)\n"
    fails_then_passes(tmp_path, "test_rounding.py", test, "rounding.py", right)


def test_printed_text_the_issue_expects_must_appear_in_what_the_call_prints(
    tmp_path: Path,
) -> None:
    body = (
        "```python\n>>> from report import render\n>>> print(render([1234567]))\n"
        "total: 1234567\n```\n\nThe total should read `1,234,567`.\n"
    )
    test = built_test(tmp_path, body, "report")
    assert "assert '1,234,567' in _shown(lambda: print(render([1234567])))" in test
    (tmp_path / "report.py").write_text(
        "def render(items):\n    return f'total: {sum(items)}'\n", encoding="utf-8"
    )
    right = "def render(items):\n    return f'total: {sum(items):,}'\n"
    fails_then_passes(tmp_path, "test_report.py", test, "report.py", right)


def test_code_and_names_in_an_expecting_sentence_are_not_taken_for_values() -> None:
    text = (
        "I expected `[['a'], ['b', 'c']]`, like `'a,b,c'.split(',', 1)` does; with `maxsplit=2` "
        "it should give `--x--` too, not `x`.\n```python\n>>> f()\n```\n"
        "Expected `no items` here? `g(1)`"
    )
    assert expected_values(text) == ["[['a'], ['b', 'c']]", "--x--", "no items"]


def test_no_session_or_no_expected_value_builds_nothing(tmp_path: Path) -> None:
    assert transcript_test("`f(2)` returns 3; I expected `4`.", tmp_path) is None
    assert transcript_test("```python\n>>> f(2)\n3\n```\nThis is wrong.", tmp_path) is None
    same = "```python\n>>> f(2)\n4\n```\nI expected `4`."  # shown already: no contradiction
    assert transcript_test(same, tmp_path) is None


def test_a_name_the_session_never_imports_comes_from_the_module_that_defines_it(
    tmp_path: Path,
) -> None:
    package = tmp_path / "src" / "tables"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from tables.core import grid\n", encoding="utf-8")
    (package / "core.py").write_text("def grid(rows):\n    return ''\n", encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_grid.py").write_text("def grid(): ...\n", encoding="utf-8")
    body = "```python\n>>> print(grid([[1]]))\n|1|\n```\nI expected `| 1 |`.\n"
    test = transcript_test(body, tmp_path)
    assert test is not None and "from tables.core import grid" in test


def test_attack_a_session_that_reaches_beyond_the_repository_is_never_replayed(
    tmp_path: Path,
) -> None:
    """The session is the issue's text, written by anyone: replayed, `os.system` would run in
    the job and go into the pull request as a test."""
    module(tmp_path, "durations")
    expected = "\n```\nI expected `5400`.\n"
    for line in (
        "import os; os.system('touch pwned')",
        "__import__('os').system('touch pwned')",
        "getattr(parse_duration, 'x')",
        "parse_duration.__globals__",
        "from typing import get_type_hints",
        "from . import durations",
        "exec('print(1)')",
    ):
        body = (
            f"```python\n>>> from durations import parse_duration\n>>> {line}\n"
            f'>>> parse_duration("1h30m")\n90{expected}'
        )
        assert transcript_test(body, tmp_path) is None, line
    safe = "```python\n>>> import math\n>>> from durations import parse_duration\n"
    safe += f'>>> parse_duration("1h30m")\n5400.0{expected}'
    assert transcript_test(safe, tmp_path) is None  # 5400.0 is a float: no check
    assert transcript_test(safe.replace("5400.0", "90"), tmp_path) is not None  # math is pure


# -- whole passes --------------------------------------------------------------------------------


def test_a_wrong_fix_fails_the_issues_example_and_the_right_one_is_proven_by_it(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """No issue_test call: the session is the test. The wrong fix (the 1.5B's one-unit parser
    with a nicer error) passes the repository's tests and goes back with the example failing;
    the right one passes it, and the example goes into the pull request."""
    workspace = durations_repo(tmp_path / "repo")
    scripted_model.add(
        reply_text("legacy", block("durations.py", WRONG_FIX)),
        reply_text("legacy", block("durations.py", FIXED)),
    )
    result = run(workspace, scripted_model, SESSION_ISSUE)

    assert result.status == "completed", result.stop_reason
    assert len(scripted_model.requests) == 2  # the two fixes: no call for a test
    first = issue_test_entries(workspace)[0]
    assert (first["status"], first["source"]) == ("active", "issue example")
    told = last_prompt(scripted_model, 1)
    assert "test_issue_example_1" in told and "5400" in told
    kept = (workspace / TEST_PATH).read_text(encoding="utf-8")
    assert 'assert (parse_duration("1h30m")) == 5400' in kept
    assert issue_test_entries(workspace)[-1]["status"] == "kept"


def test_a_session_that_passes_before_the_change_falls_back_to_the_models_test(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = durations_repo(tmp_path / "repo")
    already = SESSION_ISSUE.model_copy(
        update={"body": SESSION_ISSUE.body.replace('"1h30m")\nTraceback', '"2h")\nTraceback')}
    )
    already = already.model_copy(update={"body": already.body.replace("`5400`", "`7200`")})
    scripted_model.add(*issue_test_then_fixes("no test today", "durations.py", FIXED))
    run(workspace, scripted_model, already)

    statuses = [(e["status"], e.get("source", "")) for e in issue_test_entries(workspace)]
    assert statuses[:2] == [("active", "issue example"), ("dropped", "")]
    assert "passes on the code before the change" in issue_test_entries(workspace)[1]["reason"]
    assert "before anyone fixes the issue" in last_prompt(scripted_model, 0).lower()


def test_the_first_task_is_shown_the_issues_test_failing_before_any_change(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """Shown its test failing only after a first edit, the 1.5B first changed what the plan
    said; the task's prompt now starts from the reproduction, as Agentless does."""
    workspace = durations_repo(tmp_path / "repo")
    scripted_model.add(planning("task_1"), write("durations.py", FIXED), finish(), completion())
    run(workspace, scripted_model, SESSION_ISSUE, **{"planning.enabled": True})

    execute = last_prompt(scripted_model, 1)
    assert "## The issue's test fails on the current code" in execute
    assert 'assert (parse_duration("1h30m")) == 5400' in execute
    assert "ValueError" in execute  # the end of the real failing output
    after = last_prompt(scripted_model, 2)
    assert "## The issue's test fails on the current code" not in after
    assert of_type(workspace, "issue_test")[-1]["status"] == "kept"


def test_attack_an_issue_session_that_runs_a_program_does_not_run_it(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """End to end: the issue's session writes a file through `os`. Replayed as the issue's
    test, the file would appear when the test runs before the change."""
    workspace = durations_repo(tmp_path / "repo")
    marker = tmp_path / "pwned"
    body = SESSION_ISSUE.body.replace(
        '>>> parse_duration("45s")',
        f">>> import os; os.system('touch {marker}')\n0\n>>> parse_duration(\"45s\")",
    )
    hostile = SESSION_ISSUE.model_copy(update={"body": body})
    scripted_model.add(*issue_test_then_fixes("no test today", "durations.py", FIXED))
    run(workspace, scripted_model, hostile)

    assert not marker.exists()
    assert all(e.get("source") != "issue example" for e in issue_test_entries(workspace))
    assert not any("os.system" in str(e.get("content")) for e in issue_test_entries(workspace))


def test_without_decomposition_the_issue_is_the_one_task_with_no_planning_or_review_call(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """planning.decompose false (profile small_model): the first request is the task itself,
    shown the issue's failing test; the plan is the issue as one task, not reviewed."""
    workspace = durations_repo(tmp_path / "repo")
    scripted_model.add(write("durations.py", FIXED), finish(), evaluation_ok(), completion())
    overrides = {
        "planning.enabled": True,
        "planning.decompose": False,
        "planning.replanning.enabled": True,
    }
    result = run(workspace, scripted_model, SESSION_ISSUE, **overrides)

    assert result.status == "completed", result.stop_reason
    first = last_prompt(scripted_model, 0)
    assert "## The issue's test fails on the current code" in first
    (plan,) = of_type(workspace, "plan")
    [task] = plan["plan"]["task_decomposition"]["subtasks"]
    assert task["description"].startswith("Make the change the issue asks for")
    assert [e["outcome"] for e in of_type(workspace, "plan_review")] == ["not_reviewed"]
    assert not of_type(workspace, "plan_repaired")
