"""The parts of review handling (planner.ci.review) on their own: which events trigger (real
payloads), suggestions and where commented lines are now, which threads are open work, and the
GraphQL documents against GitHub's schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planner.ci.events.github import parse_github_event
from planner.ci.events.gitlab import parse_gitlab_event
from planner.ci.events.triggers import Skip, Trigger
from planner.ci.forges import github as github_forge
from planner.ci.forges.base import PullRequestData
from planner.ci.forges.github import GitHubForge
from planner.ci.forges.threads import ReviewThread, ThreadComment
from planner.ci.review.anchors import (
    Anchor,
    Suggestion,
    apply_suggestion,
    commented_lines,
    hunk_ending_at,
    locate,
    suggested_range,
    suggestion_range,
    suggestions_in,
    touches,
)
from planner.ci.review.threads import open_threads
from planner.config import ForgeConfig
from planner.core.errors import ApiError
from tests.fake_forge import FakeGitHub
from tests.fake_forge.scenario import github_payload, gitlab_payload

CONFIG = ForgeConfig()


def review(body: str | None, state: str = "commented", action: str = "submitted") -> Any:
    payload = github_payload("pull_request_review.submitted")
    payload["action"] = action
    payload["review"].update(body=body, state=state)
    return payload


def review_comment(body: str, action: str = "created", sender: str = "User") -> Any:
    payload = github_payload("pull_request_review_comment.created")
    payload["action"] = action
    payload["comment"]["body"] = body
    payload["sender"]["type"] = sender
    return payload


# -- triggers ------------------------------------------------------------------------------------


def test_a_review_with_the_phrase_triggers_on_its_pull_request() -> None:
    found = parse_github_event("pull_request_review", review("/planner please fix"), CONFIG)
    assert isinstance(found, Trigger)
    assert (found.kind, found.event, found.pull_request) == (
        "review",
        "pull_request_review.submitted",
        2,
    )
    assert found.issue_number is None and found.pull_request_branch == "changes"
    assert (found.command, found.instruction, found.actor.login) == (
        "run",
        "please fix",
        "Codertocat",
    )
    assert found.event_time == "2019-05-15T15:20:38Z"


def test_a_line_comment_with_the_phrase_triggers() -> None:
    found = parse_github_event(
        "pull_request_review_comment", review_comment("/planner use a set"), CONFIG
    )
    assert isinstance(found, Trigger) and found.kind == "review"
    assert found.comment_id == "284312630" and found.instruction == "use a set"


@pytest.mark.parametrize(
    ("event", "payload", "reason"),
    [
        ("pull_request_review", review(None), "does not contain '/planner'"),
        ("pull_request_review", review("LGTM"), "does not contain '/planner'"),
        ("pull_request_review", review("/planner", action="edited"), "only a submitted review"),
        ("pull_request_review", review("/planner", action="dismissed"), "only a submitted"),
        ("pull_request_review_comment", review_comment("nit"), "does not contain"),
        (
            "pull_request_review_comment",
            review_comment("/planner fix", action="edited"),
            "pull_request_review_comment.edited: only new comments",
        ),
        (
            "pull_request_review_comment",
            review_comment("/planner fix", sender="Bot"),
            "is a bot",
        ),
        (
            "pull_request_review_comment",
            review_comment("<!-- planner:review-reply -->\n/planner fix"),
            "one of planner's own",
        ),
        ("pull_request_review", review("`/planner` is the phrase"), "does not contain"),
        ("pull_request_review", review("> /planner fix\n\nquoted"), "does not contain"),
    ],
)
def test_what_a_review_event_does_not_trigger(event: str, payload: Any, reason: str) -> None:
    found = parse_github_event(event, payload, CONFIG)
    assert isinstance(found, Skip) and reason in found.reason


def test_a_review_requesting_changes_triggers_only_when_configured() -> None:
    asked = review("Please rework the edge cases.", state="changes_requested")
    skipped = parse_github_event("pull_request_review", asked, CONFIG)
    assert isinstance(skipped, Skip) and "review.act_on_changes_requested" in skipped.reason
    found = parse_github_event("pull_request_review", asked, CONFIG, act_on_changes_requested=True)
    assert isinstance(found, Trigger) and found.kind == "review"
    assert found.instruction == "Please rework the edge cases." and not found.own_line
    approving = parse_github_event(
        "pull_request_review", review("fine"), CONFIG, act_on_changes_requested=True
    )
    assert isinstance(approving, Skip)


def test_a_gitlab_diff_note_is_a_review_and_a_plain_merge_request_note_is_not() -> None:
    diff = parse_gitlab_event(gitlab_payload("note_hook_diff_note"), CONFIG)
    assert isinstance(diff, Trigger) and diff.kind == "review"
    assert (diff.pull_request, diff.pull_request_branch) == (5, "planner/issue-12")
    assert diff.instruction == "this flips the widget twice on tablets"
    plain = gitlab_payload("note_hook_mr")
    plain["object_attributes"]["note"] = "/planner also handle tablets"
    found = parse_gitlab_event(plain, CONFIG)
    assert isinstance(found, Trigger) and found.kind == "pr_comment"
    edited = gitlab_payload("note_hook_diff_note")
    edited["object_attributes"]["action"] = "update"
    assert isinstance(parse_gitlab_event(edited, CONFIG), Skip)
    silent = gitlab_payload("note_hook_diff_note")
    silent["object_attributes"]["note"] = "this flips the widget twice"
    assert isinstance(parse_gitlab_event(silent, CONFIG), Skip)


# -- suggestions ---------------------------------------------------------------------------------


def test_suggestion_blocks_github_and_gitlab() -> None:
    body = "Use this:\r\n```suggestion\r\n\tx = 1  \r\n```\r\nthanks"
    assert suggestions_in(body) == [Suggestion(("\tx = 1  ",))]
    assert suggestions_in("```suggestion:-2+1\na\nb\n```") == [Suggestion(("a", "b"), 2, 1)]
    assert suggestions_in("````suggestion\n```\ncode\n```\n````") == [
        Suggestion(("```", "code", "```"))
    ]
    assert suggestions_in("```suggestion\n```") == [Suggestion(())]  # delete the lines
    assert suggestions_in("```python\nx\n```\n> ```suggestion") == []


def test_a_suggestion_replaces_exactly_its_lines_keeping_the_files_line_endings() -> None:
    content = b"a\r\nb\r\nc\r\nd"
    replaced = apply_suggestion(content, 2, 3, Suggestion(("B \xe9".replace("\xe9", "é"),)))
    assert replaced == "a\r\nB é\r\nd".encode()
    assert apply_suggestion(content, 4, 4, Suggestion(("D", "E"))) == b"a\r\nb\r\nc\r\nD\r\nE"
    assert apply_suggestion(content, 2, 2, Suggestion(())) == b"a\r\nc\r\nd"
    assert apply_suggestion(content, 4, 5, Suggestion(("x",))) is None
    assert suggested_range(Anchor(3, 3), Suggestion(("x",), 1, 2)) == (2, 5)
    assert suggested_range(Anchor(3, 5), Suggestion(("x",))) == (3, 5)


# -- where the commented lines are now -----------------------------------------------------------


def thread(**fields: Any) -> ReviewThread:
    defaults: dict[str, Any] = {"id": "T", "path": "a.py", "line": 3, "original_line": 3}
    return ReviewThread(**{**defaults, **fields})


def test_lines_are_where_the_forge_says_while_they_read_the_same() -> None:
    current = ["a", "b", "c", "d"]
    assert locate(thread(), current, ["c"]) == Anchor(3, 3)
    assert locate(thread(start_line=2), current, ["b", "c"]) == Anchor(2, 3)
    # the forge's line reads differently now: the text decides, never the number alone
    assert locate(thread(), ["a", "b", "x", "c"], ["c"]) == Anchor(4, 4, moved=True)
    assert locate(thread(), ["a", "b", "x"], ["c"]) is None


def test_a_suggestion_applies_only_where_every_line_it_replaces_reads_as_reviewed() -> None:
    reviewed = ["a", "b", "c", "d", "e"]
    plain, ranged = Suggestion(("X",)), Suggestion(("X",), 1, 1)
    assert suggestion_range(thread(), plain, reviewed, reviewed) == (3, 3)
    two = thread(start_line=2, original_start_line=2)
    assert suggestion_range(two, plain, reviewed, reviewed) == (2, 3)  # GitHub: both lines
    assert suggestion_range(two, plain, reviewed, reviewed, gitlab=True) == (3, 3)  # -0+0
    assert suggestion_range(thread(), ranged, reviewed, reviewed, gitlab=True) == (2, 4)
    # the commented line reads the same, the one below it does not: GitLab's -1+1 is refused
    below = ["a", "b", "c", "D", "e"]
    assert suggestion_range(thread(), ranged, below, reviewed, gitlab=True) is None
    assert suggestion_range(thread(), plain, below, reviewed, gitlab=True) == (3, 3)
    # moved (the forge lost the lines, or tracks them elsewhere): never applied by text
    shifted = ["new", *reviewed]
    assert suggestion_range(thread(line=None, outdated=True), plain, shifted, reviewed) is None
    assert suggestion_range(thread(), plain, shifted, reviewed) is None
    assert suggestion_range(thread(line=4), plain, shifted, reviewed) == (4, 4)


def test_moved_lines_are_found_nearest_to_where_they_were_and_gone_ones_are_not() -> None:
    current = ["x", "c", "y", "z", "a", "b", "c"]
    outdated = thread(line=None, outdated=True)
    assert locate(outdated, current, ["c"]) == Anchor(2, 2, moved=True)
    assert locate(thread(line=7, outdated=True), current, ["a", "b"]) == Anchor(5, 6, moved=True)
    assert locate(outdated, ["a", "b"], ["c"]) is None
    assert locate(outdated, current, None) is None


def test_the_commented_text_comes_from_the_commit_else_from_the_hunk() -> None:
    hunk = "@@ -1,2 +1,4 @@\n a\n-b\n+B\n+C"
    two = thread(original_line=3, original_start_line=2, diff_hunk=hunk)
    assert commented_lines(two, None) == ["B", "C"]
    assert commented_lines(thread(original_line=3, original_start_line=2), None) is None
    assert commented_lines(thread(original_line=2), ["a", "b", "c"]) == ["b"]
    assert commented_lines(thread(side="old"), ["a"]) is None
    assert commented_lines(thread(diff_hunk=hunk, original_line=3), None) == ["C"]


def test_a_change_touches_the_lines_it_replaces_or_adds_among_them() -> None:
    replaced = "@@ -6 +6 @@\n-    return max(values)\n+    return max(values) or None"
    added_above = "@@ -5,0 +6,2 @@\n+    if not values:\n+        return None"
    elsewhere = "@@ -2 +2 @@\n-x\n+y\n@@ -9,0 +10 @@\n+z"
    assert touches(replaced, 6, 6) and touches(added_above, 6, 6)
    assert not touches(elsewhere, 6, 6) and not touches("", 6, 6)
    assert touches("@@ -4,3 +4 @@\n-a\n-b\n-c\n+d", 6, 7)


def test_the_hunk_of_a_line_ends_at_it() -> None:
    diff = "diff --git a/s b/s\n@@ -1,2 +1,3 @@\n a\n+b\n c\n@@ -9 +10,2 @@\n x\n+y"
    assert hunk_ending_at(diff, 2) == "@@ -1,2 +1,3 @@\n a\n+b"
    assert hunk_ending_at(diff, 11) == "@@ -9 +10,2 @@\n x\n+y"
    assert hunk_ending_at(diff, 5) == ""


# -- open threads --------------------------------------------------------------------------------


def comment(author: str, trusted: bool = False, **fields: Any) -> ThreadComment:
    return ThreadComment(id=author, author=author, trusted=trusted, **fields)


def test_open_threads_are_unresolved_started_by_a_permitted_person_and_not_answered() -> None:
    writers = {"ann", "bob"}

    def allowed(c: ThreadComment) -> bool:
        return c.author in writers

    threads = [
        thread(id="asks", comments=[comment("ann")]),
        thread(id="resolved", resolved=True, comments=[comment("ann")]),
        thread(id="stranger", comments=[comment("eve"), comment("ann")]),
        thread(id="answered", comments=[comment("ann"), comment("planner", True)]),
        thread(id="again", comments=[comment("ann"), comment("planner", True), comment("bob")]),
        thread(id="chatter", comments=[comment("ann"), comment("planner", True), comment("eve")]),
        thread(id="ours", comments=[comment("planner", True), comment("ann")]),
    ]
    found = open_threads(threads, allowed)
    assert [t.thread.id for t in found] == ["asks", "again"]
    assert [c.author for c in found[1].comments] == ["ann", "planner", "bob"]
    assert found[1].reviewer == "bob"


# -- GitHub's GraphQL schema ---------------------------------------------------------------------


def test_the_graphql_documents_are_checked_against_githubs_schema(
    fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fake validates every document with GitHub's published schema: planner's resolve
    mutation passes; the same mutation with the input field misnamed (`id` for `threadId`) is
    refused as GitHub refuses it, and nothing is resolved."""
    fake_github.add_issue(1, "Issue", "body")
    fake_github.push_branch("planner/issue-1", "a.py", "a = 1\n")
    fake_github.pulls[2] = github_forge_pull(fake_github)
    made = fake_github.add_review_thread(2, "a.py", 1, "nit")
    forge = GitHubForge(
        repository=fake_github.repository, token=fake_github.token, api_url=fake_github.api_url
    )
    pull = PullRequestData(number=2)
    [found] = forge.review_threads(pull)
    assert (found.id, found.line, found.path, found.resolved) == (made.node_id, 1, "a.py", False)

    broken = github_forge.RESOLVE_THREAD.replace("threadId:", "id:")
    monkeypatch.setattr(github_forge, "RESOLVE_THREAD", broken)
    with pytest.raises(ApiError, match=r"GitHub GraphQL API ResolveThread failed: .*threadId"):
        forge.resolve_thread(pull, found)
    assert not made.resolved
    assert any("ResolveThread" in problem for problem in fake_github.openapi_problems)
    fake_github.openapi_problems.clear()  # seen: the teardown check would fail on it

    monkeypatch.undo()
    forge.resolve_thread(pull, found)
    assert made.resolved
    [call] = [c for c in fake_github.graphql.calls if c["mutation"]]
    assert call["operationName"] == "ResolveThread"
    assert call["variables"] == {"thread": made.node_id}


def github_forge_pull(fake: FakeGitHub) -> Any:
    from tests.fake_forge.github import GhPull

    return GhPull(2, "planner/issue-1", "main", "Issue (#1)", "Closes #1", False, fake.repository)


def test_the_graphql_url_of_github_and_of_an_enterprise_server() -> None:
    assert github_forge.graphql_url_for("https://api.github.com") == (
        "https://api.github.com/graphql"
    )
    assert github_forge.graphql_url_for("https://ghe.example.com/api/v3/") == (
        "https://ghe.example.com/api/graphql"
    )


def test_paths_from_a_review_never_leave_the_checkout(tmp_path: Path) -> None:
    from planner.ci.review.start import workspace_file

    (tmp_path / "ok.py").write_text("x\n")
    outside = tmp_path.parent / "outside.txt"
    outside.write_text("secret\n")
    (tmp_path / "link.py").symlink_to(outside)
    assert workspace_file(tmp_path, "ok.py") == b"x\n"
    for path in ("link.py", "../outside.txt", str(outside), ".git/config", "missing.py", ""):
        assert workspace_file(tmp_path, path) is None
