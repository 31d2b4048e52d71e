"""A person's replies on the local forge are comment files (issue 25, item 4): `planner run
--issue N` without --instruction takes the oldest comment file no run has taken yet as its
event, exactly like a comment on a hosted forge. A whole interactive planning session runs on
files: answers, decisions and the approval."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.interactive.storage import SessionStore
from planner.testing.steps import Step
from tests.fake_forge import git
from tests.fake_forge.scenario import local_repository, one_file_plan, run_local_issue
from tests.support.planning_session import design_step, discovery_step, review_step


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return local_repository(tmp_path / "repo", "# Add staff login\n\nStaff need to log in.\n")


def run(repo: Path, history: Path, steps: list[Step], instruction: str = "") -> str:
    return run_local_issue(repo, history, steps, instruction).status


def reply(repo: Path, name: str, text: str) -> None:
    comments = repo / ".planner" / "issues" / "3" / "comments"
    comments.mkdir(parents=True, exist_ok=True)
    (comments / name).write_text(text, encoding="utf-8")


def test_a_planning_session_answered_decided_and_approved_in_comment_files(
    repo: Path, tmp_path: Path
) -> None:
    history = tmp_path / "history"
    assert run(repo, history, [discovery_step()], "/planner plan Add staff login") == "needs_human"

    reply(repo, "answers.md", "q-1: staff only\nq-2: 2\nq-3: speed of delivery")
    assert run(repo, history, [design_step()]) == "needs_human"
    [session] = SessionStore(history).recent()
    assert [q.answer for q in session.questions] == ["staff only", "SQLite", "speed of delivery"]

    reply(repo, "decide.md", "d-1: opt-b because cookies are simpler\nd-2: opt-b")
    assert run(repo, history, [review_step()]) == "needs_human"
    reply(repo, "approve.md", "Looks right.\n/planner approve\n")
    steps = one_file_plan("LOGIN.md", "# Login\n", "Add staff login")
    assert run(repo, history, steps) == "completed"
    assert git(repo, "show", "planner/issue-3:LOGIN.md") == "# Login"
    [session] = SessionStore(history).recent()
    assert session.status == "approved"
