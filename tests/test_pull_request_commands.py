"""Commands on planner's pull request mean what they mean on its issue (issue 44, items 1 and 2):
`/planner cancel`, `resume` and `stop` written on the pull request of an issue with no
session, with a session waiting for answers, and after an approved session, end to end on the
fake GitHub (run_for_event in process). The state "a pass is running" needs two jobs at once:
tests/test_pull_request_commands_running.py."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from planner.ci.issue_run import REPLY_MARKER
from planner.ci.report.interactive_comment import SESSION_MARKER
from planner.interactive.model import PlanningSessionStatus, new_session
from planner.interactive.storage import SessionStore, record_for_issue
from planner.memory.history import PlanningHistoryStore
from tests.fake_forge import FakeGitHub
from tests.fake_forge.rig import Rig, github, github_rig, say
from tests.fake_forge.scenario import comment_event, labeled_event, one_file_plan
from tests.support.planning_session import discovery_step, user_prompt

S = PlanningSessionStatus
STATUS_LABELS = {"planner:working", "planner:needs-input", "planner:paused", "planner:done"}
PLAN = one_file_plan("README.md", "# hello\n\nRun `python -m pytest`.\n", "Document pytest")
DESIGN = "Document the test command in the README; nothing else."
OLD_DESIGN = "Write a whole testing guide in docs/testing.md."


@pytest.fixture
def rig(fake_github: FakeGitHub, tmp_path: Path) -> Rig:
    return github_rig(fake_github, tmp_path, "Document pytest", "Say how to run the tests.")


def first_pass(rig: Rig, script: list[Any] = PLAN) -> int:
    """A completed pass and the pull request it opened; its number."""
    assert rig.run(labeled_event(), script, event_name="issues").status == "completed"
    [pull] = github(rig).pulls.values()
    return pull.number


def on_pull(rig: Rig, pull: int, body: str, script: list[Any] | None = None) -> Any:
    """A comment on the pull request's conversation: GitHub sends it as an issue_comment on
    an "issue" that has a `pull_request` key."""
    fake = github(rig)
    made = fake.comment_json(fake.add_comment(pull, body))
    payload = comment_event(body, made, pull)
    payload["issue"]["pull_request"] = {"url": f"{fake.api_url}/pulls/{pull}"}
    return rig.run(payload, script or [], event_name="issue_comment")


def replies(rig: Rig) -> list[str]:
    return [c.body for c in github(rig).comments_on(1) if REPLY_MARKER in c.body]


def status_labels(rig: Rig) -> set[str]:
    return STATUS_LABELS & set(github(rig).issues[1].labels)


def session_comment(rig: Rig) -> str:
    shown = [c.body for c in github(rig).comments_on(1) if SESSION_MARKER in c.body]
    return shown[-1]


def test_no_session_cancel_resume_and_stop_on_the_pull_request(rig: Rig) -> None:
    pull = first_pass(rig)
    cancel = on_pull(rig, pull, "/planner cancel")  # no model call may happen
    assert cancel.status == "skipped"
    assert "Nothing to cancel" in replies(rig)[-1]
    assert status_labels(rig) == {"planner:done"}

    resumed = on_pull(rig, pull, "/planner resume")  # as on the issue: nothing left to do
    assert (resumed.status, resumed.reason) == ("completed", "the plan was already completed")
    stopped = on_pull(rig, pull, "/planner stop")
    assert stopped.status == "stopped" and status_labels(rig) == {"planner:paused"}


def test_a_waiting_session_is_answered_resumed_stopped_and_cancelled_from_the_pull_request(
    rig: Rig,
) -> None:
    pull = first_pass(rig)
    say(rig, "/planner plan Also document tox", [discovery_step()])
    assert status_labels(rig) == {"planner:needs-input"}

    resumed = on_pull(rig, pull, "/planner resume")  # no pass past a waiting session
    assert resumed.status == "needs_human"
    assert "Nothing was resumed: planner is waiting for answers" in replies(rig)[-1]
    assert status_labels(rig) == {"planner:needs-input"}

    answered = on_pull(rig, pull, "/planner q-1: staff only")
    assert answered.status == "needs_human"
    [session] = SessionStore(rig.history).recent()
    assert session.questions[0].answer == "staff only" and session.status == S.DISCOVERY

    assert on_pull(rig, pull, "/planner stop").status == "stopped"
    assert status_labels(rig) == {"planner:paused"}

    cancelled = on_pull(rig, pull, "/planner cancel")
    assert cancelled.status == "stopped"
    [session] = SessionStore(rig.history).recent()
    assert session.status == S.CANCELLED
    assert "⏹️ Interactive planning · cancelled" in session_comment(rig)
    assert "✅ **Answer:** staff only" in session_comment(rig)  # kept under the cancellation


def approved_session(rig: Rig, design: str = DESIGN) -> str:
    session = new_session("Document pytest")
    session.status = S.APPROVED
    session.design_summary = design
    SessionStore(rig.history).save(session)
    journal = PlanningHistoryStore(rig.history, github(rig).repository, "1", "seed")
    record_for_issue(journal, session)
    return session.session_id


def plans_from(design: bool) -> Any:
    def check(body: dict[str, Any]) -> None:
        assert (DESIGN in user_prompt(body)) is design
        assert OLD_DESIGN not in user_prompt(body)

    return check


def test_an_approved_session_is_resumed_stopped_and_cancelled_from_the_pull_request(
    rig: Rig,
) -> None:
    session_id = approved_session(rig)
    pull = first_pass(rig, [dataclasses.replace(PLAN[0], expect=plans_from(True)), *PLAN[1:]])

    resumed = on_pull(rig, pull, "/planner resume")
    assert (resumed.status, resumed.reason) == ("completed", "the plan was already completed")
    assert on_pull(rig, pull, "/planner stop").status == "stopped"
    assert status_labels(rig) == {"planner:paused"}

    cancelled = on_pull(rig, pull, "/planner cancel")  # no model call: no pass starts
    assert cancelled.status == "stopped"
    assert f"Cancelled the approved planning session {session_id}" in replies(rig)[-1]
    assert SessionStore(rig.history).load(session_id).status == S.CANCELLED
    shown = session_comment(rig)
    assert "⏹️ Interactive planning · cancelled" in shown and DESIGN in shown

    # Later passes follow the issue as written, not the cancelled design.
    again = [dataclasses.replace(PLAN[0], expect=plans_from(False)), *PLAN[1:]]
    assert say(rig, "/planner also mention tox", again).status == "completed"


def test_cancel_of_an_approved_session_on_the_issue_ends_its_design(rig: Rig) -> None:
    """Issue 44, item 2: it answered "Nothing to cancel" and the design kept driving passes.
    An older approved design, replaced by the newer one, does not come back either."""
    approved_session(rig, OLD_DESIGN)
    session_id = approved_session(rig)
    cancelled = say(rig, "/planner cancel")  # no model call
    assert cancelled.status == "stopped"
    assert "later passes plan from the issue as written" in replies(rig)[-1]
    assert SessionStore(rig.history).load(session_id).status == S.CANCELLED
    first_pass(rig, [dataclasses.replace(PLAN[0], expect=plans_from(False)), *PLAN[1:]])
    assert say(rig, "/planner cancel").status == "skipped"  # once is enough
    assert "Nothing to cancel" in replies(rig)[-1]
