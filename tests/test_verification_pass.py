"""Whole passes with the repository's tests (issue 23): baseline, runs after changes, failures
fed back, bounded repairs, honest status, and the bad inputs (hang, megabytes, missing program,
tests edited by the model).

The model is the scripted stand-in over real HTTP; the repository is a real git repository
with a real pytest suite of one passing and one failing test, run by the real runner.
"""

from __future__ import annotations

import gc
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from planner.config import PlannerConfig, load_config
from planner.core.interfaces import ToolCall
from planner.memory.history import PlanningHistoryStore
from planner.outcome.result import PassResult
from planner.run.runner import PassSetup, run_pass
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import Step, reply_tool_calls
from planner.text.issue import IssueContext
from planner.verification.fixes.undo import RepairUndo
from planner.verification.suite.changes import diff_since, head_commit
from tests.plans import (
    ROOT_TOOLS,
    commit_all,
    committed_repo,
    completion,
    evaluation_ok,
    finish,
    judge_plan,
    judge_result,
    planning,
    reflection,
    review_ok,
)
from tests.support.stale_roots import ROOTS, SCRATCH_TEST, shared_temporary_folder

ISSUE = IssueContext(
    repository="octo/calc",
    number="3",
    title="sub adds",
    body="calc.sub adds instead of subtracting.",
)
PYTEST = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider"
GOOD = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
BUGGY = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a + b\n"
BROKEN_ADD = "def add(a, b):\n    return a * b\n\n\ndef sub(a, b):\n    return a - b\n"
TESTS = (
    "from calc import add, sub\n\n\n"
    "def test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_sub():\n    assert sub(5, 3) == 2\n"
)


def calc_repo(root: Path) -> Path:
    """One passing test (test_add) and one failing test (test_sub) at the start."""
    contents = {"calc.py": BUGGY, "tests/test_calc.py": TESTS}
    return committed_repo(root, contents | {"pytest.ini": "[pytest]\npythonpath = .\n"})


def config(server: ScriptedModelServer, **overrides: Any) -> PlannerConfig:
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url, "OPENAI_MODEL": "m"}
    values = {
        "llm.max_retries": 0,
        "planning.refinement.enabled": False,
        "planning.replanning.enabled": False,
        "planning.reflection.enabled": False,
        "verification.command": PYTEST,
        **ROOT_TOOLS,  # the tests run with this checkout's interpreter
        "llm.edit_format": "edit_file",  # every turn offers run_tests (whole_file: not the first)
        "verification.issue_test": False,  # its own tests: tests/test_issue_test.py
        **overrides,
    }
    return load_config(None, env=env, overrides=values)


def run(workspace: Path, server: ScriptedModelServer, **overrides: Any) -> PassResult:
    setup = PassSetup(config=config(server, **overrides), workspace=workspace)
    return run_pass(setup, ISSUE)


def entries(workspace: Path) -> list[dict[str, Any]]:
    store = PlanningHistoryStore(workspace / "planning_history", "octo/calc", "3")
    return store.entries()


def of_type(workspace: Path, kind: str) -> list[dict[str, Any]]:
    return [e for e in entries(workspace) if e["type"] == kind]


def completed_with_runs(
    workspace: Path, server: ScriptedModelServer, **overrides: Any
) -> tuple[PassResult, list[dict[str, Any]]]:
    """A pass that must complete, and the runs of the tests it recorded."""
    result = run(workspace, server, **overrides)
    assert result.status == "completed", result.stop_reason
    return result, of_type(workspace, "verification")


def write(path: str, content: str) -> Any:
    return reply_tool_calls("execute", [("write_file", {"path": path, "content": content})])


def add_broken_then(
    server: ScriptedModelServer, repair: str, *more: Any, created: tuple[str, str] | None = None
) -> None:
    """A one-task plan whose task breaks add (test_add fails), then a repair writing `repair`
    (and creating the file `created`, path and content)."""
    server.add(
        planning("task_1"),
        write("calc.py", BROKEN_ADD),
        finish(),
        write("calc.py", repair),
        *([write(*created)] if created else []),
        finish(),
        *more,
    )


