"""A spec executed at the terminal reaches the next pass (issue 25, item 3): a local run waits
for approval, the person approves and executes it with `planner plan-tool`, and the next
`planner run` on the same working tree reports the outcome to the pass and goes on."""

from __future__ import annotations

import json
from pathlib import Path

from planner.approval.store import PlanStore
from planner.cli.main import main
from planner.memory.history import read_entries
from planner.testing.steps import Step
from tests.fake_forge import git
from tests.fake_forge.scenario import local_repository, one_file_plan, run_local_issue

NEW_README = "# repo\n\nRun the tests with pytest.\n"
LARGE = {"large_file_bytes": 5}  # README.md (7 bytes) is then a large file: high risk
HIGH = {"approval.large_file_bytes": 5}


def repository(tmp_path: Path) -> Path:
    return local_repository(tmp_path / "repo", "# Document pytest\n\nSay how to test.\n")


def run_local(repo: Path, history: Path, steps: list[Step]) -> str:
    return run_local_issue(repo, history, steps, **HIGH).status


def test_a_spec_executed_with_plan_tool_is_reported_to_the_next_pass(tmp_path: Path) -> None:
    repo, history = repository(tmp_path), tmp_path / "history"
    config = tmp_path / "planner.yml"
    settings = {"planning": {"history": {"directory": str(history)}}, "approval": LARGE}
    config.write_text(json.dumps(settings), encoding="utf-8")  # JSON is YAML
    steps = one_file_plan("README.md", NEW_README, "Document pytest")
    assert run_local(repo, history, steps[:3]) == "needs_human"
    [ref] = PlanStore(history).index()
    for operation in ("approve", "execute"):
        argv = ["plan-tool", "--repo", str(repo), "--config", str(config), operation, ref.id]
        assert main(argv) == 0
    assert (repo / "README.md").read_text(encoding="utf-8") == NEW_README

    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""  # committed
    assert run_local(repo, history, steps[3:]) == "completed"
    assert git(repo, "show", "planner/issue-3:README.md") + "\n" == NEW_README
    [path] = history.glob("*.jsonl")
    executed = [e for e in read_entries(path) if e["type"] == "approval_executed"]
    assert [(e["spec_id"], e["ok"]) for e in executed] == [("a1", True)]
