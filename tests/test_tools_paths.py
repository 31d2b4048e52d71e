"""Path safety: every escape is refused with the rule named, through the real tools."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from planner.config import ToolsConfig
from planner.tools.files.workspace import WorkspaceTools


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "workflows" / "ci.yml").write_text("on: push\n", encoding="utf-8")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n", encoding="utf-8")
    (root / "planning_history").mkdir()
    (root / "planning_history" / "issue-1.jsonl").write_text("{}\n", encoding="utf-8")
    (tmp_path / "outside.txt").write_text("secret outside\n", encoding="utf-8")
    return root


def tools_for(root: Path, **config: object) -> WorkspaceTools:
    return WorkspaceTools(
        root, ToolsConfig.model_validate(config), protected=(root / "planning_history",)
    )


def refusal(tools: WorkspaceTools, name: str, **arguments: object) -> str:
    result = tools.call(name, dict(arguments))
    assert not result.ok, f"{name}({arguments}) was allowed: {result.content[:200]}"
    assert result.error is not None
    return result.error


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("../outside.txt", "no-parent-segments"),
        ("src/../../outside.txt", "no-parent-segments"),
        ("..\\outside.txt", "no-parent-segments"),
        ("/etc/passwd", "no-absolute-paths"),
        ("C:/Windows/win.ini", "no-absolute-paths"),
        ("%2e%2e/outside.txt", "no-encoded-escapes"),
        ("%252e%252e/outside.txt", "no-encoded-escapes"),
        ("%2Fetc%2Fpasswd", "no-encoded-escapes"),
        ("%2egit/config", "no-encoded-escapes"),
        ("src/app.py\0.txt", "no-nul-bytes"),
        (".git/config", "no-git-dir"),
        (".GIT/config", "no-git-dir"),
        (".Git./config", "no-git-dir"),
        ("src/.git/hooks/pre-commit", "no-git-dir"),
        ("planning_history/issue-1.jsonl", "protected-path"),
        ("PLANNING_HISTORY/issue-1.jsonl", "protected-path"),
    ],
)
def test_reads_that_escape_are_refused_naming_the_rule(
    workspace: Path, path: str, rule: str
) -> None:
    error = refusal(tools_for(workspace), "read_file", path=path)
    assert f"rule '{rule}'" in error


def test_symlink_out_of_the_tree_is_refused_for_reading_and_writing(workspace: Path) -> None:
    os.symlink(workspace.parent / "outside.txt", workspace / "src" / "link.txt")
    os.symlink(workspace.parent, workspace / "escape")
    tools = tools_for(workspace)
    assert "rule 'inside-workspace'" in refusal(tools, "read_file", path="src/link.txt")
    assert "rule 'inside-workspace'" in refusal(tools, "read_file", path="escape/outside.txt")
    error = refusal(tools, "write_file", path="escape/new.txt", content="x")
    assert "rule 'inside-workspace'" in error
    assert not (workspace.parent / "new.txt").exists()
    assert (workspace.parent / "outside.txt").read_text() == "secret outside\n"


def test_symlink_into_git_dir_is_refused(workspace: Path) -> None:
    os.symlink(workspace / ".git" / "config", workspace / "innocent.txt")
    error = refusal(tools_for(workspace), "write_file", path="innocent.txt", content="[x]")
    assert "rule 'no-git-dir'" in error
    assert (workspace / ".git" / "config").read_text() == "[core]\n"


def test_symlink_loop_is_refused(workspace: Path) -> None:
    os.symlink(workspace / "loop-b", workspace / "loop-a")
    os.symlink(workspace / "loop-a", workspace / "loop-b")
    assert "rule 'inside-workspace'" in refusal(tools_for(workspace), "read_file", path="loop-a")


@pytest.mark.parametrize(
    "path", [".github/workflows/ci.yml", ".github/workflows/new.yml", ".GitHub/Workflows/x.yml"]
)
def test_workflow_writes_are_refused_unless_allowed(workspace: Path, path: str) -> None:
    error = refusal(tools_for(workspace), "write_file", path=path, content="on: pull_request\n")
    assert "rule 'no-workflow-edits'" in error
    assert "tools.allow_workflow_edits" in error
    allowed = tools_for(workspace, allow_workflow_edits=True)
    assert allowed.call("write_file", {"path": path, "content": "on: x\n"}).ok


def test_workflow_files_stay_readable_and_gitlab_ci_is_guarded_too(workspace: Path) -> None:
    tools = tools_for(workspace)
    assert tools.call("read_file", {"path": ".github/workflows/ci.yml"}).content == "on: push\n"
    error = refusal(tools, "write_file", path=".gitlab-ci.yml", content="stages: []\n")
    assert "rule 'no-workflow-edits'" in error


def test_edit_file_is_guarded_like_write_file(workspace: Path) -> None:
    tools = tools_for(workspace)
    edits = [{"oldText": "push", "newText": "pull_request"}]
    error = refusal(tools, "edit_file", path=".github/workflows/ci.yml", edits=edits)
    assert "rule 'no-workflow-edits'" in error
    error = refusal(
        tools, "edit_file", path=".git/config", edits=[{"oldText": "c", "newText": "d"}]
    )
    assert "rule 'no-git-dir'" in error
    assert (workspace / ".github" / "workflows" / "ci.yml").read_text() == "on: push\n"


def test_write_size_cap_is_a_named_rule(workspace: Path) -> None:
    tools = tools_for(workspace, max_write_bytes=10)
    error = refusal(tools, "write_file", path="big.txt", content="x" * 11)
    assert "rule 'max-write-bytes'" in error
    assert "11 bytes" in error
    assert not (workspace / "big.txt").exists()


def test_write_protected_file_is_readable_but_not_writable(workspace: Path) -> None:
    (workspace / ".mcp.json").write_text('{"mcpServers": {}}', encoding="utf-8")
    tools = WorkspaceTools(workspace, ToolsConfig(), write_protected=(workspace / ".mcp.json",))
    assert tools.call("read_file", {"path": ".mcp.json"}).ok
    error = refusal(tools, "write_file", path=".mcp.json", content="{}")
    assert "rule 'protected-path'" in error


def test_literal_percent_names_still_work(workspace: Path) -> None:
    tools = tools_for(workspace)
    assert tools.call("write_file", {"path": "docs/100%25 done.md", "content": "yes"}).ok
    assert (workspace / "docs" / "100%25 done.md").read_text() == "yes"
    assert tools.call("read_file", {"path": "docs/100%25 done.md"}).content == "yes"


def test_listing_hides_git_and_planner_state(workspace: Path) -> None:
    listing = tools_for(workspace).call("list_directory", {"path": "."})
    assert listing.ok
    assert listing.content.splitlines() == ["[DIR] .github", "[DIR] src"]