MENDS_NOTHING = BROKEN_ADD.replace("return a - b", "return a + b")
"""A repair after BROKEN_ADD that mends nothing: test_add still fails, and sub breaks again."""


def last_prompt(server: ScriptedModelServer, index: int) -> str:
    return str(server.requests[index].body["messages"][-1]["content"])


def test_baseline_then_a_fix_counts_only_the_new_result(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = calc_repo(tmp_path / "repo")
    scripted_model.add(planning("task_1"), write("calc.py", GOOD), finish(), completion())
    result, runs = completed_with_runs(workspace, scripted_model)

    baseline, after = runs
    assert (baseline["stage"], baseline["status"]) == ("baseline", "failed")
    assert baseline["failing"] == ["tests/test_calc.py::test_sub"]
    assert (baseline["passed"], baseline["failed"]) == (1, 1)
    assert (after["stage"], after["status"], after["task_id"]) == ("task", "passed", "task_1")
    # the baseline ran before the model was asked anything
    kinds = [e["type"] for e in entries(workspace)]
    assert kinds.index("verification") < kinds.index("model_call")
    planning_prompt = last_prompt(scripted_model, 0)
    assert f"The repository's tests run with `{PYTEST}`" in planning_prompt
    assert "- tests/test_calc.py::test_sub" in planning_prompt
    note = result.verification
    assert note is not None and not note.regressed
    assert note.line() == f"Tests (`{PYTEST}`): 2 passed, 0 failed — 1 failing before"


def test_a_regression_goes_back_to_the_model_and_a_repair_fixes_it(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = calc_repo(tmp_path / "repo")
    scripted_model.add(
        planning("task_1", "task_2", chain=True),
        write("calc.py", BROKEN_ADD),  # sub fixed, add broken
        finish(),
        write("NOTES.md", "notes\n"),  # task_2 sees the failure first
        finish(),
        write("calc.py", GOOD),  # the repair task
        finish(),
        completion(),
    )
    result = run(workspace, scripted_model, **{"verification.max_repair_attempts": 1})

    assert result.status == "completed", result.stop_reason
    task_2_prompt = last_prompt(scripted_model, 3)
    assert "## Tests are failing after the last change" in task_2_prompt
    assert "- tests/test_calc.py::test_add" in task_2_prompt
    assert "assert 6 == 5" in task_2_prompt  # the end of the real output
    (repair,) = of_type(workspace, "verification_repair")
    assert repair["new_failures"] == ["tests/test_calc.py::test_add"]
    repair_prompt = last_prompt(scripted_model, 5)
    assert repair["task_id"] in repair_prompt and "test_add" in repair_prompt
    # the repair is shown the code that broke the test, not only the test (shown only the
    # test file, the 1.5B rewrote the test)
    assert "The change was made in NOTES.md, calc.py." in repair_prompt
    assert "=== calc.py (6 lines) ===\n1| def add(a, b):\n2|     return a * b" in repair_prompt
    # and what the change did, as a diff against the code the tests passed on (the 1.5B,
    # shown only the new file, wrote it back unchanged twice)
    diff = "--- a/calc.py\n+++ b/calc.py\n@@ -1,6 +1,6 @@\n def add(a, b):\n-    return a + b\n+"
    assert diff + "    return a * b\n" in repair_prompt
    assert "+++ b/NOTES.md\n@@ -0,0 +1 @@\n+notes" in repair_prompt
    assert [t.id for t in result.tasks] == ["task_1", "task_2", "repair_tests_1"]
    assert all(t.status == "completed" for t in result.tasks)
    assert result.verification is not None and result.verification.latest is not None
    assert result.verification.latest.status == "passed"


def test_a_repair_that_mends_nothing_is_undone_before_the_next(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """The 1.5B's fahrenheit repair: the fix was right, a wrong test still failed, and the
    repair wrote a wrong formula. A repair that passes none of the failing tests is undone, so
    the next repair (or the result) starts from the code before it."""
    workspace = calc_repo(tmp_path / "repo")
    add_broken_then(scripted_model, MENDS_NOTHING, write("calc.py", GOOD), finish(), completion())
    result = run(workspace, scripted_model, **{"verification.max_repair_attempts": 2})

    assert result.status == "completed", result.stop_reason
    (undone,) = of_type(workspace, "verification_repair_undone")
    assert undone["task_id"] == "repair_tests_1" and undone["paths"] == ["calc.py"]
    assert "tests/test_calc.py::test_add" in undone["still_failing"]
    second = last_prompt(scripted_model, 5)  # repair 2 is shown the code from before repair 1
    assert "2|     return a * b" in second and "5| def sub(a, b):\n6|     return a - b" in second
    after_undo = [e for e in of_type(workspace, "verification") if e["task_id"] == "repair_tests_1"]
    assert [e["failed"] for e in after_undo] == [2, 1]


def test_a_repair_undone_is_planners_own_change_not_one_for_approval(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """A repair that mended nothing had created a file: undoing it deletes that file. The
    deletion is planner's own, so the approval gate does not hold it as a change made outside
    any judged call (which ended real-repository passes `needs_human`)."""
    workspace = calc_repo(tmp_path / "repo")
    helper = ("calc_helpers.py", "def twice(x):\n    return 2 * x\n")  # repair 1: a new file
    add_broken_then(
        scripted_model,
        MENDS_NOTHING,
        write("calc.py", GOOD),  # repair 2
        finish(),
        completion(),
        created=helper,
    )
    result = run(workspace, scripted_model, **{"verification.max_repair_attempts": 2})

    assert result.status == "completed", result.stop_reason
    (undone,) = of_type(workspace, "verification_repair_undone")
    assert sorted(undone["paths"]) == ["calc.py", "calc_helpers.py"]
    assert not (workspace / "calc_helpers.py").exists()


def test_a_repair_that_mends_a_test_is_kept(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = calc_repo(tmp_path / "repo")
    add_broken_then(scripted_model, GOOD, completion())
    assert run(workspace, scripted_model).status == "completed"
    assert not of_type(workspace, "verification_repair_undone")
    assert (workspace / "calc.py").read_text(encoding="utf-8") == GOOD


def test_undoing_a_repair_never_writes_through_a_link_put_in_its_place(tmp_path: Path) -> None:
    """Attack: after its write, the repair's command replaces calc.py with a link to a file
    outside the workspace, so that undoing the repair would write that file. The link is
    removed and calc.py put back; the outside file is untouched."""
    workspace = calc_repo(tmp_path / "repo")
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n", encoding="utf-8")
    undo = RepairUndo(workspace)
    undo.start("repair_tests_1", ["tests/test_calc.py::test_add"])
    call = ToolCall(id="1", name="write_file", arguments={"path": "calc.py", "content": GOOD})
    undo.before_write("repair_tests_1", call)
    (workspace / "calc.py").unlink()
    (workspace / "calc.py").symlink_to(outside)

    assert undo.mended_nothing("repair_tests_1", ["tests/test_calc.py::test_add"])
    assert undo.undo() == ["calc.py"]

    assert outside.read_text(encoding="utf-8") == "keep me\n"
    assert not (workspace / "calc.py").is_symlink()
    assert (workspace / "calc.py").read_text(encoding="utf-8") == BUGGY


def test_the_diff_shown_never_runs_a_driver_the_pass_planted(tmp_path: Path) -> None:
    """Attack: the model's commands set a diff driver, a textconv and a smudge filter in
    .git/config and .gitattributes, hoping planner's diff of the change runs them. The diff is
    made from the blobs: none runs, and the diff is still right."""
    workspace = calc_repo(tmp_path / "repo")
    marker = tmp_path / "ran"
    hook = f"sh -c 'touch {shlex.quote(str(marker))}; cat'"
    for key in ("diff.evil.command", "diff.evil.textconv", "filter.evil.smudge"):
        subprocess.run(["git", "config", key, hook], cwd=workspace, check=True)
    (workspace / ".gitattributes").write_text("* diff=evil filter=evil\n", encoding="utf-8")
    (workspace / "calc.py").write_text(GOOD, encoding="utf-8")
    base = head_commit(workspace)

    shown = diff_since(workspace, base, ["calc.py"], max_lines=80)

    assert not marker.exists()
    assert shown.splitlines()[-2:] == ["-    return a + b", "+    return a - b"]
    assert diff_since(workspace, base, ["calc.py"], max_lines=2).endswith("more lines of the diff]")
    (workspace / "data.bin").write_bytes(b"\0\1\2")
    assert diff_since(workspace, base, ["data.bin"], max_lines=80) == ""  # no lines to show


def test_repairs_are_bounded_and_a_regression_is_never_completed(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = calc_repo(tmp_path / "repo")
    add_broken_then(scripted_model, BROKEN_ADD.replace("a * b", "a * b + 0"))  # repair fails
    result = run(workspace, scripted_model, **{"verification.max_repair_attempts": 1})

    assert result.status == "needs_human"
    assert "still fail after 1 repair attempt(s)" in result.stop_reason
    assert "tests/test_calc.py::test_add" in result.stop_reason
    assert len(of_type(workspace, "verification_repair")) == 1
    (unresolved,) = of_type(workspace, "verification_unresolved")
    assert unresolved["new_failures"] == ["tests/test_calc.py::test_add"]
    assert result.verification is not None and result.verification.regressed
    assert not of_type(workspace, "completion")  # never judged done


WRONG_TEST = TESTS + "\n\ndef test_mul():\n    assert add(2, 2) == 5\n"


def add_wrong_test_then(server: ScriptedModelServer, repair: Step, *more: Step) -> None:
    """A task that fixes sub and adds a wrong test to the test file, then the repair's step."""
    server.add(
        planning("task_1"),
        write("calc.py", GOOD),
        write("tests/test_calc.py", WRONG_TEST),
        finish(),
        repair,
        finish(),
        *more,
    )


def test_a_failing_test_the_change_added_may_be_fixed_or_removed(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """The 1.5B, on a docs issue, added a wrong test to an existing test file; the repair told
    it to make "the tests that passed before" pass and to change tests only where the issue
    asks, so it could do neither and the pass ended needs_human. A test the change added is
    named as such, and the model may fix or remove it."""
    workspace = calc_repo(tmp_path / "repo")
    # the repair removes the wrong test
    add_wrong_test_then(scripted_model, write("tests/test_calc.py", TESTS), completion())
    result = run(workspace, scripted_model, **{"verification.max_repair_attempts": 1})

    assert result.status == "completed", result.stop_reason
    (repair,) = of_type(workspace, "verification_repair")
    assert repair["new_failures"] == ["tests/test_calc.py::test_mul"]
    repair_prompt = last_prompt(scripted_model, 4)
    assert "Tests this change added fail: tests/test_calc.py::test_mul; fix them, or remove" in (
        repair_prompt
    )
    assert "passed before the change" not in repair_prompt
    assert "change a test only where the issue asks for it or the change added it" in (
        repair_prompt
    )


def test_a_failing_test_the_change_added_is_named_as_such_when_it_stays(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = calc_repo(tmp_path / "repo")
    add_wrong_test_then(scripted_model, write("calc.py", GOOD + "\n# the test stays\n"))
    result = run(workspace, scripted_model, **{"verification.max_repair_attempts": 1})

    assert result.status == "needs_human"
    assert result.stop_reason.startswith(
        "tests the change added fail after 1 repair attempt(s): tests/test_calc.py::test_mul;"
    )


def test_a_test_not_yet_committed_when_planner_started_is_not_taken_for_one_it_added(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """A local run on a checkout with a new test not committed yet: that test is the
    maintainer's. Taken for one the change added, the model would be told it may remove it."""
    workspace = calc_repo(tmp_path / "repo")
    mine = "from calc import add\n\n\ndef test_one():\n    assert add(1, 1) == 2\n"
    (workspace / "tests" / "test_mine.py").write_text(mine, encoding="utf-8")
    scripted_model.add(planning("task_1"), write("calc.py", BROKEN_ADD), finish())
    result = run(workspace, scripted_model, **{"verification.max_repair_attempts": 0})

    assert result.status == "needs_human"
    assert result.stop_reason.startswith(
        "tests that passed before the change still fail (no repair attempts allowed): "
        "tests/test_calc.py::test_add, tests/test_mine.py::test_one;"
    )
    assert "added" not in result.stop_reason
    assert (workspace / "tests" / "test_mine.py").read_text(encoding="utf-8") == mine


def test_failures_already_there_at_baseline_do_not_count(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = calc_repo(tmp_path / "repo")
    scripted_model.add(planning("task_1"), write("NOTES.md", "n\n"), finish(), completion())
    result = run(workspace, scripted_model)

    assert result.status == "completed", result.stop_reason
    assert not of_type(workspace, "verification_repair")
    note = result.verification
    assert note is not None and note.new_failures == []
    assert note.line().endswith(": 1 passed, 1 failed — 1 failing before")


def test_a_later_pass_reuses_the_recorded_baseline(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = calc_repo(tmp_path / "repo")
    scripted_model.add(planning("task_1"), write("calc.py", BROKEN_ADD), finish())
    first = run(workspace, scripted_model, **{"verification.max_repair_attempts": 0})
    assert first.status == "needs_human"
    scripted_model.add(write("calc.py", GOOD), finish(), completion())
    second = run(workspace, scripted_model, **{"verification.max_repair_attempts": 1})

    assert second.status == "completed", second.stop_reason

    stages = [e["stage"] for e in of_type(workspace, "verification")]
    assert stages.count("baseline") == 1  # the first pass's, describing the untouched tree
    assert second.verification is not None and second.verification.baseline is not None
    assert second.verification.baseline.failing == ["tests/test_calc.py::test_sub"]


def test_the_model_runs_the_tests_with_run_tests(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = calc_repo(tmp_path / "repo")
    scripted_model.add(
        planning("task_1", tool="run_tests"),
        reply_tool_calls("execute", [("run_tests", {})]),
        write("calc.py", GOOD),
        finish(),
        completion(),
    )
    result = run(workspace, scripted_model)

    assert result.status == "completed", result.stop_reason
    offered = [t["function"]["name"] for t in scripted_model.requests[1].body["tools"]]
    assert "run_tests" in offered
    answer = scripted_model.requests[2].body["messages"][-1]["content"]
    assert answer.startswith("ERROR: tests failed")
    assert "1 passed, 1 failed" in answer
    assert "Already failing before any change:\n- tests/test_calc.py::test_sub" in answer
    tool_run = [e for e in of_type(workspace, "verification") if e["stage"] == "tool"]
    assert tool_run and tool_run[0]["task_id"] == "task_1"


def test_tests_edited_by_the_model_are_named(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = calc_repo(tmp_path / "repo")
    weakened = TESTS.replace("assert sub(5, 3) == 2", "assert sub(5, 3) == 8")
    scripted_model.add(
        planning("task_1"), write("tests/test_calc.py", weakened), finish(), completion()
    )
    result = run(workspace, scripted_model)

    note = result.verification
    assert note is not None and note.changed_tests == ["tests/test_calc.py"]
    assert "Test files changed by planner (review them): `tests/test_calc.py`" in note.details()


def test_a_hanging_test_command_is_killed_and_the_pass_goes_on(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """A suite longer than its timeout is killed at the baseline, is not run whole again after
    the task (which would only wait out the timeout once more), and runs whole at the end."""
    workspace = calc_repo(tmp_path / "repo")
    hang = f"{shlex.quote(sys.executable)} -c 'import time; time.sleep(120)'"
    scripted_model.add(planning("task_1"), write("NOTES.md", "n\n"), finish(), completion())
    result, runs = completed_with_runs(
        workspace,
        scripted_model,
        **{"verification.command": hang, "verification.timeout_seconds": 1},
    )

    assert [r["stage"] for r in runs] == ["baseline", "task", "final"]
    assert [r["status"] for r in runs] == ["timed_out", "not_run", "timed_out"]
    assert "timed out after 1s (verification.timeout_seconds)" in runs[0]["reason"]
    assert "it runs whole only at the end" in runs[1]["reason"]
    assert result.verification is not None and not result.verification.regressed


def test_megabytes_of_output_are_bounded(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = calc_repo(tmp_path / "repo")
    loud = f"{shlex.quote(sys.executable)} -c 'print(\"x\" * 5_000_000); raise SystemExit(1)'"
    scripted_model.add(planning("task_1"), write("NOTES.md", "n\n"), finish(), completion())
    run(workspace, scripted_model, **{"verification.command": loud})

    history = (workspace / "planning_history").glob("*.jsonl")
    size = sum(path.stat().st_size for path in history)
    assert size < 100_000
    (baseline, _after) = of_type(workspace, "verification")
    assert len(baseline["tail"]) <= 3_000


def test_a_missing_program_is_named_with_its_key(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = calc_repo(tmp_path / "repo")
    scripted_model.add(planning("task_1"), write("NOTES.md", "n\n"), finish(), completion())
    result, runs = completed_with_runs(
        workspace, scripted_model, **{"verification.command": "no-such-runner-x --all"}
    )

    (baseline,) = runs
    assert baseline["status"] == "not_run"
    assert "`no-such-runner-x` is not installed" in baseline["reason"]
    assert "(verification.command)" in baseline["reason"]
    offered = [t["function"]["name"] for t in scripted_model.requests[1].body["tools"]]
    assert "run_tests" not in offered
    assert result.verification is not None
    assert result.verification.line().startswith("Tests: not run — `no-such-runner-x`")


def test_no_tests_detected_is_said_plainly(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = calc_repo(tmp_path / "repo")
    subprocess.run(["git", "rm", "-q", "-r", "tests", "pytest.ini"], cwd=workspace, check=True)
    scripted_model.add(planning("task_1"), write("NOTES.md", "n\n"), finish(), completion())
    result = run(workspace, scripted_model, **{"verification.command": None})

    assert result.verification is not None
    assert result.verification.line().startswith("Tests: not run — No tests detected")


def test_setup_runs_before_the_model_without_tokens(
    tmp_path: Path, scripted_model: ScriptedModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = calc_repo(tmp_path / "repo")
    monkeypatch.setenv("GITHUB_TOKEN", "ghs_secret_value")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    seen = tmp_path / "setup-env.json"
    script = f"import json, os; json.dump(sorted(os.environ), open({str(seen)!r}, 'w'))"
    setup = f"{shlex.quote(sys.executable)} -c {shlex.quote(script)}"
    scripted_model.add(planning("task_1"), write("calc.py", GOOD), finish(), completion())
    run(workspace, scripted_model, **{"verification.setup": setup})

    names = json.loads(seen.read_text(encoding="utf-8"))
    assert "GITHUB_TOKEN" not in names and "OPENAI_API_KEY" not in names
    assert "PATH" in names
    kinds = [e["type"] for e in entries(workspace)]
    assert kinds.index("verification_setup") < kinds.index("model_call")
    (setup_entry,) = of_type(workspace, "verification_setup")
    assert setup_entry["ok"] is True


def test_python_dependencies_go_into_their_own_environment(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """requirements.txt means a virtual environment of the tests' own: the setup and the tests
    run with it first on PATH, and planner's own interpreter is left as it was."""
    workspace = calc_repo(tmp_path / "repo")
    (workspace / "requirements.txt").write_text("# pytest comes with the runner\n", "utf-8")
    seen = tmp_path / "prefix.txt"
    probe = f"import sys; open({str(seen)!r}, 'w').write(sys.prefix)"
    command = f"python3 -c {shlex.quote(probe)}"
    scripted_model.add(planning("task_1"), write("NOTES.md", "n\n"), finish(), completion())
    run(workspace, scripted_model, **{"verification.command": command})

    (setup,) = of_type(workspace, "verification_setup")
    assert setup["ok"] is True, setup["problems"]
    assert setup["commands"][1] == "pip install -r requirements.txt"
    prefix = seen.read_text(encoding="utf-8")
    assert "planner-verification-venv-" in prefix
    assert prefix != sys.prefix and not prefix.startswith(sys.prefix)


def test_the_judge_and_the_final_evaluation_are_given_the_test_evidence(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = calc_repo(tmp_path / "repo")
    edited = TESTS.replace("assert sub(5, 3) == 2", "assert sub(5, 3) in (2, 8)")
    scripted_model.add(
        planning("task_1"),
        review_ok(),
        judge_plan(90, True),
        write("calc.py", GOOD),
        write("tests/test_calc.py", edited),
        finish(),
        evaluation_ok(),
        judge_result(90, True),
        completion(),
    )
    result = run(
        workspace,
        scripted_model,
        **{"planning.refinement.enabled": True, "planning.replanning.enabled": True},
    )

    assert result.status == "completed", result.stop_reason
    judged = last_prompt(scripted_model, 7)
    assert "## The repository's tests (run by planner, not by the model)" in judged
    assert f"Tests ({PYTEST}): 2 passed, 0 failed — 1 failing before" in judged
    assert "Test files changed by planner (review them): `tests/test_calc.py`" in judged
    assert "did not weaken or delete tests" in judged
    evaluated = last_prompt(scripted_model, 6)
    assert f"Tests ({PYTEST}): 2 passed, 0 failed — 1 failing before" in evaluated


def test_reflection_is_given_the_test_evidence(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = calc_repo(tmp_path / "repo")
    scripted_model.add(
        planning("task_1", "task_2", chain=False),
        write("calc.py", BROKEN_ADD),
        finish("failed", "could not fix it"),
        reflection(needed=False),
        write("NOTES.md", "n\n"),
        finish(),
    )
    result = run(
        workspace,
        scripted_model,
        **{"planning.reflection.enabled": True, "verification.max_repair_attempts": 0},
    )

    assert result.status == "needs_human"
    reflected = last_prompt(scripted_model, 3)
    assert '<untrusted-data source="test output">' in reflected
    assert "Failing now but not before the change: `tests/test_calc.py::test_add`" in reflected


def test_verification_off_runs_nothing_and_says_so(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = calc_repo(tmp_path / "repo")
    scripted_model.add(planning("task_1"), write("calc.py", GOOD), finish(), completion())
    result, runs = completed_with_runs(workspace, scripted_model, **{"verification.enabled": "off"})

    (entry,) = runs
    assert (entry["status"], entry["reason"]) == ("not_run", "verification.enabled is off")
    assert result.verification is not None
    assert result.verification.line() == "Tests: not run — verification.enabled is off"
    assert "run_tests" not in [
        t["function"]["name"] for t in scripted_model.requests[1].body["tools"]
    ]


def test_the_tests_get_a_temporary_folder_of_their_own(
    tmp_path: Path, scripted_model: ScriptedModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repository's pytest whose tests use tmp_path deletes, when it exits, every old numbered
    root but the last three under <temp>/pytest-of-<user>: on a long-lived runner, other jobs'
    folders, and the time that takes is the tests'. The tests get a folder of their own."""
    workspace = calc_repo(tmp_path / "repo")
    (workspace / "tests" / "test_scratch.py").write_text(SCRATCH_TEST, "utf-8")
    subprocess.run(["git", "add", "."], cwd=workspace, check=True)
    shared, roots = shared_temporary_folder(tmp_path, monkeypatch)
    scripted_model.add(planning("task_1"), write("calc.py", GOOD), finish(), completion())
    _, runs = completed_with_runs(workspace, scripted_model)

    baseline = runs[0]
    assert (baseline["passed"], baseline["failing"]) == (2, ["tests/test_calc.py::test_sub"])
    assert sorted(path.name for path in roots.iterdir()) == ROOTS
    gc.collect()  # the pass's runner, and with it the tests' folder, is gone
    assert sorted(path.name for path in shared.iterdir()) == [roots.name]


SERVICE_TEST = (
    "import socket\n\n\n"
    "def test_talks_to_the_database():\n"
    "    closed = socket.socket()\n"
    "    closed.bind(('127.0.0.1', 0))\n"
    "    port = closed.getsockname()[1]\n"
    "    closed.close()\n"
    "    socket.create_connection(('127.0.0.1', port), timeout=5)\n"
)


def test_tests_that_need_a_service_get_a_clear_line_and_the_pass_goes_on(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """A package whose tests need a database: at the baseline they fail for want of it, which
    the line says; they are not the change's failures, and the pass completes."""
    workspace = calc_repo(tmp_path / "repo")
    (workspace / "tests" / "test_db.py").write_text(SERVICE_TEST, encoding="utf-8")
    commit_all(workspace, "db")
    scripted_model.add(planning("task_1"), write("calc.py", GOOD), finish(), completion())
    result, runs = completed_with_runs(workspace, scripted_model)

    baseline = runs[0]
    assert "tests/test_db.py::test_talks_to_the_database" in baseline["failing"]
    assert result.verification is not None
    line = result.verification.line()
    assert line.startswith(f"Tests (`{PYTEST}`): 2 passed, 1 failed — 2 failing before")
    assert "some tests need a service or the network, which the tests cannot reach here" in line
    assert "ConnectionRefusedError" in line


PACKAGE = {
    "pkg/__init__.py": "",
    "pkg/core.py": "VALUE = 1\n",
    "pkg/cli.py": "from pkg.core import VALUE\n\nprint(VALUE)\n",
    "run.py": "import sys\nprint(sys.argv)\n",
}


def package_repo(root: Path) -> Path:
    return committed_repo(root, PACKAGE)


def test_without_tests_a_changed_module_must_still_import(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """No runner can run any test (and no test of the issue): `Tests: not run` used to be all
    there was, and a change that broke the package ended `completed`. The changed module is
    imported (a script is not: its top level is its program); failing, it is mended."""
    workspace = package_repo(tmp_path / "repo")
    scripted_model.add(
        planning("task_1"),
        write("pkg/core.py", "VALUE = missing_name\n"),
        finish(),
        write("pkg/core.py", "VALUE = 2\n"),  # the repair
        finish(),
        completion(),
    )
    result, runs = completed_with_runs(
        workspace,
        scripted_model,
        **{"verification.command": None, "verification.max_repair_attempts": 1},
    )

    assert [r["status"] for r in runs] == ["not_run", "failed", "passed"]
    assert runs[1]["failing"] == [
        "pkg.core (does not import: NameError: name 'missing_name' is not defined)"
    ]
    told = last_prompt(scripted_model, 3)
    assert "pkg.core (does not import: NameError" in told
    assert result.verification is not None
    assert result.verification.line() == (
        "Tests: not run — No tests detected: no Python tests, no test script in package.json, "
        "no go.mod, no Cargo.toml and no Makefile with a test target. Set verification.command "
        "to run them. — checked instead: the changed Python file compiles and imports"
    )


# -- tests of the changed code that failed before ------------------------------------------------

HALF_FIXED = BUGGY.replace("def sub(a, b):", "def sub(a, b):  # subtracts")
CLOCK_TESTS = "from clock import hour\n\n\ndef test_hour():\n    assert hour() == 12\n"


def test_a_test_of_the_changed_code_that_failed_before_and_still_fails_is_not_completed(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """cachetools: the change made two of the three failing LRU tests pass, passed the issue's
    test and every test that passed before, and ended `completed` with the bug still there.
    test_sub fails before the change, imports the module the change touched, and still fails:
    the fix is not complete, whatever else passes."""
    workspace = calc_repo(tmp_path / "repo")
    scripted_model.add(
        planning("task_1"),
        write("calc.py", HALF_FIXED),
        finish(),
        write("calc.py", HALF_FIXED.replace("# subtracts", "# subtracts b")),  # the repair
        finish(),
    )
    result = run(workspace, scripted_model)

    assert result.status == "needs_human", result.stop_reason
    assert "tests of the changed code that failed before the change still fail" in (
        result.stop_reason
    )
    assert "tests/test_calc.py::test_sub" in result.stop_reason
    last = of_type(workspace, "verification")[-1]
    assert last["unfixed"] == ["tests/test_calc.py::test_sub"]
    repair_prompt = last_prompt(scripted_model, 3)
    assert "failed before the change and still fail" in repair_prompt
    note = result.verification
    assert note is not None and note.unfinished
    assert any("❌ Tests of the changed code" in line for line in note.details())


def test_a_failing_test_of_code_the_change_never_touched_does_not_hold_it(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = calc_repo(tmp_path / "repo")
    (workspace / "clock.py").write_text("def hour():\n    return 11\n", encoding="utf-8")
    (workspace / "tests" / "test_clock.py").write_text(CLOCK_TESTS, encoding="utf-8")
    commit_all(workspace, "clock")
    scripted_model.add(planning("task_1"), write("calc.py", GOOD), finish(), completion())
    _, runs = completed_with_runs(workspace, scripted_model)

    last = runs[-1]
    assert last["failing"] == ["tests/test_clock.py::test_hour"] and last["unfixed"] == []
