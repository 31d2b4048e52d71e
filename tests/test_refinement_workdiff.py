"""The diff the final quality judgement reads (planner.run.workdiff): complete, read-only, and
safe against what a pass may plant in the repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

from planner.run.runner import exclude_from_git
from planner.run.workdiff import workspace_diff
from tests.plans import git_repo


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True)
    return done.stdout


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", message)


def test_changed_committed_and_untracked_files_are_in_the_diff(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "a.txt").write_text("committed on the branch\n", encoding="utf-8")
    commit(repo, "earlier pass")
    (repo / "README.md").write_text("# demo\n\nchanged\n", encoding="utf-8")
    (repo / "new.txt").write_text("brand new\n", encoding="utf-8")
    history = repo / "planning_history"
    history.mkdir()
    (history / "x.jsonl").write_text('{"type": "plan"}\n', encoding="utf-8")
    exclude_from_git(repo, history)

    text = workspace_diff(repo, base)()

    assert "+committed on the branch" in text  # commits since the base, not only the tree
    assert "+changed" in text
    assert "diff --git a/new.txt b/new.txt" in text and "+brand new" in text
    assert "planning_history" not in text and '"type": "plan"' not in text


def test_the_default_base_is_the_commit_when_the_pass_starts(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    diff = workspace_diff(repo)
    (repo / "README.md").write_text("# demo\nmore\n", encoding="utf-8")
    commit(repo, "during the pass")
    assert "+more" in diff()


def test_a_filter_driver_planted_during_the_pass_does_not_run(tmp_path: Path) -> None:
    """Attack: the pass (through an allowed command) defines a clean filter for every file;
    git would run it while diffing the working tree. The diff must not execute it."""
    repo = git_repo(tmp_path / "repo")
    diff = workspace_diff(repo)
    marker = tmp_path / "pwned"
    git(repo, "config", "filter.evil.clean", f"touch {marker}; cat")
    (repo / ".gitattributes").write_text("* filter=evil\n", encoding="utf-8")
    commit(repo, "attributes")  # committing ran the filter once; start clean
    marker.unlink(missing_ok=True)
    (repo / "README.md").write_text("# demo\nchanged\n", encoding="utf-8")

    text = diff()

    assert "+changed" in text
    assert not marker.exists(), "the diff ran a filter driver the pass planted"


def test_an_untracked_symlink_is_named_not_followed(tmp_path: Path) -> None:
    """Attack: a symlink to a secret outside the workspace would put the secret in a prompt."""
    repo = git_repo(tmp_path / "repo")
    secret = tmp_path / "secret.txt"
    secret.write_text("sk-very-secret\n", encoding="utf-8")
    (repo / "leak.txt").symlink_to(secret)
    text = workspace_diff(repo)()
    assert "diff --git a/leak.txt b/leak.txt" in text
    assert f"(symbolic link to {secret})" in text
    assert "sk-very-secret" not in text


def test_binary_and_huge_files_stay_small(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / "blob.bin").write_bytes(b"\x00\x01" * 1000)
    (repo / "huge.txt").write_text("x" * 100 + "\n" * 200_000, encoding="utf-8")
    text = workspace_diff(repo)()
    assert "(binary file)" in text
    assert len(text) < 70_000


def test_outside_a_repository_there_is_no_diff(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.txt").write_text("x\n", encoding="utf-8")
    assert workspace_diff(plain)() == ""
