"""An approval approves what was shown (issue 24, Medium 1), end to end on the fake GitHub.

The attacks: a careless sentence that contains the command ("Please do NOT /planner approve
yet"), a command hidden in an HTML comment, an `approve all` written before the approval request
existed, and an approve written while the design was still open, whose event ran only after
the review was shown (it waited for the run that made the review). None of them may approve;
each gets an answer saying why. A command alone on its line, written after the request, does.
"""

from __future__ import annotations

from planner.ci.report.interactive_comment import SESSION_MARKER
from planner.interactive.storage import SessionStore
from tests.fake_forge import FakeGitHub
from tests.fake_forge.rig import Rig, github, github_rig_fixture, issue_comment_event, say
from tests.fake_forge.scenario import file_on, labeled_event, one_file_plan, tracking
from tests.support.planning_session import REVISED, design_step, discovery_step, review_step

README = "# hello\n\nRun the tests with `python -m unittest`.\n"
NEW_README = "# hello\n\nRun the tests with `python -m pytest -q`.\n"
HIGH = {"approval.large_file_bytes": 20}  # README.md (52 bytes) is then a large file
BRANCH = "planner/issue-1"


rig = github_rig_fixture("Document pytest", "Say how to run the tests.")


def session_comment(fake: FakeGitHub) -> str:
    return [c.body for c in fake.comments_on(1) if SESSION_MARKER in c.body][-1]


# -- the approval gate -------------------------------------------------------------------------


def test_gate_approvals_written_before_the_request_or_inside_a_sentence_approve_nothing(
    rig: Rig,
) -> None:
    fake = github(rig)
    steps = one_file_plan("README.md", NEW_README, "Document pytest")
    early = fake.add_comment(1, "/planner approve all")  # before anything was asked
    first = rig.run(labeled_event(), steps[:3], event_name="issues", **HIGH)
    assert first.status == "needs_human" and "| a1 | write | `README.md` |" in tracking(fake)

    late = rig.run(issue_comment_event(fake, early), [], event_name="issue_comment", **HIGH)
    assert late.status == "needs_human"
    assert not fake.branch_exists(BRANCH)
    assert "`approve all` did not count" in tracking(fake)
    assert "written before the request it would answer was shown" in tracking(fake)

    careless = say(rig, "Please do NOT /planner approve all yet, I am reading it.", **HIGH)
    assert careless.status == "needs_human" and not fake.branch_exists(BRANCH)
    assert "not a command on its own line" in tracking(fake)

    hidden = say(rig, "<!-- /planner approve all -->", **HIGH)  # a plain reply: no command
    assert hidden.status == "needs_human" and not fake.branch_exists(BRANCH)
    assert "this comment is not an answer to the approval request" in tracking(fake)

    done = say(rig, "Looks right.\n/planner approve a1", steps[3:], **HIGH)
    assert done.status == "completed"
    assert file_on(fake.bare, BRANCH, "README.md") == NEW_README.rstrip("\n")
    assert "Codertocat approved a1." in tracking(fake)


def test_gate_a_request_that_changed_needs_an_approval_written_after_it(rig: Rig) -> None:
    """An approval written after the first request does not carry over to a changed one."""
    fake = github(rig)
    steps = one_file_plan("README.md", NEW_README, "Document pytest")
    rig.run(labeled_event(), steps[:3], event_name="issues", **HIGH)
    fake.push_branch("main", "README.md", "# hello\n\nA person rewrote this meanwhile.\n")
    queued = fake.add_comment(1, "/planner approve a1")  # its run waits behind the next one
    again = say(rig, "/planner approve a1", **HIGH)  # the file changed: asked about again
    assert again.status == "needs_human" and "-A person rewrote this meanwhile." in tracking(fake)

    stale = rig.run(issue_comment_event(fake, queued), [], event_name="issue_comment", **HIGH)
    assert stale.status == "needs_human" and not fake.branch_exists(BRANCH)
    assert "`approve a1` did not count" in tracking(fake)


