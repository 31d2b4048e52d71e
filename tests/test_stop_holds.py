"""A stop holds (issue 44, item 11): `/planner stop` while a run that died still holds the
issue's lease, then the events that were waiting for that lease. In process (run_for_event on
the fake GitHub) with a lease that lasts 3 seconds, so the dead run's lease expires while the
next event waits and that event's run takes it over."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from planner.ci.handlers.stop import STOP_MARKER
from planner.ci.issue_run import REPLY_MARKER
from tests.fake_forge import FakeGitHub
from tests.fake_forge.rig import Rig, comment_now, say
from tests.fake_forge.scenario import one_file_plan, tracking
from tests.test_durable_lease import hold_lease, lease_state

STATUS_LABELS = {"planner:working", "planner:needs-input", "planner:paused", "planner:done"}
SHORT = {"forge.lease_seconds": 3, "forge.lease_wait_seconds": 20}
PLAN = one_file_plan("NOTES.md", "# Notes\n", "Add notes")


@pytest.fixture
def rig(fake_github: FakeGitHub, tmp_path: Path) -> Rig:
    fake_github.add_issue(1, "Add notes", "Add NOTES.md.", labels=["planner", "planner:working"])
    fake_github.permissions["Codertocat"] = "write"
    return Rig("github", fake_github, tmp_path)


def status_labels(fake: FakeGitHub) -> set[str]:
    return STATUS_LABELS & set(fake.issues[1].labels)


def test_a_stop_while_a_dead_run_holds_the_lease_holds_after_its_lease_is_taken_over(
    rig: Rig,
) -> None:
    fake = rig.fake
    assert isinstance(fake, FakeGitHub)
    hold_lease(fake, 1, "run-that-died", time.time() + 2)  # died a moment ago: still "live"
    queued = comment_now(fake, "/planner also add a changelog")  # its job waits for the lease

    stop = say(rig, "/planner stop", [], **SHORT)
    assert stop.status == "stopped"
    [reply] = [c.body for c in fake.comments_on(1) if REPLY_MARKER in c.body]
    assert STOP_MARKER in reply and "Should that run have died, the issue stays stopped" in reply
    assert status_labels(fake) == {"planner:paused"}

    # The queued event's run waits, takes the dead run's lease over, and does no work: no model
    # call (an empty script), the label stays, the tracking comment says the issue is stopped.
    waited = rig.run(queued, [], event_name="issue_comment", **SHORT)
    assert waited.status == "stopped", waited.reason
    assert "nothing was done" in waited.reason
    assert status_labels(fake) == {"planner:paused"}
    shown = tracking(fake)
    assert "The previous run (run-that-died) stopped without finishing" in shown
    assert "nothing was done" in shown
    assert not fake.branch_exists("planner/issue-1")
    assert lease_state(fake, 1) == "free"

    # A person who asks after the stop is heard.
    resumed = say(rig, "/planner resume", PLAN, **SHORT)
    assert resumed.status == "completed"
    assert status_labels(fake) == {"planner:done"}


def to_review(rig: Rig) -> None:
    """A planning session brought to review, its approval not given yet."""
    from tests.support.planning_session import design_step, discovery_step, review_step

    say(rig, "/planner plan Add notes", [discovery_step()])
    replies = [("q-1: staff\nq-2: 1\nq-3: speed", design_step()), ("d-1: a\nd-2: b", review_step())]
    for text, step in replies:
        say(rig, text, [step])


@pytest.mark.parametrize("queued_text", ["/planner plan Add notes", "/planner approve"])
def test_a_stop_holds_for_queued_planning_session_events(rig: Rig, queued_text: str) -> None:
    """Issue 57, item 7: sessions were handled before the stop check: a queued `/planner plan`
    called the model and turned `planner:paused` into `planner:needs-input`; a queued session
    `/planner approve` ran a whole pass, pushed and set `planner:done`."""
    fake = rig.fake
    assert isinstance(fake, FakeGitHub)
    if queued_text == "/planner approve":
        to_review(rig)
    hold_lease(fake, 1, "run-that-died", time.time() + 2)
    queued = comment_now(fake, queued_text)  # its job waits for the dead run's lease
    stop = say(rig, "/planner stop", [], **SHORT)
    assert stop.status == "stopped" and status_labels(fake) == {"planner:paused"}

    waited = rig.run(queued, [], event_name="issue_comment", **SHORT)  # no model call
    assert waited.status == "stopped", waited.reason
    assert "nothing was done" in waited.reason
    assert status_labels(fake) == {"planner:paused"}
    assert not fake.branch_exists("planner/issue-1")
    assert lease_state(fake, 1) == "free"
