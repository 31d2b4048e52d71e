"""Refinement as people see it on a GitHub issue (fake forge, real git, scripted model)."""

from __future__ import annotations

from planner.testing.steps import Step
from tests.fake_forge.rig import Rig, github, github_rig_fixture
from tests.fake_forge.scenario import comment_event, file_on, labeled_event, tracking
from tests.plans import (
    REFINEMENT_ON,
    evaluation_ok,
    finish,
    follow_up,
    judge_plan,
    judge_result,
    planned,
    refined,
    subtask,
    write,
)
from tests.plans import completion as completion_reply

README = "# hello\n\nRun the tests with `python -m unittest`.\n"
"""The README every fake forge's repository starts with (tests.fake_forge.core)."""

QUESTION = "<!-- planner:question -->"


rig = github_rig_fixture("Add a contributing guide", "Please document it.")


def completed_with_refinement(rig: Rig, *script: Step) -> str:
    """The job of the labelled issue with refinement on: it completes; its tracking comment."""
    outcome = rig.run(labeled_event(), script, event_name="issues", **REFINEMENT_ON)
    assert outcome.status == "completed"
    return tracking(github(rig))


def test_a_low_scored_plan_is_refined_and_the_issue_shows_the_score(rig: Rig) -> None:
    fake = github(rig)
    body = completed_with_refinement(
        rig,
        *planned("task_1"),
        judge_plan(45, False, "the guide needs a section on tests"),
        refined("task_1", "task_2"),
        judge_plan(82, True),
        write("CONTRIBUTING.md", "# Contributing\n"),
        finish(),
        write("TESTING.md", "# Tests\n"),
        finish(),
        evaluation_ok(),
        judge_result(91, True, suggestions=("link the guide from the README",)),
        completion_reply(completed=2),
    )

    assert "*Quality 82/100 after 1 of 2 refinement attempts*" in body
    assert "*Result quality 91/100, first judgement*" in body
    assert "**Revision Reason**: quality review 45/100: the guide needs a section on tests" in body
    [pull] = fake.pulls.values()
    assert "### Final quality judgement" in pull.body
    assert "Result quality 91/100, first judgement · acceptable" in pull.body
    assert "Suggestions (not acted on):\n- link the guide from the README" in pull.body
    assert fake.issues[1].labels == ["planner", "planner:done"]


def test_a_rejected_plan_asks_people_and_their_guidance_gets_it_accepted(rig: Rig) -> None:
    fake = github(rig)
    one = {**REFINEMENT_ON, "planning.refinement.max_refinement_attempts": 1}
    first = rig.run(
        labeled_event(),
        [
            *planned("task_1"),
            judge_plan(30, False, "it does not say who the guide is for"),
            refined("task_1", tool="read_file"),
            judge_plan(33, False, "still no audience"),
        ],
        event_name="issues",
        **one,
    )
    assert first.status == "needs_human" and first.commit == ""  # nothing ran
    assert "planner:needs-input" in fake.issues[1].labels
    body = tracking(fake)
    assert "**Why:** the quality judge rejected the plan (33/100 after 1 of 1 refinement" in body
    assert "> Quality issue: still no audience" in body
    [asked] = [c for c in fake.comments_on(1) if QUESTION in c.body]
    assert "- Quality issue: still no audience" in asked.body
    assert fake.pulls == {}

    guidance = "The guide is for first-time contributors."
    reply = fake.comment_json(fake.add_comment(1, guidance))
    event = comment_event(guidance, reply)
    event["issue"]["labels"] = [{"name": name} for name in fake.issues[1].labels]
    second = rig.run(
        event,
        [
            refined("task_1", "task_2"),
            judge_plan(86, True),
            write("CONTRIBUTING.md", "# For first-time contributors\n"),
            finish(),
            write("docs/first.md", "# First steps\n"),
            finish(),
            evaluation_ok(),
            judge_result(90, True),
            completion_reply(completed=2),
        ],
        event_name="issue_comment",
        **one,
    )
    assert second.status == "completed"
    guided = [p for p in rig.prompts if '"refinement_replan"' in p][-1]
    assert guidance in guided and "still no audience" in guided
    assert "*Quality 86/100, first judgement*" in tracking(fake)
    assert fake.issues[1].labels == ["planner", "planner:done"]
    assert file_on(fake.bare, "planner/issue-1", "CONTRIBUTING.md").startswith("# For first")


def test_a_final_judgement_adds_a_task_before_the_work_is_done(rig: Rig) -> None:
    fake = github(rig)
    body = completed_with_refinement(
        rig,
        *planned("task_1"),
        judge_plan(80, True),
        write("CONTRIBUTING.md", "# Contributing\n"),
        finish(),
        evaluation_ok(),
        judge_result(50, False, "the README does not point to the guide"),
        follow_up({**subtask("task_2", "task_1"), "description": "Link the guide from README"}),
        write("README.md", f"{README}\nSee CONTRIBUTING.md.\n"),
        finish(),
        evaluation_ok(),
        judge_result(88, True),
        completion_reply(completed=2),
    )

    assert "- [x] **task_2**: Link the guide from README" in body
    assert "*Result quality 88/100 after 1 of 2 refinement attempts*" in body
    assert "final quality review 50/100: the README does not point to the guide" in body
    judge_prompts = [p for p in rig.prompts if '"refinement_judge_result"' in p]
    assert "+# Contributing" in judge_prompts[0]  # the branch's diff, untracked file included
    assert "See CONTRIBUTING.md." in judge_prompts[1]  # the second judgement sees the fix
    assert file_on(fake.bare, "planner/issue-1", "README.md").endswith("See CONTRIBUTING.md.")
