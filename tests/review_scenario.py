"""A pull request planner opened, ready to be reviewed, on the fake GitHub and GitLab.

main has stats.py with `mean` and a passing test; the issue asks for `largest` and `smallest`,
and planner's first pass adds them (lines 5-10 of stats.py are the pull request's diff). The
reviewers then comment on those lines.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from planner.ci.outcome import CiOutcome
from planner.testing.steps import Step, reply_tool_calls
from tests.fake_forge import FakeGitHub, FakeGitLab
from tests.fake_forge.core import IDENTITY, git
from tests.fake_forge.github import GhThread
from tests.fake_forge.rig import Rig
from tests.fake_forge.scenario import github_payload, gitlab_payload, labeled_event
from tests.plans import ROOT_TOOLS, completion, finish, planning, write
from tests.test_verification_pass import PYTEST

MEAN = "def mean(values):\n    return sum(values) / len(values)\n"
STATS = (
    MEAN + "\n\ndef largest(values):\n    return max(values)\n"
    "\n\ndef smallest(values):\n    return min(values)\n"
)
"""What the first pass writes: line 6 is `return max(values)`, line 10 `return min(values)`."""
TESTS = "from stats import mean\n\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n"
SETTINGS: dict[str, Any] = {
    "planning.replanning.enabled": False,
    "planning.reflection.enabled": False,
    "verification.command": PYTEST,
    "verification.issue_test": False,
    **ROOT_TOOLS,
}
DEFAULT_LAYOUT: dict[str, Any] = {"planning.history.directory": "planning_history"}
"""The history where the default config keeps it: inside the checkout (carried between jobs by
the issue's lease ref here, as by a cache or artifact in a workflow)."""
BRANCH = "planner/issue-1"
"""The GitHub issue's branch (GitLab's issue is 12: branch_of)."""
NONE_CASE = "this fails on an empty list: return None then"
"""A reviewer's comment on largest() (line 6) or smallest() (line 10): largest_fixed and
smallest_fixed are the model's answers."""


def branch_of(fake: FakeGitHub | FakeGitLab) -> str:
    return BRANCH if isinstance(fake, FakeGitHub) else "planner/issue-12"


def push_stats_project(fake: FakeGitHub | FakeGitLab) -> None:
    pytest_ini = "[pytest]\npythonpath = .\n"
    files = {"stats.py": MEAN, "tests/test_stats.py": TESTS, "pytest.ini": pytest_ini}
    fake.push_main(files, "stats")


def first_pass() -> list[Step]:
    return [planning("task_1"), write("stats.py", STATS), finish(), completion()]


def github_reviewed(fake: FakeGitHub, tmp_path: Path, **overrides: Any) -> Rig:
    """Issue 1, its pull request opened by planner's first pass (`overrides`: of SETTINGS)."""
    fake.add_issue(1, "Add largest and smallest", "stats.py needs largest() and smallest().")
    fake.issues[1].labels.append("planner")
    fake.permissions["Codertocat"] = "write"
    push_stats_project(fake)
    rig = Rig("github", fake, tmp_path)
    settings = {**SETTINGS, **overrides}
    done = rig.run(labeled_event(), first_pass(), event_name="issues", **settings)
    assert done.status == "completed", done.reason
    return rig


def gitlab_reviewed(fake: FakeGitLab, tmp_path: Path, **overrides: Any) -> Rig:
    """Issue 12, its merge request opened by planner's first pass (`overrides`: of SETTINGS)."""
    fake.add_issue(12, "Add largest and smallest", "stats.py needs largest() and smallest().")
    fake.issues[12].labels.append("planner")
    fake.members[7] = 30  # dana: Developer
    push_stats_project(fake)
    rig = Rig("gitlab", fake, tmp_path)
    event = gitlab_payload("issue_hook")
    done = rig.run(event, first_pass(), **{**SETTINGS, **overrides})
    assert done.status == "completed", done.reason
    return rig


def review_event(
    fake: FakeGitHub, body: str, user: str = "Codertocat", number: int = 0, **review: Any
) -> Any:
    """pull_request_review.submitted (the @octokit/webhooks-examples payload) on planner's
    pull request (or on pull request `number`)."""
    [pull] = [fake.pulls[number]] if number else fake.pulls.values()
    payload = github_payload("pull_request_review.submitted")
    payload["review"].update({"body": body, "state": "commented", **review})
    payload["review"]["submitted_at"] = fake.now()
    payload["pull_request"]["number"] = pull.number
    payload["pull_request"]["head"]["ref"] = pull.head
    payload["repository"]["full_name"] = fake.repository
    payload["sender"].update(login=user, type="User")
    return payload


def review_thread(
    fake: FakeGitHub, line: int, body: str, *, path: str = "stats.py", **options: Any
) -> GhThread:
    """A person's review thread on `line` of `path` in planner's pull request (the only one);
    `options` as add_review_thread takes them (user, start_line)."""
    [pull] = fake.pulls.values()
    return fake.add_review_thread(pull.number, path, line, body, **options)


def review_job(
    rig: Rig, fake: FakeGitHub, body: str, script: Sequence[Step] = (), **review: Any
) -> CiOutcome:
    """A review with `body` submitted on planner's pull request, and the job it starts (with
    the review settings every review test uses)."""
    event = review_event(fake, body, **review)
    return rig.run(event, script, event_name="pull_request_review", **SETTINGS)


def review_comment_event(fake: FakeGitHub, node_id: str, user: str = "Codertocat") -> Any:
    """pull_request_review_comment.created for the newest comment of a thread."""
    thread = fake.threads[node_id]
    payload = github_payload("pull_request_review_comment.created")
    payload["comment"] = {
        **payload["comment"],
        **fake.review_comment_json(thread, thread.comments[-1]),
    }
    payload["pull_request"]["number"] = thread.pull
    payload["pull_request"]["head"]["ref"] = fake.pulls[thread.pull].head
    payload["repository"]["full_name"] = fake.repository
    payload["sender"].update(login=user, type="User")
    return payload


def diff_note_event(fake: FakeGitLab, discussion_id: str) -> Any:
    """A Note Hook for the newest note of a diff discussion (GitLab's documented shape)."""
    discussion = fake.discussions[discussion_id]
    note = discussion.notes[-1]
    mr = fake.merge_requests[discussion.iid]
    payload = gitlab_payload("note_hook_diff_note")
    attributes = payload["object_attributes"]
    position = fake.position(discussion)
    attributes.update(
        id=note.id,
        note=note.body,
        description=note.body,
        discussion_id=discussion.id,
        created_at=note.created_at,
        updated_at=note.created_at,
        position=position,
        original_position=position,
    )
    payload["merge_request"].update(iid=mr.iid, source_branch=mr.source_branch)
    payload["user"].update(username=note.author, id=fake.users.get(note.author, 0))
    return payload


def largest_fixed() -> list[Step]:
    """The model's answer to a comment on largest(): it returns None for an empty list."""
    return [
        edit("    return max(values)", "    return max(values) if values else None"),
        finish(summary="largest() returns None for an empty list"),
    ]


def smallest_fixed() -> list[Step]:
    """The same for smallest()."""
    return [
        edit("    return min(values)", "    return min(values) if values else None"),
        finish(summary="smallest() returns None for an empty list"),
    ]


def edit(old: str, new: str) -> Step:
    return reply_tool_calls(
        "execute",
        [("edit_file", {"path": "stats.py", "edits": [{"oldText": old, "newText": new}]})],
    )


def on_branch(fake: FakeGitHub | FakeGitLab, path: str = "stats.py", ref: str = "") -> bytes:
    """The file's bytes on the branch, exactly."""
    done = subprocess.run(
        ["git", "show", f"{ref or branch_of(fake)}:{path}"],
        cwd=fake.bare,
        capture_output=True,
        check=True,
    )
    return done.stdout


def commits_on_branch(fake: FakeGitHub | FakeGitLab) -> list[str]:
    return git(fake.bare, "rev-list", f"main..{branch_of(fake)}").splitlines()


def push_on_branch(fake: FakeGitHub | FakeGitLab, path: str, content: str) -> str:
    """A person pushes a commit onto planner's branch (another clone, a plain push)."""
    clone = fake.root / "person"
    if not clone.exists():
        git(fake.root, "clone", "-q", str(fake.bare), str(clone))
    git(clone, "fetch", "-q", "origin")
    git(clone, "checkout", "-q", "-B", branch_of(fake), f"origin/{branch_of(fake)}")
    (clone / path).parent.mkdir(parents=True, exist_ok=True)
    (clone / path).write_text(content, encoding="utf-8")
    git(clone, "add", path)
    git(clone, "commit", "-q", "-m", f"Edit {path}", env=IDENTITY)
    git(clone, "push", "-q", "origin", branch_of(fake))
    return git(clone, "rev-parse", "HEAD")
