"""Another attempt from the start when the fix is not proven (issue 46, verification.attempts):
the working tree goes back to the code before the change, the model starts afresh (a new
conversation, another sampling seed, what failed as a hint), and the first attempt whose tests
pass — the issue's test included — wins; the result says which, and what the others failed on.

A real git repository with a real pytest suite; the model is the scripted stand-in over HTTP
(its requests show what each attempt was sent); the pull request is the fake GitHub's.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from planner.ci.forges.base import TRACKING_MARKER
from planner.ci.report.tracking import NOTHING_PROVES, UNPROVEN_WARNING
from planner.model.sampling import WARM_SEEDS
from planner.outcome.evidence import VerificationNote
from planner.outcome.result import PassResult
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import Step, reply_text
from planner.verification.fixes.attempts import Start, reset, snapshot
from tests.fake_forge import FakeGitHub
from tests.fake_forge.rig import Rig
from tests.fake_forge.scenario import labeled_event
from tests.plans import completion, finish, planning, write
from tests.support.issue_test_replies import block, issue_test_then_fixes
from tests.test_issue_test import (
    FIXED,
    ISSUE_TEST_REPLY,
    ONE_UNIT,
    TEST_PATH,
    WRONG_FIX,
    durations_repo,
    issue_test_entries,
    run,
)
from tests.test_verification_ci import SETTINGS, push_calc_project
from tests.test_verification_pass import BUGGY, GOOD, of_type

ATTEMPTS = {"verification.attempts": 2}
OTHER_WRONG_FIX = WRONG_FIX.replace("Invalid", "Bad")


def out_of_calls(
    workspace: Path, server: ScriptedModelServer, test_reply: str, *fixes: str
) -> PassResult:
    """Three attempts allowed, four model calls per pass: the pass whose model answers
    `test_reply` and then writes each of `fixes` to durations.py stops at the budget."""
    server.add(*issue_test_then_fixes(test_reply, "durations.py", *fixes))
    result = run(workspace, server, **{"verification.attempts": 3, "budget.max_model_calls": 4})
    assert result.status == "in_progress" and "4 model calls" in result.stop_reason
    return result


def helper_call(path: str) -> str:
    """A tool call written as text, as the 1.5B writes them: a new file."""
    return json.dumps({"tool": "write_file", "arguments": {"path": path, "content": "X = 1\n"}})


def test_the_first_attempt_fails_the_issues_test_and_the_second_from_the_start_passes(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = durations_repo(tmp_path / "repo")
    scripted_model.add(
        reply_text("issue_test", ISSUE_TEST_REPLY),
        reply_text("legacy", helper_call("helpers.py")),  # attempt 1: a new file ...
        reply_text("legacy", block("durations.py", WRONG_FIX)),  # ... and the wrong fix
        reply_text("legacy", block("durations.py", WRONG_FIX)),  # it stands by it
        reply_text("legacy", block("durations.py", FIXED)),  # attempt 2
    )
    result = run(workspace, scripted_model, **ATTEMPTS)

    assert result.status == "completed", result.stop_reason
    failed, won = of_type(workspace, "verification_attempt")
    assert (failed["attempt"], failed["status"]) == (1, "failed")
    # the model's test, and the issue's `raises ValueError instead of returning 5400` checked
    # as reported and as stated (stated_calls)
    assert failed["failing"] == [
        f"{TEST_PATH}::test_combined_units",
        f"{TEST_PATH}::test_issue_reported_1",
        f"{TEST_PATH}::test_issue_states_1",
    ]
    assert sorted(failed["files"]) == ["durations.py", "helpers.py"]
    assert (won["attempt"], won["status"]) == (2, "won")
    # the second attempt starts from the code before the change, in a conversation of its own
    assert not (workspace / "helpers.py").exists()
    second = scripted_model.requests[4].body
    assert len(second["messages"]) == 2  # the system prompt and the request: nothing else
    request = str(second["messages"][-1]["content"])
    assert (
        ONE_UNIT.splitlines()[-1] in request
        and "Invalid duration format" not in request.split("## Earlier attempts")[0]
    )
    assert "## Earlier attempts at this issue failed" in request
    assert f"- {TEST_PATH}::test_combined_units" in request
    assert '+        raise ValueError("Invalid duration format")' in request  # what not to repeat
    # it samples another way
    # (warm too: the reply before it repeated one, so a seed of the second attempt's warm calls)
    assert second["seed"] == 2 * WARM_SEEDS
    assert "seed" not in scripted_model.requests[1].body
    # the issue's test judged it too, and went into the change
    assert (workspace / "durations.py").read_text(encoding="utf-8") == FIXED
    assert issue_test_entries(workspace)[-1]["status"] == "kept"
    note = result.verification
    assert note is not None and not note.unfinished
    assert (
        "Attempt 2 passed the tests and is this change. Earlier attempts were undone: attempt 1 "
        f"failed `{TEST_PATH}::test_combined_units`, `{TEST_PATH}::test_issue_reported_1`, "
        f"`{TEST_PATH}::test_issue_states_1`."
    ) in note.details()


def test_when_every_attempt_fails_the_pass_ends_needs_human_and_says_so(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = durations_repo(tmp_path / "repo")
    scripted_model.add(
        *issue_test_then_fixes(
            ISSUE_TEST_REPLY, "durations.py", WRONG_FIX, WRONG_FIX, OTHER_WRONG_FIX, OTHER_WRONG_FIX
        )
    )
    result = run(workspace, scripted_model, **ATTEMPTS)

    assert result.status == "needs_human"
    assert "the fix is unproven" in result.stop_reason
    assert [e["status"] for e in of_type(workspace, "verification_attempt")] == ["failed"]
    note = result.verification
    assert note is not None and note.issue_failures
    assert any(line.startswith("This change is attempt 2;") for line in note.details())


def test_attempts_share_the_pass_budget(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """Three attempts allowed, four model calls per pass: the second attempt stops at the
    budget like any work, and no third one starts."""
    workspace = durations_repo(tmp_path / "repo")
    wrong = [WRONG_FIX, WRONG_FIX, OTHER_WRONG_FIX]
    out_of_calls(workspace, scripted_model, ISSUE_TEST_REPLY, *wrong)

    assert len(of_type(workspace, "verification_attempt")) == 1


def test_a_reset_gives_back_work_in_progress_and_never_writes_through_a_link(
    tmp_path: Path,
) -> None:
    """A local run on a checkout with uncommitted work: the reset puts the tree back to where
    the baseline found it, that work included; a link the change put in a file's place is
    removed, not written through."""
    workspace = durations_repo(tmp_path / "repo")
    (workspace / "notes.txt").write_text("mine, not committed\n", encoding="utf-8")
    (workspace / "README.md").write_text("# edited locally\n", encoding="utf-8")
    head = subprocess.check_output(["git", "rev-parse", "HEAD"], cwd=workspace, text=True)
    start = Start(head.strip(), {}, ("planning_history/",))
    start = Start(start.base, snapshot(workspace, start), start.excluded)
    # the attempt: changes a file, adds one, deletes the local note, links one to a secret
    (workspace / "durations.py").write_text(WRONG_FIX, encoding="utf-8")
    (workspace / "helpers.py").write_text("X = 1\n", encoding="utf-8")
    (workspace / "notes.txt").unlink()
    secret = tmp_path / "secret.txt"
    secret.write_text("outside\n", encoding="utf-8")
    (workspace / "README.md").unlink()
    (workspace / "README.md").symlink_to(secret)
    (workspace / "planning_history").mkdir()
    (workspace / "planning_history" / "log.jsonl").write_text("{}\n", encoding="utf-8")

    restored = reset(workspace, start)

    assert sorted(restored) == ["README.md", "durations.py", "helpers.py", "notes.txt"]
    assert (workspace / "durations.py").read_text(encoding="utf-8") == ONE_UNIT
    assert not (workspace / "helpers.py").exists()
    assert (workspace / "notes.txt").read_text(encoding="utf-8") == "mine, not committed\n"
    readme = workspace / "README.md"
    assert not readme.is_symlink() and readme.read_text(encoding="utf-8") == "# edited locally\n"
    assert secret.read_text(encoding="utf-8") == "outside\n"
    assert (workspace / "planning_history" / "log.jsonl").exists()  # planner's own


# -- what people see: the pull request ----------------------------------------------------------

SUB_ISSUE = "`calc.sub(3, 5)` returns 8; it should return -2."
SUB_TEST_REPLY = (
    "```python\nfrom calc import sub\n\n\ndef test_sub_negative():\n    assert sub(3, 5) == -2\n```"
)
ABS_SUB = BUGGY.replace("return a + b\n", "return abs(a - b)\n").replace(
    "def add(a, b):\n    return abs(a - b)", "def add(a, b):\n    return a + b"
)


def sub_rig(fake: FakeGitHub, tmp_path: Path, body: str = SUB_ISSUE) -> Rig:
    fake.add_issue(1, "sub adds", body, labels=["planner"])
    fake.permissions["Codertocat"] = "write"
    push_calc_project(fake)
    return Rig("github", fake, tmp_path)


def settings(**overrides: Any) -> dict[str, Any]:
    return {
        **SETTINGS,
        "verification.issue_test": True,
        "verification.max_repair_attempts": 0,
        **overrides,
    }


def fix_proved_by(issue_test: str, calc: str) -> list[Step]:
    """Plan one task, write the issue's test (`issue_test`: the model's reply), then calc.py."""
    return [
        planning("task_1"),
        reply_text("issue_test", issue_test),
        write("calc.py", calc),
        finish(),
    ]


def test_a_wrong_fix_that_passes_the_old_tests_ends_needs_human_with_a_draft(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    """`abs(a - b)` passes test_add and test_sub (5 - 3): the repository's tests cannot tell
    it from the fix. The issue's test can; the pull request is a draft that says so."""
    assert "abs(a - b)" in ABS_SUB and "return a + b" in ABS_SUB
    rig = sub_rig(fake_github, tmp_path)
    script = fix_proved_by(SUB_TEST_REPLY, ABS_SUB)
    outcome = rig.run(labeled_event(), script, event_name="issues", **settings())

    assert outcome.status == "needs_human"
    assert "the fix is unproven" in outcome.reason
    [pull] = fake_github.pulls.values()
    assert pull.draft and pull.title.startswith("[tests failing] ")
    assert UNPROVEN_WARNING in pull.body
    assert "test_planner_issue_1.py::test_sub_negative" in pull.body
    assert "it is not part of the pull request" in pull.body


