"""A review of planner's pull request drives the next pass, end to end on the fake GitHub: real
@octokit/webhooks-examples payloads, GraphQL checked against GitHub's schema, a real bare
repository, the repository's tests run by the verification phase, the scripted model."""

from __future__ import annotations

import json
from pathlib import Path

from planner.ci.forges.base import TRACKING_MARKER
from tests.fake_forge import FakeGitHub
from tests.review_scenario import (
    BRANCH,
    SETTINGS,
    commits_on_branch,
    completion,
    edit,
    finish,
    github_reviewed,
    on_branch,
    review_comment_event,
    review_event,
)

NONE_CASE = "this fails on an empty list: return None then"


def tracking(fake: FakeGitHub) -> str:
    [comment] = [c for c in fake.comments_on(1) if TRACKING_MARKER in c.body]
    return comment.body


def test_a_review_with_two_line_comments_gives_two_tasks_commits_replies_and_resolved_threads(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    rig = github_reviewed(fake_github, tmp_path)
    before = commits_on_branch(fake_github)
    [pull] = fake_github.pulls.values()
    first = fake_github.add_review_thread(pull.number, "stats.py", 6, NONE_CASE)
    second = fake_github.add_review_thread(pull.number, "stats.py", 10, f"Same here: {NONE_CASE}")
    script = [
        edit("    return max(values)", "    return max(values) if values else None"),
        finish(summary="largest() returns None for an empty list"),
        edit("    return min(values)", "    return min(values) if values else None"),
        finish(summary="smallest() returns None for an empty list"),
        completion(completed=2),
    ]

    outcome = rig.run(
        review_event(fake_github, "/planner please handle these"),
        script,
        event_name="pull_request_review",
        **SETTINGS,
    )

    assert outcome.status == "completed", outcome.reason
    new = [c for c in commits_on_branch(fake_github) if c not in before]
    assert len(new) == 2
    text = on_branch(fake_github).decode()
    assert "return max(values) if values else None" in text
    assert "return min(values) if values else None" in text
    body = tracking(fake_github)
    assert "(Revised #1)" in body and "review by @\u200bCodertocat" in body
    assert "- [x] **review_1**" in body and "- [x] **review_2**" in body
    for thread, commit, summary in (
        (first, new[1], "largest() returns None"),
        (second, new[0], "smallest() returns None"),
    ):
        [_, reply] = thread.comments
        assert reply.user == "github-actions[bot]" and reply.user_type == "Bot"
        assert f"Changed in {commit}: {summary}" in reply.body
        assert "so the thread is resolved" in reply.body
        assert thread.resolved and thread.resolved_by == "github-actions[bot]"
    resolves = [c for c in fake_github.graphql.calls if "resolveReviewThread" in c["query"]]
    assert sorted(c["variables"]["thread"] for c in resolves) == sorted(
        [first.node_id, second.node_id]
    )
    # each task's prompt carries its own thread, as untrusted data with the hunk and the lines
    prompt_1 = next(p for p in rig.prompts if "Task review_1 answers a review comment" in p)
    assert NONE_CASE in prompt_1 and "Same here" not in prompt_1
    assert '<untrusted-data source=\\"review thread\\">' in prompt_1
    assert "> 6|     return max(values)" in json.loads(prompt_1)["messages"][1]["content"]
    assert "+def largest(values):" in prompt_1  # the diff hunk the comment was made on


def test_a_second_event_for_the_same_review_finds_nothing_left_and_writes_nothing(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    rig = github_reviewed(fake_github, tmp_path)
    [pull] = fake_github.pulls.values()
    thread = fake_github.add_review_thread(pull.number, "stats.py", 6, f"/planner {NONE_CASE}")
    script = [
        edit("    return max(values)", "    return max(values) if values else None"),
        finish(summary="largest() returns None for an empty list"),
        completion(),
    ]
    rig.run(
        review_comment_event(fake_github, thread.node_id),
        script,
        event_name="pull_request_review_comment",
        **SETTINGS,
    )
    assert thread.resolved
    writes = len(fake_github.writes())

    again = rig.run(
        review_event(fake_github, "/planner"), [], event_name="pull_request_review", **SETTINGS
    )

    assert again.status == "skipped" and "no open thread" in again.reason
    assert len(fake_github.writes()) == writes
    assert BRANCH in fake_github.branches()
