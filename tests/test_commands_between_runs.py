"""Commands between runs (issue 25, items 1, 17, 19, 20), end to end on the fake GitHub: a
command that has nothing to act on answers so and changes nothing else."""

from __future__ import annotations

from planner.ci.forges.base import TRACKING_MARKER
from planner.ci.issue_run import REPLY_MARKER
from planner.interactive.storage import SessionStore
from tests.fake_forge import FakeGitHub
from tests.fake_forge.rig import Rig, github, github_rig_fixture, say
from tests.fake_forge.scenario import file_on, labeled_event, one_file_plan, tracking
from tests.support.planning_session import discovery_step

NEW_README = "# hello\n\nRun the tests with `python -m pytest -q`.\n"
HIGH = {"approval.large_file_bytes": 20}  # README.md (52 bytes) is then a large file
BRANCH = "planner/issue-1"


rig = github_rig_fixture("Document pytest", "Say how to run the tests.")


def replies(fake: FakeGitHub) -> list[str]:
    return [c.body for c in fake.comments_on(1) if REPLY_MARKER in c.body]


def test_cancel_without_a_session_answers_nothing_to_cancel_and_runs_nothing(rig: Rig) -> None:
    fake = github(rig)
    outcome = say(rig, "/planner cancel")  # an empty script: no model call may happen
    assert outcome.status == "skipped"
    [reply] = replies(fake)
    assert "@Codertocat Nothing to cancel" in reply and "`/planner stop`" in reply
    assert fake.issues[1].labels == ["planner"]
    assert not any(TRACKING_MARKER in c.body for c in fake.comments_on(1))


def test_cancel_with_approvals_waiting_rejects_nothing(rig: Rig) -> None:
    fake = github(rig)
    steps = one_file_plan("README.md", NEW_README, "Document pytest")
    assert rig.run(labeled_event(), steps[:3], event_name="issues", **HIGH).status == "needs_human"
    labels = list(fake.issues[1].labels)
    assert say(rig, "/planner cancel", **HIGH).status == "skipped"
    assert "Nothing to cancel" in replies(fake)[-1]
    assert fake.issues[1].labels == labels
    done = say(rig, "/planner approve a1", steps[3:], **HIGH)  # a1 still waits, unrejected
    assert done.status == "completed"
    assert file_on(fake.bare, BRANCH, "README.md") == NEW_README.rstrip("\n")


def test_resume_past_a_session_waiting_for_answers_says_what_it_waits_for(rig: Rig) -> None:
    fake = github(rig)
    rig.run(labeled_event("planner:interactive"), [discovery_step()], event_name="issues")
    outcome = say(rig, "/planner resume")  # no model call: nothing is planned past it
    assert outcome.status == "needs_human"
    [reply] = replies(fake)
    assert "Nothing was resumed: planner is waiting for answers to the planning session's" in (
        reply
    )
    assert "[the session comment](" in reply
    [session] = SessionStore(rig.history).recent()
    assert session.status == "discovery" and session.open_questions()


def test_a_plain_comment_rejects_no_waiting_approval(rig: Rig) -> None:
    fake = github(rig)
    steps = one_file_plan("README.md", NEW_README, "Document pytest")
    rig.run(labeled_event(), steps[:3], event_name="issues", **HIGH)
    assert "planner:needs-input" in fake.issues[1].labels  # a plain reply starts a run

    plain = say(rig, "Also mention tox in the README, please.", **HIGH)  # no model call
    assert plain.status == "needs_human" and not fake.branch_exists(BRANCH)
    assert "Nothing was approved or rejected: this comment is not an answer" in tracking(fake)
    assert "| a1 | write | `README.md` |" in tracking(fake)  # still asked

    done = say(rig, "/planner approve a1", steps[3:], **HIGH)
    assert done.status == "completed"
    assert file_on(fake.bare, BRANCH, "README.md") == NEW_README.rstrip("\n")
    assert "a person rejected" not in " ".join(rig.prompts)


def test_comments_since_the_plan_reach_the_prompts_of_the_work_after_them(rig: Rig) -> None:
    """Issue 44, item 9: after `/planner approve a1` and a plain comment, no later request to
    the model contained the comment (only a planning prompt shows the issue's comments)."""
    steps = one_file_plan("README.md", NEW_README, "Document pytest")
    rig.run(labeled_event(), steps[:3], event_name="issues", **HIGH)  # planned; a1 waits
    say(rig, "Also keep the old name as an alias.", **HIGH)  # plain: answers nothing
    say(rig, "And mention <!-- hidden --> tox, please.", **HIGH)
    before = len(rig.prompts)

    done = say(rig, "/planner approve a1", steps[3:], **HIGH)

    assert done.status == "completed"
    execute, completion = rig.prompts[before], rig.prompts[-1]
    for prompt in (execute, completion):
        section = prompt.split('<untrusted-data source=\\"comments since the plan\\">')[1]
        section = section.split("</untrusted-data>")[0]
        newest, older = section.index("mention  tox"), section.index("old name as an alias")
        assert newest < older  # newest first, sanitised (the hidden part is gone)
        assert "hidden" not in section and "approve a1" not in section
    assert "comments since the plan" not in " ".join(rig.prompts[:before])  # planned from all
