"""The approval gate end to end on the fake GitHub: real HTTP, a real bare repo, the scripted
model, run_for_event as a CI job runs it. Only approved specs reach the branch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fake_forge import FakeGitHub
from tests.fake_forge.rig import Rig, github_rig
from tests.fake_forge.scenario import comment_event, file_on, labeled_event, one_file_plan, tracking
from tests.plans import execution_decision

README = "# hello\n\nRun the tests with `python -m unittest`.\n"
NEW_README = "# hello\n\nRun the tests with `python -m pytest -q`.\n"
HIGH = {"approval.large_file_bytes": 20}  # README.md (52 bytes) is then a large file


@pytest.fixture
def rig(fake_github: FakeGitHub, tmp_path: Path) -> Rig:
    return github_rig(fake_github, tmp_path, "Document pytest", "Say how to run the tests.")


def comment(fake: FakeGitHub, body: str) -> dict[str, Any]:
    made = fake.comment_json(fake.add_comment(1, body))
    return comment_event(body, made, 1)


def test_a_high_risk_overwrite_waits_and_exactly_the_previewed_content_lands(rig: Rig) -> None:
    fake = rig.fake
    assert isinstance(fake, FakeGitHub)
    steps = one_file_plan("README.md", NEW_README, "Document pytest")
    first = rig.run(labeled_event(), steps[:3], event_name="issues", **HIGH)
    assert first.status == "needs_human" and first.commit == ""
    body = tracking(fake)
    assert "Approval needed" in body and "| a1 | write | `README.md` |" in body
    assert "+Run the tests with `python -m pytest -q`." in body
    assert fake.issues[1].labels == ["planner", "planner:needs-input"]
    assert not fake.branch_exists("planner/issue-1")

    second = rig.run(
        comment(fake, "/planner approve a1"), steps[3:], event_name="issue_comment", **HIGH
    )
    assert second.status == "completed"
    assert file_on(fake.bare, "planner/issue-1", "README.md") == NEW_README.rstrip("\n")
    assert "Codertocat approved a1." in tracking(fake)
    # the approval was an answer for PlanTool, not an instruction the model saw
    assert not any("approve a1" in prompt for prompt in rig.prompts[3:])


def test_a_rejected_spec_reaches_the_model_as_a_failed_action_with_the_reason(rig: Rig) -> None:
    fake = rig.fake
    assert isinstance(fake, FakeGitHub)
    steps = one_file_plan("README.md", NEW_README, "Document pytest")
    rig.run(labeled_event(), steps[:3], event_name="issues", **HIGH)
    claimed, *rest = one_file_plan("README.md", NEW_README, "Document pytest")[3:]
    # The model claims the task done although nothing was written, is told so, claims it
    # again: the task is not ticked (it changed nothing) and the execution decision is asked.
    outcome = rig.run(
        comment(fake, "/planner reject a1 keep the unittest line, add pytest below it"),
        [claimed, claimed, execution_decision(), *rest],
        event_name="issue_comment",
        **HIGH,
    )
    assert outcome.status == "completed"
    task_prompt = rig.prompts[3]
    assert "a person rejected a1" in task_prompt and "keep the unittest line" in task_prompt
    assert not fake.branch_exists("planner/issue-1")  # nothing was written


def test_a_file_changed_after_approval_is_asked_about_again(rig: Rig) -> None:
    fake = rig.fake
    assert isinstance(fake, FakeGitHub)
    steps = one_file_plan("README.md", NEW_README, "Document pytest")
    rig.run(labeled_event(), steps[:3], event_name="issues", **HIGH)
    fake.push_branch("main", "README.md", "# hello\n\nA person rewrote this meanwhile.\n")
    again = rig.run(comment(fake, "/planner approve a1"), [], event_name="issue_comment", **HIGH)
    assert again.status == "needs_human"
    body = tracking(fake)
    assert "Approval needed" in body and "-A person rewrote this meanwhile." in body
    assert not fake.branch_exists("planner/issue-1")
    done = rig.run(
        comment(fake, "/planner approve all"), steps[3:], event_name="issue_comment", **HIGH
    )
    assert done.status == "completed"
    assert file_on(fake.bare, "planner/issue-1", "README.md") == NEW_README.rstrip("\n")


def test_plan_mode_asks_for_the_whole_change_set_before_anything_runs(rig: Rig) -> None:
    fake = rig.fake
    assert isinstance(fake, FakeGitHub)
    steps = one_file_plan("CONTRIBUTING.md", "Run pytest.\n", "Write a guide")
    mode = {"approval.mode": "plan"}
    first = rig.run(labeled_event(), steps[:4], event_name="issues", **mode)
    assert first.status == "needs_human"
    assert "| a1 | create | `CONTRIBUTING.md` |" in tracking(fake)
    assert not fake.branch_exists("planner/issue-1")
    done = rig.run(
        comment(fake, "/planner approve all"), steps[4:], event_name="issue_comment", **mode
    )
    assert done.status == "completed"
    assert file_on(fake.bare, "planner/issue-1", "CONTRIBUTING.md") == "Run pytest."


def test_low_risk_writes_run_without_a_person_by_default(rig: Rig) -> None:
    steps = one_file_plan("CONTRIBUTING.md", "Run pytest.\n", "Write a guide")
    outcome = rig.run(labeled_event(), steps, event_name="issues")
    assert outcome.status == "completed"
    fake = rig.fake
    assert isinstance(fake, FakeGitHub)
    assert file_on(fake.bare, "planner/issue-1", "CONTRIBUTING.md") == "Run pytest."
    plans = sorted((rig.history / "plans").glob("plan-*/plan.json"))
    assert len(plans) == 1 and '"status": "completed"' in plans[0].read_text()


def test_a_replan_reason_that_reads_like_an_approval_approves_nothing(rig: Rig) -> None:
    """`/planner replan approve all` asks for a replan; the words after it are its reason."""
    fake = rig.fake
    assert isinstance(fake, FakeGitHub)
    steps = one_file_plan("README.md", NEW_README, "Document pytest")
    rig.run(labeled_event(), steps[:3], event_name="issues", **HIGH)
    claimed, *rest = steps[3:]  # nothing was written: told once, then the task is not ticked
    outcome = rig.run(
        comment(fake, "/planner replan approve all"),
        [claimed, claimed, execution_decision(), *rest],
        event_name="issue_comment",
        **HIGH,
    )
    assert outcome.status == "completed"
    assert "Replan requested: approve all" in rig.prompts[3]
    assert "a person rejected a1" in rig.prompts[3]
    assert not fake.branch_exists("planner/issue-1")  # README.md was never overwritten
