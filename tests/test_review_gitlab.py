"""A review of planner's merge request drives the next pass, end to end on the fake GitLab: a
note hook for a diff note (GitLab's documented shape), diff discussions, a real bare repository,
the repository's tests, the scripted model."""

from __future__ import annotations

from pathlib import Path

from planner.ci.forges.base import TRACKING_MARKER
from tests.fake_forge import FakeGitLab
from tests.fake_forge.scenario import gitlab_payload
from tests.review_scenario import (
    NONE_CASE,
    SETTINGS,
    commits_on_branch,
    completion,
    diff_note_event,
    gitlab_reviewed,
    largest_fixed,
    on_branch,
    smallest_fixed,
)


def test_two_diff_discussions_give_two_tasks_commits_replies_and_resolved_discussions(
    fake_gitlab: FakeGitLab, tmp_path: Path
) -> None:
    rig = gitlab_reviewed(fake_gitlab, tmp_path)
    before = commits_on_branch(fake_gitlab)
    [mr] = fake_gitlab.merge_requests.values()
    first = fake_gitlab.add_diff_discussion(mr.iid, "stats.py", 6, f"/planner {NONE_CASE}")
    second = fake_gitlab.add_diff_discussion(mr.iid, "stats.py", 10, f"Same here: {NONE_CASE}")
    script = [
        *largest_fixed(),
        *smallest_fixed(),
        completion(completed=2),
    ]

    outcome = rig.run(diff_note_event(fake_gitlab, first.id), script, **SETTINGS)

    assert outcome.status == "completed", outcome.reason
    assert outcome.issue_number == 12
    new = [c for c in commits_on_branch(fake_gitlab) if c not in before]
    assert len(new) == 2
    text = on_branch(fake_gitlab).decode()
    assert "max(values) if values else None" in text and "min(values) if values" in text
    [tracking] = [n.body for n in fake_gitlab.notes_on(12) if TRACKING_MARKER in n.body]
    assert "(Revised #1)" in tracking and "review by @\u200bdana" in tracking
    assert "- [x] **review_1**" in tracking and "- [x] **review_2**" in tracking
    for discussion, commit in ((first, new[1]), (second, new[0])):
        [_, reply] = discussion.notes
        assert reply.author == fake_gitlab.token_user[1]
        assert f"Changed in {commit}: " in reply.body
        assert discussion.resolved
    resolving = [r for r in fake_gitlab.api_requests("PUT") if "/discussions/" in r.path and r.body]
    assert [r.body for r in resolving] == [{"resolved": True}] * 2
    prompt = next(p for p in rig.prompts if "Task review_1 answers a review comment" in p)
    assert NONE_CASE in prompt and "+def largest(values):" in prompt  # hunk taken from git


def test_a_gitlab_suggestion_is_applied_as_written(fake_gitlab: FakeGitLab, tmp_path: Path) -> None:
    """`suggestion:-1+0` replaces the commented line and the one above it, byte for byte."""
    rig = gitlab_reviewed(fake_gitlab, tmp_path)
    [mr] = fake_gitlab.merge_requests.values()
    replacement = "def largest(values, default=None):\n\treturn max(values, default=default)  "
    body = f"/planner\n```suggestion:-1+0\n{replacement}\n```"
    discussion = fake_gitlab.add_diff_discussion(mr.iid, "stats.py", 6, body)

    outcome = rig.run(diff_note_event(fake_gitlab, discussion.id), [completion()], **SETTINGS)

    assert outcome.status == "completed", outcome.reason
    lines = on_branch(fake_gitlab).split(b"\n")
    assert lines[4:6] == [
        b"def largest(values, default=None):",
        b"\treturn max(values, default=default)  ",
    ]
    assert discussion.resolved
    assert "Applied the suggestion as written in " in discussion.notes[-1].body


def test_a_bare_phrase_on_the_merge_request_works_through_its_open_diff_threads(
    fake_gitlab: FakeGitLab, tmp_path: Path
) -> None:
    """A review's summary note (`/planner`, not on a line) takes up the review's diff threads
    that hold no phrase themselves."""
    rig = gitlab_reviewed(fake_gitlab, tmp_path)
    [mr] = fake_gitlab.merge_requests.values()
    discussion = fake_gitlab.add_diff_discussion(mr.iid, "stats.py", 6, NONE_CASE)
    payload = gitlab_payload("note_hook_mr")
    payload["object_attributes"].update(note="/planner", id=9999, created_at=fake_gitlab.now())
    payload["merge_request"].update(iid=mr.iid, source_branch=mr.source_branch)
    script = [
        *largest_fixed(),
        completion(),
    ]

    outcome = rig.run(payload, script, **SETTINGS)

    assert outcome.status == "completed", outcome.reason
    assert discussion.resolved and "Changed in " in discussion.notes[-1].body