def test_the_pull_request_names_the_attempt_that_won(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    rig = sub_rig(fake_github, tmp_path)
    script = [
        *fix_proved_by(SUB_TEST_REPLY, ABS_SUB),
        planning("task_1"),  # attempt 2 plans afresh
        write("calc.py", GOOD),
        finish(),
        completion(),
    ]
    outcome = rig.run(labeled_event(), script, event_name="issues", **settings(**ATTEMPTS))

    assert outcome.status == "completed", outcome.reason
    [pull] = fake_github.pulls.values()
    assert not pull.title.startswith("[tests failing]")
    assert "Attempt 2 passed the tests and is this change." in pull.body
    assert "attempt 1 failed `tests/test_planner_issue_1.py::test_sub_negative`" in pull.body
    assert "✅ The issue's test (`tests/test_planner_issue_1.py`" in pull.body
    [tracking] = [c for c in fake_github.comments_on(1) if TRACKING_MARKER in c.body]
    assert "Attempt 2 passed the tests and is this change." in tracking.body
    replanned = json.loads(rig.prompts[4])["messages"][-1]["content"]  # the second plan
    assert "## Earlier attempts at this issue failed" in replanned


def test_a_damaged_attempt_entry_is_skipped() -> None:
    entries = [
        {"type": "verification_attempt", "attempt": "x", "status": "failed"},
        {"type": "verification_attempt", "attempt": 1, "status": "failed", "failing": ["t::a"]},
    ]
    from planner.outcome.evidence import attempt_notes

    notes = attempt_notes(entries)
    assert [(n.attempt, n.failing) for n in notes] == [(1, ["t::a"])]
    assert VerificationNote(attempts=notes)._attempt_lines() == [
        "This change is attempt 2; its tests do not all pass. Earlier attempts were undone: "
        "attempt 1 failed `t::a`."
    ]


WRONG_WAY_ROUND = (  # fahrenheit_formula: the 1.5B's own test held the issue's values reversed
    "```python\nfrom durations import parse_duration\n\n\n"
    'def test_units() -> None:\n    assert parse_duration("45s") == 5400\n```'
)
DOUBLED = ONE_UNIT.replace("* UNITS[text[-1]]", "* UNITS[text[-1]] * 2")


def test_a_budget_that_ends_a_later_attempt_leaves_the_closest_attempt(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """stack_peek on 2 shared cores: the first attempt's fix was right, but the model's own
    test of the issue was wrong, so it was undone; the time ran out in the second attempt and
    the branch held that half-made one. The closest attempt is what the pass leaves."""
    workspace = durations_repo(tmp_path / "repo")
    # the right fix (its test is not), which it stands by; attempt 2 breaks a test
    result = out_of_calls(workspace, scripted_model, WRONG_WAY_ROUND, FIXED, FIXED, DOUBLED)

    assert (workspace / "durations.py").read_text(encoding="utf-8") == FIXED
    attempts = of_type(workspace, "verification_attempt")
    assert [(e["attempt"], e["status"]) for e in attempts] == [
        (1, "failed"),
        (2, "failed"),
        (1, "restored"),
    ]
    assert attempts[1]["new_failures"] == ["tests/test_durations.py::test_single_unit"]
    note = result.verification
    assert note is not None and not note.regressed  # attempt 1's own runs again
    assert note.issue_failures == [f"{TEST_PATH}::test_units"]
    assert any(
        line.startswith("No attempt passed its tests; this change is attempt 1")
        for line in note.details()
    )


def test_tests_that_pass_without_a_test_of_the_issue_leave_a_draft_that_says_so(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    """env_port: the 1.5B's test of the issue held a value the issue does not state and was
    dropped; the repository's tests passed a wrong change, and the pass said `completed`."""
    # no call with its result in the issue's text: only the model's test could test it
    body = "`calc.sub` adds its arguments instead of subtracting them: 3 and 5 give 8, not -2."
    rig = sub_rig(fake_github, tmp_path, body)
    holds_the_bug = SUB_TEST_REPLY.replace("== -2", "== 8")  # passes before the change
    script = fix_proved_by(holds_the_bug, GOOD)
    outcome = rig.run(labeled_event(), script, event_name="issues", **settings())

    assert outcome.status == "needs_human"
    assert outcome.reason.startswith("the fix is unproven: no test of the issue passed")
    [pull] = fake_github.pulls.values()
    assert pull.draft and pull.title.startswith("[unproven] ")
    assert NOTHING_PROVES in pull.body and "it passes on the code before the change" in pull.body


def test_an_attempt_that_changes_nothing_after_a_failed_one_is_not_the_winner() -> None:
    """toolz, 1.5B: attempts 1 and 2 failed the issue's example; in attempt 3 the model wrote
    nothing, and with only the baseline left among the current runs, the unchanged code was
    recorded as attempt 3 "won". The issue's test failing on the code before the change still
    holds after a reset."""
    from planner.outcome.evidence import verification_note

    def run_entry(stage: str, failing: list[str], **extra: Any) -> dict[str, Any]:
        return {
            "type": "verification", "stage": stage, "command": "python3 -m pytest -q",
            "status": "failed" if failing else "passed", "exit_code": 1 if failing else 0,
            "passed": 40, "failed": len(failing), "failing": failing, "tail": "", **extra,
        }  # fmt: skip

    issue = "test_planner_issue_1.py::test_issue_example_1"
    entries = [
        run_entry("baseline", []),
        run_entry("issue", [issue], issue_test="test_planner_issue_1.py", added=[issue]),
        run_entry("task", [issue], issue_test="test_planner_issue_1.py", added=[issue]),
        {"type": "verification_attempt", "attempt": 1, "status": "failed", "failing": [issue]},
    ]
    note = verification_note(entries)
    assert note is not None and note.issue_failures == [issue] and note.unfinished
