"""Replanning as people see it on a GitHub issue (fake forge, real git, scripted model)."""

from __future__ import annotations

from planner.ci.forges.base import TRACKING_MARKER
from planner.testing.steps import reply_json
from tests.fake_forge.rig import Rig, github, github_rig_fixture
from tests.fake_forge.scenario import comment_event, labeled_event
from tests.plans import (
    completed,
    finish,
    partial_replan_steps,
    planned,
    write,
)

NOTIFICATION = "<!-- planner:notification -->"


rig = github_rig_fixture("Add a contributing guide", "Please document it.")


def test_failed_action_partial_replan_shows_on_the_issue(rig: Rig) -> None:
    fake = github(rig)
    outcome = rig.run(labeled_event(), partial_replan_steps(), event_name="issues")
    assert outcome.status == "completed"
    comments = fake.comments_on(1)
    [tracking] = [c for c in comments if TRACKING_MARKER in c.body]
    assert "## 📋 Execution Plan (Revised #1)" in tracking.body
    assert "- [x] **task_1**: Do task_1" in tracking.body  # the tick survived the revision
    assert "- [x] **task_2b**: Do task_2b" in tracking.body
    assert "<summary>📜 Previous Plan History</summary>" in tracking.body
    assert "*Progress: 2/2 (100%) complete*" in tracking.body
    [revision] = [c for c in comments if NOTIFICATION in c.body]
    assert "## 🔄 Plan Revision Decided by AI" in revision.body
    assert "**Confidence**: 90%" in revision.body
    assert "write docs/b.txt instead" in revision.body
    assert "@" not in revision.body  # a revision informs; it does not summon anyone
    assert fake.issues[1].labels == ["planner", "planner:done"]
    [pull] = fake.pulls.values()
    assert "(Revised #1)" in pull.body and "Closes #1" in pull.body


def test_a_plain_reply_answers_the_clarification_and_the_run_resumes(rig: Rig) -> None:
    fake = github(rig)
    ask = {
        "phase": "planning",
        "comment": "Who is the guide for?",
        "error": {
            "type": "unclear_goal",
            "message": "the audience is unclear",
            "clarification_needed": ["Is the guide for maintainers or first-timers?"],
            "assumptions": ["first-timers"],
        },
    }
    first = rig.run(labeled_event(), [reply_json("planning", ask)], event_name="issues")
    assert first.status == "needs_human"
    assert "planner:needs-input" in fake.issues[1].labels

    reply = fake.comment_json(fake.add_comment(1, "For first-timers, please."))
    event = comment_event("For first-timers, please.", reply)
    event["issue"]["labels"] = [{"name": name} for name in fake.issues[1].labels]
    second = rig.run(
        event,
        [*planned("task_1"), write("CONTRIBUTING.md"), finish(), *completed()],
        event_name="issue_comment",
    )
    assert second.status == "completed"
    assert any("For first-timers, please." in prompt for prompt in rig.prompts[1:])
    assert fake.issues[1].labels == ["planner", "planner:done"]


def test_a_plain_comment_on_an_issue_that_waits_for_nothing_is_skipped(rig: Rig) -> None:
    fake = github(rig)
    made = fake.comment_json(fake.add_comment(1, "Nice idea!"))
    outcome = rig.run(comment_event("Nice idea!", made), [], event_name="issue_comment")
    assert outcome.status == "skipped" and "does not contain '/planner'" in outcome.reason
    assert fake.writes() == []
