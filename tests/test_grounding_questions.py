"""Real questions only, and invented tools refused precisely (issue 16).

The degenerate replies come from tests/fixtures/local_models/: what small local models answered
to the planning prompt. Each is a model failure: re-asked once with the instruction to plan on
stated assumptions, never posted to people; a second one fails the pass.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from planner.ci.forges.base import TRACKING_MARKER
from planner.outcome.result import PassResult
from planner.testing.steps import reply_json
from tests.fake_forge import FakeGitHub
from tests.fake_forge.rig import Rig, github_rig
from tests.fake_forge.scenario import labeled_event
from tests.harness import Harness
from tests.plans import completed, finish, plan_doc, planned, review_ok, write

FIXTURES = json.loads(
    (
        Path(__file__).parent / "fixtures/local_model_shapes/degenerate_planning_replies.json"
    ).read_text()
)
DEGENERATE = {item["name"]: item["reply"] for item in FIXTURES["degenerate_clarifications"]}
INVENTED = [item["tool"] for item in FIXTURES["invented_tools"]]
PLAN_ON_ASSUMPTIONS = "Do not ask. Plan the work now, proceeding on stated assumptions"


def asked_again(harness: Harness) -> str:
    return harness.prompt(1)


def pass_planned_with(harness: Harness, tool: str, **overrides: Any) -> PassResult:
    """A pass whose plan names `tool` for task_1's one action; the task writes a.txt."""
    harness.server.add(
        reply_json("planning", plan_doc("task_1", tool=tool)),
        review_ok(),
        write("a.txt"),
        finish(),
        *completed(),
    )
    return harness.run(**overrides)


@pytest.mark.parametrize("shape", sorted(DEGENERATE))
def test_a_degenerate_clarification_is_reasked_and_the_pass_executes(
    harness: Harness, shape: str
) -> None:
    harness.server.add(
        reply_json("planning", DEGENERATE[shape]),
        *planned("task_1"),
        write("a.txt"),
        finish(),
        *completed(),
    )
    result = harness.run()
    assert result.status == "completed", result.stop_reason
    assert PLAN_ON_ASSUMPTIONS in asked_again(harness)
    assert (harness.workspace / "a.txt").exists()
    assert "clarification" not in harness.types() and result.notifications == []


@pytest.mark.parametrize("shape", sorted(DEGENERATE))
def test_twice_degenerate_fails_without_asking_anyone(harness: Harness, shape: str) -> None:
    harness.server.add(
        reply_json("planning", DEGENERATE[shape]), reply_json("planning", DEGENERATE[shape])
    )
    result = harness.run()
    assert result.status == "failed" and result.questions == []
    assert result.notifications == [] and "clarification" not in harness.types()
    [error] = harness.of_type("error")
    assert "not a question for the people on the issue" in error["message"]
    said = " ".join([result.stop_reason, *result.messages])
    for echoed in ("What would you like", "Your previous planning reply", "there is no specific"):
        assert echoed not in said  # the model's text never becomes planner's message


def test_only_the_real_questions_reach_people(harness: Harness) -> None:
    ask = {
        "phase": "planning",
        "error": {
            "message": "Reply again with a single JSON object that fixes this, and nothing else.",
            "clarification_needed": ["question", "Should the files be written under docs/?"],
            "assumptions": ["the repository root"],
        },
        "comment": "...",
    }
    harness.server.add(reply_json("planning", ask))
    result = harness.run()
    assert result.status == "needs_human"
    assert result.questions == ["Should the files be written under docs/?"]
    [clarification] = harness.of_type("clarification")
    assert "Reply again" not in clarification["error"]["message"]
    [notice] = result.notifications
    assert "Should the files be written under docs/?" in notice.body
    assert "- question" not in notice.body and "Reply again" not in notice.body


