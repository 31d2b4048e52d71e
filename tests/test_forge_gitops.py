"""The issue branch: fetch/continue, commit, push with the token only in an HTTP header."""

from __future__ import annotations

import base64
import logging
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from planner.ci.branch.gitops import GitError, GitWorkspace, Identity
from planner.ci.forges.base import GitRemote
from planner.tools.sandbox.safe_env import repository_overrides
from tests.fake_forge import FakeGitHub, git
from tests.fake_forge.core import IDENTITY
from tests.fake_forge.scenario import clone, commit_author, commit_message, file_on

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
        self.directories: list[Path | None] = []
        self.real = subprocess.run

    def __call__(self, args: list[str], **kwargs: Any) -> Any:
        self.calls.append((list(args), dict(kwargs.get("env") or {})))
        self.directories.append(Path(kwargs["cwd"]) if kwargs.get("cwd") else None)
        return self.real(args, **kwargs)

    def calls_in(self, directory: Path) -> list[tuple[list[str], dict[str, str]]]:
        pairs = zip(self.calls, self.directories, strict=True)
        return [call for call, cwd in pairs if cwd == directory]


def test_new_branch_is_pushed_with_the_token_in_one_header_only(
    fake_github: FakeGitHub,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    recorder = ArgvRecorder()
    monkeypatch.setattr("planner.ci.branch.gitops.subprocess.run", recorder)
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


# -- repository code never runs, and never sees a token ---------------------------------------

SECRETS = {
    "INPUT_GITHUB_TOKEN": "ghs_inputTokenOfTheAction0123456789",
    "INPUT_OPENAI_API_KEY": "sk-inputOpenAiKey0123456789abcdef",
    "OPENAI_API_KEY": "sk-openAiKeyFromTheJob0123456789abc",
    "GITLAB_TOKEN": "glpat-gitlabTokenOfTheJob012345",
}


def plant_spies(workspace: Path, spy_dir: Path) -> None:
    """Hooks and an fsmonitor that would write their whole environment to `spy_dir`."""
    spy_dir.mkdir(exist_ok=True)
    hooks = workspace / ".git" / "hooks"
    for name in ("pre-commit", "post-commit", "pre-push", "post-checkout", "fsmonitor"):
        script = hooks / name
        script.write_text(f'#!/bin/sh\nenv > "{spy_dir}/{name}.env"\nexit 0\n', encoding="utf-8")
        script.chmod(0o755)
    git(workspace, "config", "core.fsmonitor", str(hooks / "fsmonitor"))


def test_planted_hooks_and_fsmonitor_never_run_and_never_see_a_token(
    fake_github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The spies work: plain git in another checkout runs them.
    control = clone(fake_github.bare, tmp_path / "control")
    plant_spies(control, tmp_path / "control-spies")
    (control / "x.txt").write_text("x\n", encoding="utf-8")
    git(control, "add", "-A")
    git(control, "commit", "-q", "--no-verify", "-m", "x", env=IDENTITY)
    assert {p.name for p in (tmp_path / "control-spies").iterdir()} >= {
        "post-commit.env",
        "fsmonitor.env",
    }

    workspace = clone(fake_github.bare, tmp_path / "ws")
    spies = tmp_path / "spies"
    plant_spies(workspace, spies)
    recorder = ArgvRecorder()
    monkeypatch.setattr("planner.ci.branch.gitops.subprocess.run", recorder)
    env = {**os.environ, **SECRETS, "GITHUB_TOKEN": fake_github.token}
    repo = GitWorkspace(workspace, remote(fake_github), env=env)
    repo.prepare("planner/issue-1", "main")
    (workspace / "NEW.md").write_text("new\n", encoding="utf-8")
    assert repo.commit_all("planner: add NEW.md\n", BOT)
    assert repo.push() and fake_github.branch_exists("planner/issue-1")

    assert list(spies.iterdir()) == []
    header = remote(fake_github).auth_header
    encoded = header.rsplit(" ", 1)[1]  # the token as it travels: base64 in a Basic header
    ours = recorder.calls_in(workspace)  # subprocess.run is patched everywhere: not the fake's
    assert len(ours) >= 8
    for argv, seen in ours:
        assert not any(name in seen for name in (*SECRETS, "GITHUB_TOKEN"))
        carrying = {
            name for name, value in seen.items() if fake_github.token in value or encoded in value
        }
        if subcommand(argv) in ("fetch", "push"):  # the header, and only as git config
            assert carrying and all(seen[name] == header for name in carrying)
            assert all(name.startswith("GIT_CONFIG_VALUE_") for name in carrying)
        else:
            assert not carrying, argv
        assert not any(secret in "\n".join(seen.values()) for secret in SECRETS.values())
        assert "core.hooksPath=/dev/null" in argv and "core.fsmonitor=false" in argv
    [push] = [argv for argv, _ in ours if subcommand(argv) == "push"]
    assert "--no-verify" in push


def subcommand(argv: list[str]) -> str:
    """The git subcommand of `argv`, after any `-c name=value` options."""
    rest = argv[1:]
    while rest and rest[0] == "-c":
        rest = rest[2:]
    return rest[0]


def test_no_filter_or_diff_driver_from_the_repository_ever_runs(
    fake_github: FakeGitHub, workspace: Path, tmp_path: Path
) -> None:
    """Attack: drivers in the repository's config (planted by a pass, or there before it): a
    clean filter runs on `git add` and `git status`, a textconv on `git diff`; planner's git,
    root in a container, would run them. None runs, whenever it was defined; only git-lfs's own
    driver, exactly as `git lfs install` writes it, is left on."""
    spies = tmp_path / "spies"
    spies.mkdir()

    def driver(name: str) -> str:
        return f'sh -c "env > {spies}/{name}.env; cat"'

    git(workspace, "config", "filter.before.clean", driver("before"))
    git(workspace, "config", "filter.lfs.clean", "git-lfs clean -- %f")
    repo = GitWorkspace(workspace, remote(fake_github))
    repo.prepare("planner/issue-1", "main")
    # What the pass did, through an allowed command:
    git(workspace, "config", "filter.planted.clean", driver("planted"))
    git(workspace, "config", "filter.planted.process", driver("planted-process"))
    git(workspace, "config", "filter.before.process", driver("before-process"))
    git(workspace, "config", "diff.planted.textconv", driver("textconv"))
    attributes = "*.md filter=planted diff=planted\n*.txt filter=before\n"
    (workspace / ".gitattributes").write_text(attributes, encoding="utf-8")
    for name in ("NEW.md", "notes.txt"):
        (workspace / name).write_text(f"{name}\n", encoding="utf-8")
    repo._git("add", "-N", "NEW.md")
    assert "NEW.md" in repo._git("status", "--porcelain").stdout
    assert "+NEW.md" in repo._git("diff", "HEAD").stdout
    assert repo.commit_all("msg\n", BOT) and repo.push()
    assert sorted(p.name for p in spies.iterdir()) == []
    assert file_on(fake_github.bare, "planner/issue-1", "NEW.md") == "NEW.md"
    overrides = dict(repository_overrides(workspace))
    assert overrides["filter.planted.clean"] == "" and overrides["filter.before.clean"] == ""
    assert "filter.lfs.clean" not in overrides  # git-lfs's own stays
    git(workspace, "config", "filter.lfs.clean", driver("lfs-changed"))
    assert dict(repository_overrides(workspace))["filter.lfs.clean"] == ""
