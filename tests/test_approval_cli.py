"""`planner plan-tool list|show|approve|execute` on a local tree: what a person at the terminal
sees and does with specs a pass left waiting."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.approval.setup import build_gate, build_plan_tool
from planner.approval.waiting import AwaitingApproval
from planner.cli.main import main
from planner.config import PlannerConfig
from planner.core.interfaces import ToolCall
from planner.run.runner import history_directory
from planner.tools.build import build_registry


@pytest.fixture
def waiting(tmp_path: Path) -> tuple[Path, str]:
    """A repository where a pass asked for approval of a1 (write notes.txt)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    config = PlannerConfig.model_validate({"approval": {"auto_approve": []}})
    history = history_directory(config, repo)
    registry = build_registry(config.tools, repo, (history,))
    tool = build_plan_tool(config, repo, history, "3", registry.call)
    write = ToolCall(id="c", name="write_file", arguments={"path": "notes.txt", "content": "hi\n"})
    with pytest.raises(AwaitingApproval):
        build_gate(tool, config, "repo#3").before_action("task_1", write)
    [record] = tool.records()
    return repo, record.plan.id


def test_list_approve_and_execute_write_exactly_the_waiting_spec(
    waiting: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    repo, plan_id = waiting
    assert main(["plan-tool", "--repo", str(repo), "list"]) == 0
    assert plan_id in capsys.readouterr().out
    assert main(["plan-tool", "--repo", str(repo), "approve", plan_id, "--select", "a1"]) == 0
    assert "approved" in capsys.readouterr().out
    assert not (repo / "notes.txt").exists()
    assert main(["plan-tool", "--repo", str(repo), "execute", plan_id]) == 0
    assert (repo / "notes.txt").read_text() == "hi\n"


@pytest.mark.parametrize("plan_id", ["../../etc", "plan-nope", ".hidden"])
def test_a_bad_plan_id_is_a_clear_error_not_a_traceback(
    waiting: tuple[Path, str], capsys: pytest.CaptureFixture[str], plan_id: str
) -> None:
    """`show ../../etc` raised ValueError from the store: a traceback instead of a message."""
    repo, _ = waiting
    assert main(["plan-tool", "--repo", str(repo), "show", plan_id]) != 0
    assert f"no plan {plan_id!r}" in capsys.readouterr().err