@pytest.mark.parametrize("tool", INVENTED)
def test_an_invented_command_tool_is_dropped_from_the_plan_with_a_note(
    harness: Harness, tool: str
) -> None:
    """A plan naming a test runner as a tool is repaired, not re-asked into failure (the 1.5B
    named `pytest` twice and the pass failed at planning with 0 actions)."""
    result = pass_planned_with(harness, tool)
    assert result.status == "completed", result.stop_reason
    assert harness.kinds()[:2] == ["planning", "replan_review"]  # no re-ask
    [repaired] = harness.of_type("plan_repaired")
    assert repaired["repairs"] == [
        f"task 'task_1': tool '{tool}' does not exist; the action keeps no tool"
    ]
    [action] = harness.of_type("plan")[0]["plan"]["action_plan"]["actions"]
    assert (
        action["tool"] is None
        and f"planned with '{tool}', which is not a tool" in (action["purpose"])
    )


def test_with_commands_allowed_run_tests_becomes_run_command(harness: Harness) -> None:
    pass_planned_with(harness, "run_tests", **{"tools.allowed_commands": ["python -m pytest"]})
    [repaired] = harness.of_type("plan_repaired")
    assert repaired["repairs"] == [
        "task 'task_1': tool 'run_tests' does not exist; 'run_command' is used"
    ]
    assert "No command can be run" not in harness.prompt(0)


def test_without_run_command_the_plan_is_told_up_front_that_tests_run_in_ci(
    harness: Harness,
) -> None:
    harness.server.add(*planned("task_1"), write("a.txt"), finish(), *completed())
    harness.run()
    assert "No command can be run (no run_tests, no pytest)" in harness.prompt(0)


def test_a_misspelt_tool_is_mapped_to_the_nearest_real_one(harness: Harness) -> None:
    assert pass_planned_with(harness, "write_files").status == "completed"
    [plan] = harness.of_type("plan")
    assert plan["plan"]["action_plan"]["actions"][0]["tool"] == "write_file"
    [repaired] = harness.of_type("plan_repaired")
    assert repaired["repairs"] == [
        "task 'task_1': tool 'write_files' does not exist; 'write_file' is used"
    ]


def test_a_tool_spelt_differently_is_mapped_without_asking(harness: Harness) -> None:
    result = pass_planned_with(harness, "functions.Write-File")
    assert result.status == "completed"
    [plan] = harness.of_type("plan")
    assert plan["plan"]["action_plan"]["actions"][0]["tool"] == "write_file"


# -- on the issue: a degenerate question is never posted ---------------------------------------


@pytest.fixture
def rig(fake_github: FakeGitHub, tmp_path: Path) -> Rig:
    return github_rig(fake_github, tmp_path, "Implement add()", "Implement add in calc.py.")


def comments(rig: Rig) -> list[Any]:
    assert isinstance(rig.fake, FakeGitHub)
    return rig.fake.comments_on(1)


def test_on_the_issue_degenerate_questions_are_never_posted(rig: Rig) -> None:
    generic = DEGENERATE["generic_question"]
    outcome = rig.run(
        labeled_event(),
        [
            reply_json("planning", generic),
            reply_json("planning", DEGENERATE["schema_placeholders"]),
        ],
        event_name="issues",
    )
    assert outcome.status == "failed"
    posted = comments(rig)
    assert [c for c in posted if TRACKING_MARKER not in c.body] == []  # no question comment
    text = "\n".join(c.body for c in posted)
    assert "What would you like to do with this plan?" not in text
    assert "what you would otherwise assume" not in text
    assert isinstance(rig.fake, FakeGitHub)
    assert "planner:needs-input" not in rig.fake.issues[1].labels


def test_on_the_issue_a_degenerate_question_then_a_plan_does_the_work(rig: Rig) -> None:
    outcome = rig.run(
        labeled_event(),
        [
            reply_json("planning", DEGENERATE["no_questions"]),
            *planned("task_1"),
            write("calc.py", "def add(a, b):\n    return a + b\n"),
            finish(),
            *completed(),
        ],
        event_name="issues",
    )
    assert outcome.status == "completed"
    assert "there is no specific task" not in "\n".join(c.body for c in comments(rig))
