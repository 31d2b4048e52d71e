"""The issue branch: fetch/continue, commit, push with the token only in an HTTP header."""

from __future__ import annotations

import base64
import logging
import subprocess
from pathlib import Path
from typing import Any

import pytest

from planner.forges.base import GitRemote
from planner.gitops import GitError, GitWorkspace, Identity
from tests.fake_forge import FakeGitHub, git
from tests.fake_forge.scenario import clone, commit_author, commit_message

BOT = Identity("github-actions[bot]", "41898282+github-actions[bot]@users.noreply.github.com")


def remote(fake: FakeGitHub, token: str | None = None) -> GitRemote:
    basic = base64.b64encode(f"x-access-token:{token or fake.token}".encode()).decode()
    return GitRemote(fake.git_url, f"AUTHORIZATION: basic {basic}")


@pytest.fixture
def workspace(fake_github: FakeGitHub, tmp_path: Path) -> Path:
    return clone(fake_github.bare, tmp_path / "ws")


class ArgvRecorder:
    """Wraps subprocess.run to keep every argv and environment planner passes to git."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], dict[str, str]]] = []
        self.real = subprocess.run

    def __call__(self, args: list[str], **kwargs: Any) -> Any:
        self.calls.append((list(args), dict(kwargs.get("env") or {})))
        return self.real(args, **kwargs)


def test_new_branch_is_pushed_with_the_token_in_one_header_only(
    fake_github: FakeGitHub,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    recorder = ArgvRecorder()
    monkeypatch.setattr("planner.gitops.subprocess.run", recorder)
    repo = GitWorkspace(workspace, remote(fake_github))
    state = repo.prepare("planner/issue-1", "main")
    (workspace / "NEW.md").write_text("new\n", encoding="utf-8")
    sha = repo.commit_all("planner: add NEW.md (#1)\n\nCo-authored-by: a <a@b.c>\n", BOT)
    assert state.created and sha and repo.push()

    assert fake_github.branches()["planner/issue-1"] == sha
    assert repo.commits_ahead() == 1
    assert commit_author(fake_github.bare, "planner/issue-1") == (
        "github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>"
    )
    assert "Co-authored-by: a <a@b.c>" in commit_message(fake_github.bare, "planner/issue-1")

    git_requests = [r for r in fake_github.log if r.git]
    assert {r.path.rsplit("/", 1)[1] for r in git_requests} >= {
        "git-upload-pack",
        "git-receive-pack",
    }
    assert all(len(r.authorization) == 1 for r in git_requests)
    token = fake_github.token
    for argv, _env in recorder.calls:
        assert not any(token in part for part in argv)
        assert not any(fake_github.base_url in part and "@" in part for part in argv)
    assert token not in git(workspace, "remote", "-v")
    assert token not in (workspace / ".git" / "config").read_text()
    assert token not in caplog.text


def test_a_stale_header_from_actions_checkout_is_replaced(
    fake_github: FakeGitHub, workspace: Path
) -> None:
    stale = base64.b64encode(b"x-access-token:ghs_expiredTokenFromCheckout").decode()
    git(
        workspace,
        "config",
        f"http.{fake_github.base_url}/.extraheader",
        f"AUTHORIZATION: basic {stale}",
    )
    repo = GitWorkspace(workspace, remote(fake_github))
    repo.prepare("planner/issue-1", "main")
    (workspace / "NEW.md").write_text("new\n", encoding="utf-8")
    repo.commit_all("msg\n", BOT)
    assert repo.push()
    assert fake_github.branch_exists("planner/issue-1")
    assert all(len(r.authorization) == 1 for r in fake_github.log if r.git)


def test_a_wrong_token_fails_fast_with_a_hint(fake_github: FakeGitHub, workspace: Path) -> None:
    repo = GitWorkspace(workspace, remote(fake_github, token="ghs_wrongwrongwrongwrongwrong"))
    with pytest.raises(GitError) as caught:
        repo.prepare("planner/issue-1", "main")
    assert "git fetch failed" in str(caught.value)
    assert "ghs_wrong" not in str(caught.value)


def test_an_existing_branch_is_continued(fake_github: FakeGitHub, workspace: Path) -> None:
    remote_sha = fake_github.push_branch("planner/issue-1", "FIRST.md", "first\n")
    repo = GitWorkspace(workspace, remote(fake_github))
    state = repo.prepare("planner/issue-1", "main")
    assert not state.created and repo.head() == remote_sha
    assert (workspace / "FIRST.md").read_text() == "first\n"
    (workspace / "SECOND.md").write_text("second\n", encoding="utf-8")
    repo.commit_all("second\n", BOT)
    repo.push()
    assert git(fake_github.bare, "rev-list", "--count", "main..planner/issue-1") == "2"


def test_no_changes_means_no_commit(fake_github: FakeGitHub, workspace: Path) -> None:
    repo = GitWorkspace(workspace, remote(fake_github))
    repo.prepare("planner/issue-1", "main")
    assert repo.commit_all("nothing\n", BOT) is None
    assert repo.commits_ahead() == 0


def test_the_default_branch_is_never_the_issue_branch(
    fake_github: FakeGitHub, workspace: Path
) -> None:
    repo = GitWorkspace(workspace, remote(fake_github))
    with pytest.raises(GitError, match="default branch"):
        repo.prepare("main", "main")
    assert fake_github.log == []


def test_uncommitted_changes_are_refused(fake_github: FakeGitHub, workspace: Path) -> None:
    (workspace / "README.md").write_text("edited by hand\n", encoding="utf-8")
    with pytest.raises(GitError, match="uncommitted changes"):
        GitWorkspace(workspace, remote(fake_github)).prepare("planner/issue-1", "main")


def test_untracked_files_stay_and_are_committed(fake_github: FakeGitHub, workspace: Path) -> None:
    (workspace / "notes.txt").write_text("from the job\n", encoding="utf-8")
    repo = GitWorkspace(workspace, remote(fake_github))
    repo.prepare("planner/issue-1", "main")
    assert repo.commit_all("msg\n", BOT)


def test_without_a_remote_the_branch_stays_local(tmp_path: Path) -> None:
    root = tmp_path / "local"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("a\n", encoding="utf-8")
    git(root, "add", ".")
    git(root, "-c", "user.name=x", "-c", "user.email=x@y.z", "commit", "-q", "-m", "init")
    repo = GitWorkspace(root, None)
    assert repo.prepare("planner/issue-2", "main").created
    (root / "b.txt").write_text("b\n", encoding="utf-8")
    repo.commit_all("add b\n", Identity("planner", "planner@localhost"))
    assert repo.push() is False
    git(root, "checkout", "-q", "main")
    again = GitWorkspace(root, None)
    assert not again.prepare("planner/issue-2", "main").created
    assert again.commits_ahead() == 1 and (root / "b.txt").exists()
