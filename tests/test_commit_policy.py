"""Red team: the path rules bind the commit, whoever wrote the file.

Each attack writes a forbidden path with something the built-in tools cannot stop (an allowed
command, or a file written directly as an MCP server would), then lets planner commit and push.
Each test fails if the path reaches the pushed branch.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from planner.ci.branch.commit_policy import CommitRules, enforce_commit_policy
from planner.ci.branch.gitops import GitWorkspace, Identity
from planner.config import PlannerConfig, ToolsConfig
from planner.text.redaction import SECRETS, register_secret
from planner.tools.commands.run_command import CommandTool
from planner.tools.files.paths import PathPolicy, PathRefused
from planner.tools.sandbox.safe_env import git_environment
from tests.fake_forge import FakeGitHub, git
from tests.fake_forge.scenario import clone
from tests.test_forge_gitops import remote

BOT = Identity("planner", "planner@example.invalid")
BRANCH = "planner/issue-1"


@pytest.fixture
def repo(fake_github: FakeGitHub, tmp_path: Path) -> GitWorkspace:
    workspace = GitWorkspace(clone(fake_github.bare, tmp_path / "ws"), remote(fake_github))
    workspace.prepare(BRANCH, "main")
    return workspace


def pushed_files(fake: FakeGitHub) -> list[str]:
    return git(fake.bare, "ls-tree", "-r", "--name-only", BRANCH).splitlines()


def commit_and_push(repo: GitWorkspace, config: PlannerConfig | None = None) -> list[str]:
    repo.commit_rules = CommitRules.for_pass(config or PlannerConfig(), repo.root)
    repo.commit_all("planner: work (#1)\n", BOT)
    repo.push()
    return [refusal.describe() for refusal in repo.refused]


def write(root: Path, relative: str, text: str = "x\n") -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_a_read_only_git_command_cannot_get_a_workflow_pushed(
    repo: GitWorkspace, fake_github: FakeGitHub
) -> None:
    """Attack: `git log --output=.github/workflows/x.yml` (allowed as "read-only")."""
    tools = ToolsConfig(allowed_commands=["git log"])
    (repo.root / ".github" / "workflows").mkdir(parents=True)  # as most repositories have
    argv = ["git", "log", "--output=.github/workflows/x.yml", "--format=tformat:on: push"]
    assert CommandTool(repo.root, tools).call("run_command", {"argv": argv}).ok
    assert (repo.root / ".github/workflows/x.yml").exists()
    write(repo.root, "ok.txt")

    notes = commit_and_push(repo)

    assert ".github/workflows/x.yml" not in pushed_files(fake_github)
    assert "ok.txt" in pushed_files(fake_github)
    assert notes == ["'.github/workflows/x.yml' was not committed (rule no-workflow-edits)"]


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        (".github/workflows/ci.yml", "no-workflow-edits"),
        (".github/actions/setup/action.yml", "no-workflow-edits"),
        (".GitHub/Actions/setup/action.yml", "no-workflow-edits"),
        (".gitlab-ci.yml", "no-workflow-edits"),
        (".github/planner.yml", "protected-config"),
        (".planner/issues/1.md", "protected-path"),
        ("planning_history/abc.jsonl", "protected-path"),
    ],
)
def test_a_command_writing_a_protected_path_gets_nothing_pushed(
    repo: GitWorkspace, fake_github: FakeGitHub, path: str, rule: str
) -> None:
    """Attack: a command or MCP server writes a path the built-in tools refuse."""
    write(repo.root, ".gitignore", "!/planning_history/\n!/.planner/\n")  # un-ignore the state
    write(repo.root, path, "on: push\n")

    notes = commit_and_push(repo)

    assert path not in pushed_files(fake_github)
    assert f"{path!r} was not committed (rule {rule})" in notes
    assert ".gitignore" in pushed_files(fake_github)  # an ordinary change still goes through


def test_the_built_in_tools_refuse_the_composite_actions_too(tmp_path: Path) -> None:
    """Attack: write_file on .github/actions/*/action.yml, which workflows run with secrets."""
    policy = PathPolicy.create(tmp_path)
    with pytest.raises(PathRefused, match="no-workflow-edits"):
        policy.resolve(".github/actions/setup/action.yml", for_write=True)


def test_allow_workflow_edits_lets_workflows_through(
    repo: GitWorkspace, fake_github: FakeGitHub
) -> None:
    write(repo.root, ".github/workflows/ci.yml", "on: push\n")
    config = PlannerConfig.model_validate({"tools": {"allow_workflow_edits": True}})
    assert commit_and_push(repo, config) == []
    assert ".github/workflows/ci.yml" in pushed_files(fake_github)


def test_a_custom_history_directory_stays_out_even_when_un_ignored(
    repo: GitWorkspace, fake_github: FakeGitHub
) -> None:
    """Attack: a .gitignore negation publishing every issue's history."""
    config = PlannerConfig.model_validate({"planning": {"history": {"directory": "state/h"}}})
    write(repo.root, ".gitignore", "!state/\n")
    write(repo.root, "state/h/1.jsonl", '{"type":"plan"}\n')
    notes = commit_and_push(repo, config)
    assert "state/h/1.jsonl" not in pushed_files(fake_github)
    assert notes == ["'state/h/1.jsonl' was not committed (rule protected-path)"]


def test_symlinks_out_of_the_tree_are_not_committed(
    repo: GitWorkspace, fake_github: FakeGitHub
) -> None:
    """Attack: a symlink to /etc/passwd, to ../.., or into .git, to be followed by a later job."""
    os.symlink("/etc/passwd", repo.root / "passwd")
    os.symlink("../../outside", repo.root / "up")
    (repo.root / "docs").mkdir()
    os.symlink("../.git/config", repo.root / "docs" / "config")
    os.symlink("README.md", repo.root / "readme-link")

    notes = commit_and_push(repo)

    files = pushed_files(fake_github)
    assert "readme-link" in files
    assert not {"passwd", "up", "docs/config"} & set(files)
    assert sorted(notes) == [
        f"{name!r} was not committed (rule inside-workspace)"
        for name in ("docs/config", "passwd", "up")
    ]


def test_a_file_holding_a_known_secret_is_not_committed(
    repo: GitWorkspace, fake_github: FakeGitHub
) -> None:
    """Attack: a tool writes the key (reversed, to pass a plain search) into a committed file."""
    secret = "opaqueModelKey-7f3a9c2e1b4d"
    register_secret(secret)
    try:
        write(repo.root, "notes.txt", f"key: {secret[::-1]}\n")
        notes = commit_and_push(repo)
    finally:
        SECRETS.clear()
    assert "notes.txt" not in pushed_files(fake_github)
    assert notes == ["'notes.txt' was not committed (rule no-secrets)"]


def test_deleting_a_workflow_is_refused_too(repo: GitWorkspace, fake_github: FakeGitHub) -> None:
    """Attack: removing the repository's own CI (its checks) through a command."""
    fake_github.push_branch("main", ".github/workflows/ci.yml", "on: push\n")
    repo = GitWorkspace(clone(fake_github.bare, repo.root.parent / "ci"), repo.remote)
    repo.prepare(BRANCH, "main")
    (repo.root / ".github/workflows/ci.yml").unlink()
    write(repo.root, "ok.txt")
    notes = commit_and_push(repo)
    assert ".github/workflows/ci.yml" in pushed_files(fake_github)
    assert notes == ["'.github/workflows/ci.yml' was not committed (rule no-workflow-edits)"]


def test_non_utf8_file_names_are_checked_and_shown_escaped(
    repo: GitWorkspace, fake_github: FakeGitHub
) -> None:
    """A file name that is not UTF-8 neither crashes the check nor slips past it."""
    root = os.fsencode(repo.root)
    with open(os.path.join(root, b"plain-\xff.txt"), "wb") as handle:
        handle.write(b"fine\n")
    os.makedirs(os.path.join(root, b".github", b"workflows"))
    with open(os.path.join(root, b".github", b"workflows", b"w\xfe.yml"), "wb") as handle:
        handle.write(b"on: push\n")

    notes = commit_and_push(repo)

    listed = git(
        fake_github.bare, "-c", "core.quotePath=true", "ls-tree", "-r", "--name-only", BRANCH
    )
    assert '"plain-\\377.txt"' in listed and "workflows" not in listed
    assert notes == ["'.github/workflows/w\\\\xfe.yml' was not committed (rule no-workflow-edits)"]


def test_the_check_alone_unstages_and_keeps_the_working_tree(tmp_path: Path) -> None:
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "a.txt")
    git(root, "add", "a.txt")
    git(root, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "a")
    write(root, ".gitlab-ci.yml", "job: {script: [env]}\n")
    git(root, "add", "-A")
    refused = enforce_commit_policy(root, git_environment(os.environ))
    assert [(r.path, r.rule) for r in refused] == [(".gitlab-ci.yml", "no-workflow-edits")]
    assert git(root, "diff", "--cached", "--name-only") == ""
    assert (root / ".gitlab-ci.yml").exists()  # the file is left for a person to see