# -- an interactive planning session's review --------------------------------------------------


def test_session_approvals_not_written_after_the_review_as_a_command_approve_nothing(
    rig: Rig,
) -> None:
    fake = github(rig)
    rig.run(labeled_event("planner:interactive"), [discovery_step()], event_name="issues")
    say(rig, "q-1: staff only\nq-2: 2\nq-3: speed of delivery", [design_step()])
    during_design = fake.add_comment(1, "/planner approve")  # its run waits for the lease
    say(rig, "d-1: opt-b because cookies are simpler\nd-2: opt-b", [review_step()])
    assert "📝 Interactive planning · review" in session_comment(fake)

    queued = rig.run(issue_comment_event(fake, during_design), [], event_name="issue_comment")
    assert queued.status == "needs_human"
    assert "> `approve` did not count: it was written before the request" in session_comment(fake)
    assert say(rig, "Please do NOT /planner approve yet").status == "needs_human"
    assert "> `approve` did not count: it was not a command on its own line" in (
        session_comment(fake)
    )
    assert say(rig, "<!-- /planner approve -->").status == "needs_human"  # a plain reply
    assert "> The session is in review: approve, reject" in session_comment(fake)
    history = rig.history
    [session] = SessionStore(history).recent()
    assert session.status == "review" and not fake.branch_exists(BRANCH)
    assert say(rig, "/planner approve planning-0000").status == "needs_human"
    assert "takes nothing after it but this session's id" in session_comment(fake)

    done = say(rig, "/planner approve", one_file_plan("LOGIN.md", "# Login\n", "Add login"))
    assert done.status == "completed"
    assert file_on(fake.bare, BRANCH, "LOGIN.md") == "# Login"
    [session] = SessionStore(history).recent()
    assert session.status == "approved"


def test_a_rejected_review_keeps_what_it_showed_in_its_closed_comment(rig: Rig) -> None:
    """Issue 25, item 5: the closed review comment of a rejected design was empty."""
    fake = github(rig)
    rig.run(labeled_event("planner:interactive"), [discovery_step()], event_name="issues")
    say(rig, "q-1: staff only\nq-2: 2\nq-3: speed of delivery", [design_step()])
    say(rig, "d-1: opt-b because cookies are simpler\nd-2: opt-b", [review_step()])
    say(rig, "/planner reject too heavy, keep it small", [design_step(REVISED)])

    [review] = [c.body for c in fake.comments_on(1) if "Interactive planning · review" in c.body]
    assert "_This phase is over: the session is now in **design**._" in review
    assert "> Staff log in with server cookies; passwords hashed with argon2." in review
    assert "- Session handling: Server cookies\n  Reason: cookies are simpler" in review
    assert "> (empty)" not in review


def test_a_review_shown_before_marks_were_kept_is_approved_after_its_comment(rig: Rig) -> None:
    """A session left in review by an earlier planner version has no mark: its review comment
    is the request, so an approve written after that comment counts, one before does not."""
    import json

    fake = github(rig)
    rig.run(labeled_event("planner:interactive"), [discovery_step()], event_name="issues")
    say(rig, "q-1: staff only\nq-2: 2\nq-3: speed of delivery", [design_step()])
    early = fake.add_comment(1, "/planner approve")
    say(rig, "d-1: opt-b because cookies are simpler\nd-2: opt-b", [review_step()])
    for path in rig.history.glob("*.jsonl"):  # as the earlier version wrote it
        entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        for entry in entries:
            entry.pop("review_mark", None)
        path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")

    assert (
        rig.run(issue_comment_event(fake, early), [], event_name="issue_comment").status
        == "needs_human"
    )
    done = say(rig, "/planner approve", one_file_plan("LOGIN.md", "# Login\n", "Add login"))
    assert done.status == "completed"
