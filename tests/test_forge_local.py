"""The local forge: issues, comments, labels and pull requests as files under .planner/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.ci.forges.base import TRACKING_MARKER
from planner.ci.forges.local import LocalForge
from planner.ci.job import run_for_event
from planner.ci.outcome import CiOutcome
from planner.core.errors import UserInputError
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import Step, reply_tool_calls
from tests.fake_forge import git
from tests.fake_forge.scenario import local_repository, model_config, one_file_plan, run_local_issue


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return local_repository(tmp_path / "repo", "# Add a changelog\n\nKeep a CHANGELOG.md.\n")


def run_local(repo: Path, tmp_path: Path, steps: list[Step], instruction: str = "") -> CiOutcome:
    return run_local_issue(repo, tmp_path / "history", steps, instruction)


def test_a_local_run_writes_comment_labels_branch_and_pull_request_files(
    repo: Path, tmp_path: Path
) -> None:
    outcome = run_local(repo, tmp_path, one_file_plan("CHANGELOG.md", "# Changes\n", "Changelog"))
    assert outcome.status == "completed"
    state = repo / ".planner"
    [comment_file] = sorted((state / "issues" / "3" / "comments").glob("*.json"))
    comment = json.loads(comment_file.read_text())
    assert comment["author"] == "planner" and TRACKING_MARKER in comment["body"]
    assert "- [x] **task_1**" in comment["body"]
    assert json.loads((state / "issues" / "3" / "labels.json").read_text()) == ["planner:done"]
    pull = json.loads((state / "pulls" / "1.json").read_text())
    assert (pull["head"], pull["base"], pull["draft"]) == ("planner/issue-3", "main", False)
    assert "Closes #3" in pull["body"]
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD") == "planner/issue-3"
    committed = git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    assert "CHANGELOG.md" in committed and not any(p.startswith(".planner") for p in committed)


def test_a_second_local_run_edits_the_same_comment(repo: Path, tmp_path: Path) -> None:
    run_local(repo, tmp_path, one_file_plan("CHANGELOG.md", "# Changes\n", "Changelog"))
    git(repo, "checkout", "-q", "main")
    (repo / ".planner" / "issues" / "3" / "comments" / "human.md").write_text(
        "Please also add NEWS.md", encoding="utf-8"
    )
    run_local(repo, tmp_path, one_file_plan("NEWS.md", "news\n", "News"), instruction="add NEWS.md")
    comments = sorted((repo / ".planner" / "issues" / "3" / "comments").iterdir())
    assert [p.name for p in comments] == ["0001.json", "human.md"]
    assert git(repo, "rev-list", "--count", "main..planner/issue-3") == "2"
    assert len(list((repo / ".planner" / "pulls").glob("*.json"))) == 1


def test_the_model_cannot_write_into_dot_planner(repo: Path, tmp_path: Path) -> None:
    steps = one_file_plan("CHANGELOG.md", "# Changes\n", "Changelog")
    steps[2] = reply_tool_calls(
        "execute", [("write_file", {"path": ".planner/pulls/1.json", "content": "{}"})]
    )
    steps.insert(4, steps[3])  # finishing having changed nothing is told once; it finishes again
    with ScriptedModelServer(steps) as model:
        run_for_event(
            "local",
            workspace=repo,
            config=model_config(
                model.base_url, tmp_path / "history", **{"planning.reflection.enabled": False}
            ),
            env={},
            event={"issue": "3", "actor": "me"},
        )
        model.assert_consumed()
        tool_reply = json.dumps(model.requests[3].body)
    assert "protected-path" in tool_reply
    assert not (repo / ".planner" / "pulls" / "1.json").exists()


def test_a_missing_issue_file_says_where_to_put_it(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    with pytest.raises(UserInputError, match=r"create .*\.planner/issues/9\.md"):
        LocalForge(root).get_issue(9)
