"""The gate between the model's tool calls and the workspace: only approved specs run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planner.approval.gate import ApprovalGate
from planner.approval.models import SpecSelection
from planner.approval.setup import build_gate, build_plan_tool
from planner.approval.waiting import AwaitingApproval
from planner.config import PlannerConfig
from planner.core.interfaces import ToolCall, ToolResult
from planner.tools.build import build_registry


class Port:
    """Records what the gate hands back to the pass."""

    def __init__(self) -> None:
        self.actions: list[tuple[str, str, ToolResult]] = []
        self.entries: list[tuple[str, dict[str, Any]]] = []
        self.reopened: list[str] = []

    def record_action(self, task_id: str, call: ToolCall, result: ToolResult) -> None:
        self.actions.append((task_id, call.name, result))

    def append(self, entry_type: str, **fields: Any) -> None:
        self.entries.append((entry_type, fields))

    def reopen_task(self, task_id: str) -> None:
        self.reopened.append(task_id)


def gate_for(tmp_path: Path, **approval: Any) -> ApprovalGate:
    repo = tmp_path / "repo"
    repo.mkdir(exist_ok=True)
    config = PlannerConfig.model_validate(
        {"approval": approval, "tools": {"allowed_commands": ["echo"]}}
    )
    history = tmp_path / "history"
    registry = build_registry(config.tools, repo, (history,))
    config_file = repo / ".github" / "planner.yml"
    tool = build_plan_tool(config, repo, history, "7", registry.call, (config_file,))
    return build_gate(tool, config, "issue#7")


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id="c1", name=name, arguments=arguments)


def test_a_low_risk_write_runs_at_once_through_plan_tool(tmp_path: Path) -> None:
    gate = gate_for(tmp_path)
    result = gate.before_action("task_1", call("write_file", path="a.txt", content="hi\n"))
    assert result is not None and result.ok and "created a.txt" in result.content
    assert (tmp_path / "repo" / "a.txt").read_text() == "hi\n"
    [record] = gate.tool.records()
    assert record.state.status == "completed"
    assert record.state.approvals[0].approver == "planner"


def test_read_only_tools_are_left_to_the_pass(tmp_path: Path) -> None:
    gate = gate_for(tmp_path)
    assert gate.before_action("task_1", call("read_file", path="a.txt")) is None
    assert gate.before_action("task_1", call("finish_task", status="completed")) is None
    assert gate.tool.records() == []


def test_a_high_risk_overwrite_pauses_with_a_preview_and_writes_nothing(tmp_path: Path) -> None:
    gate = gate_for(tmp_path, large_file_bytes=10)
    target = tmp_path / "repo" / "big.txt"
    target.write_text("0123456789abcdef\n")
    with pytest.raises(AwaitingApproval) as waiting:
        gate.before_action("task_1", call("write_file", path="big.txt", content="short\n"))
    assert target.read_text() == "0123456789abcdef\n"
    assert "a1" in waiting.value.markdown and "⚠️ high" in waiting.value.markdown
    assert "-0123456789abcdef" in waiting.value.markdown and "+short" in waiting.value.markdown
    assert [s.id for s in gate.waiting()] == ["a1"]


def test_after_approval_the_next_run_executes_exactly_the_previewed_content(
    tmp_path: Path,
) -> None:
    gate = gate_for(tmp_path, large_file_bytes=10)
    target = tmp_path / "repo" / "big.txt"
    target.write_text("0123456789abcdef\n")
    with pytest.raises(AwaitingApproval):
        gate.before_action("task_1", call("write_file", path="big.txt", content="approved\n"))
    [record] = gate.tool.records()
    gate.tool.approve(record.plan.id, "octocat", SpecSelection(ids=["a1"]))
    port = Port()
    gate.resume(port)
    assert target.read_text() == "approved\n"
    assert [(t, n, r.ok) for t, n, r in port.actions] == [("task_1", "write_file", True)]
    gate.resume(port)  # a second resume hands nothing back twice
    assert len(port.actions) == 1


def test_a_rejected_spec_reaches_the_model_as_a_failed_action_with_the_reason(
    tmp_path: Path,
) -> None:
    gate = gate_for(tmp_path, auto_approve=[])
    with pytest.raises(AwaitingApproval):
        gate.before_action("task_2", call("write_file", path="x.py", content="x = 1\n"))
    [record] = gate.tool.records()
    gate.tool.reject(record.plan.id, "octocat", ["a1"], "call it y.py")
    port = Port()
    gate.resume(port)
    [(task, name, result)] = port.actions
    assert (task, name, result.ok) == ("task_2", "write_file", False)
    assert "call it y.py" in str(result.error)
    assert port.reopened == ["task_2"]
    assert not (tmp_path / "repo" / "x.py").exists()


def test_still_unanswered_requests_keep_the_pass_waiting(tmp_path: Path) -> None:
    gate = gate_for(tmp_path, auto_approve=["low"])
    (tmp_path / "repo" / "f.txt").write_text("a\n")
    with pytest.raises(AwaitingApproval):
        gate.before_action("task_1", call("write_file", path="f.txt", content="b\n"))
    with pytest.raises(AwaitingApproval, match="still waiting"):
        gate.resume(Port())


def test_edit_file_becomes_a_spec_of_the_whole_new_content(tmp_path: Path) -> None:
    gate = gate_for(tmp_path, auto_approve=[])
    (tmp_path / "repo" / "m.py").write_text("a = 1\nb = 2\n")
    edit = call("edit_file", path="m.py", edits=[{"oldText": "b = 2", "newText": "b = 3"}])
    with pytest.raises(AwaitingApproval):
        gate.before_action("task_1", edit)
    [spec] = gate.waiting()
    assert (
        spec.content == "a = 1\nb = 3\n" and spec.preflight.diff_summary == "overwrite: +1 -1 lines"
    )
    bad = call("edit_file", path="m.py", edits=[{"oldText": "zzz", "newText": "y"}])
    failed = gate.before_action("task_1", bad)
    assert failed is not None and not failed.ok and "is not in the file" in str(failed.error)


def test_a_command_off_the_allow_list_is_refused_not_asked(tmp_path: Path) -> None:
    """Attack: the model asks for `curl` hoping a tired maintainer approves it; it is refused
    before any approval is requested."""
    gate = gate_for(tmp_path)
    result = gate.before_action("task_1", call("run_command", argv=["curl", "http://x"]))
    assert result is not None and not result.ok and "command-allow-list" in str(result.error)
    assert gate.waiting() == []


def test_an_allowed_command_runs_as_an_approved_spec(tmp_path: Path) -> None:
    gate = gate_for(tmp_path)
    result = gate.before_action("task_1", call("run_command", argv=["echo", "hello"]))
    assert result is not None and result.ok and "hello" in result.content


def test_plan_mode_stages_every_change_and_asks_once_before_anything_runs(
    tmp_path: Path,
) -> None:
    gate = gate_for(tmp_path, mode="plan")
    staged = gate.before_action("task_1", call("write_file", path="a.txt", content="one\n"))
    assert staged is not None and staged.ok and "staged as a1" in staged.content
    read = gate.before_action("task_2", call("read_file", path="a.txt"))
    assert read is not None and "one" in read.content
    gate.before_action(
        "task_2", call("edit_file", path="a.txt", edits=[{"oldText": "one", "newText": "two"}])
    )
    assert not (tmp_path / "repo" / "a.txt").exists()
    with pytest.raises(AwaitingApproval) as waiting:
        gate.before_completion()
    assert "a1" in waiting.value.markdown and "a2" in waiting.value.markdown
    [record] = gate.tool.records()
    gate.tool.approve(record.plan.id, "octocat", SpecSelection(all=True))
    port = Port()
    gate.resume(port)
    assert (tmp_path / "repo" / "a.txt").read_text() == "two\n"
    assert [r.ok for _, _, r in port.actions] == [True, True]
    gate.before_completion()  # nothing waits any more


def staged_a1_a2(tmp_path: Path) -> ApprovalGate:
    """plan mode: two staged writes, the pass ended asking for both."""
    gate = gate_for(tmp_path, mode="plan")
    gate.before_action("task_1", call("write_file", path="a.txt", content="one\n"))
    gate.before_action("task_2", call("write_file", path="b.txt", content="two\n"))
    with pytest.raises(AwaitingApproval):
        gate.before_completion()
    return gate


def test_rejecting_one_staged_spec_keeps_the_other_waiting(tmp_path: Path) -> None:
    """`/planner reject a2 …` on a two-spec plan sent the whole plan back to `proposed`, where
    nothing counts as waiting: a1 was never asked about again, never ran, and the pass went on
    to complete (the model had been told to continue as if a1 had run)."""
    gate = staged_a1_a2(tmp_path)
    [record] = gate.tool.records()
    gate.tool.reject(record.plan.id, "octocat", ["a2"], "no b.txt")
    port = Port()
    with pytest.raises(AwaitingApproval, match="still waiting"):
        gate.resume(port)
    assert [s.id for s in gate.waiting()] == ["a1"]
    assert [(t, r.ok) for t, _, r in port.actions] == [("task_2", False)]


def test_a_rejection_next_to_an_approval_still_reaches_the_model(tmp_path: Path) -> None:
    """approve a1, then reject a2: the plan became `approved`, a1 ran, and a2's rejection was
    never handed back (only `proposed` plans were searched for rejections)."""
    gate = staged_a1_a2(tmp_path)
    [record] = gate.tool.records()
    gate.tool.approve(record.plan.id, "octocat", SpecSelection(ids=["a1"]))
    gate.tool.reject(record.plan.id, "octocat", ["a2"], "no b.txt")
    port = Port()
    gate.resume(port)
    assert (tmp_path / "repo" / "a.txt").read_text() == "one\n"
    assert not (tmp_path / "repo" / "b.txt").exists()
    outcomes = [(t, r.ok, "no b.txt" in str(r.error)) for t, _, r in port.actions]
    assert outcomes == [("task_1", True, False), ("task_2", False, True)]
    assert port.reopened == ["task_2"]


def test_a_symlink_retargeted_after_approval_cannot_redirect_the_approved_write(
    tmp_path: Path,
) -> None:
    """Attack: the person approves a write to docs/current/index.md, previewed as a change of
    docs/v1/index.md (docs/current -> v1). Before it runs the link is pointed at v2. The spec
    ran the model's raw call again, so the write landed in docs/v2/index.md, a file nobody
    previewed, and the preflight check (which looked at v1) saw nothing change."""
    gate = gate_for(tmp_path, auto_approve=[])
    docs = tmp_path / "repo" / "docs"
    for version in ("v1", "v2"):
        (docs / version).mkdir(parents=True)
        (docs / version / "index.md").write_text(f"{version}\n")
    (docs / "current").symlink_to("v1")
    write = call("write_file", path="docs/current/index.md", content="v1\nnew\n")
    with pytest.raises(AwaitingApproval) as waiting:
        gate.before_action("task_1", write)
    assert "docs/v1/index.md" in waiting.value.markdown
    [record] = gate.tool.records()
    gate.tool.approve(record.plan.id, "octocat", SpecSelection(ids=["a1"]))
    (docs / "current").unlink()
    (docs / "current").symlink_to("v2")
    gate.resume(Port())
    assert (docs / "v2" / "index.md").read_text() == "v2\n"
    assert (docs / "v1" / "index.md").read_text() == "v1\nnew\n"


def test_new_guidance_rejects_only_what_a_person_was_asked_about(tmp_path: Path) -> None:
    """A refused spec (here a command off the allow-list) stays `pending` in its plan. New
    guidance rejected it too, so the model was told a person rejected a command it had already
    been told was refused, and the rejection note named specs nobody was shown."""
    gate = gate_for(tmp_path, auto_approve=[])
    refused = gate.before_action("task_1", call("run_command", argv=["rm", "-rf", "."]))
    assert refused is not None and not refused.ok
    with pytest.raises(AwaitingApproval):
        gate.before_action("task_1", call("write_file", path="x.py", content="x = 1\n"))
    assert gate.reject_waiting("octocat", "use y.py") == ["a2"]
    port = Port()
    gate.resume(port)
    assert [(t, r.ok) for t, _, r in port.actions] == [("task_1", False)]
    assert "a2" in str(port.actions[0][2].error)


def test_mode_off_still_stops_at_high_risk(tmp_path: Path) -> None:
    gate = gate_for(tmp_path, mode="off", auto_approve=[], large_file_bytes=5)
    created = gate.before_action("t", call("write_file", path="n.txt", content="ten bytes\n"))
    assert created is not None and created.ok  # medium and low run without a person
    with pytest.raises(AwaitingApproval):
        gate.before_action("t", call("write_file", path="n.txt", content="overwrites 10 bytes"))


def test_planner_config_is_never_written_even_with_approval(tmp_path: Path) -> None:
    """Attack: the model rewrites planner's own config to widen the next pass's rights."""
    gate = gate_for(tmp_path)
    result = gate.before_action("t", call("write_file", path=".github/planner.yml", content="x"))
    assert result is not None and not result.ok and "protected-path" in str(result.error)
    assert not (tmp_path / "repo" / ".github" / "planner.yml").exists()


def test_no_write_reaches_the_workspace_around_the_gate(tmp_path: Path) -> None:
    """Attack: code that calls the registry directly (a phase retrying an action, a replayed
    call) instead of going through the pass's hooks still meets the gate."""
    from planner.approval.setup import install_gate
    from planner.memory.history import PlanningHistoryStore

    repo = tmp_path / "repo"
    repo.mkdir()
    config = PlannerConfig.model_validate({"approval": {"auto_approve": []}})
    store = PlanningHistoryStore(tmp_path / "history", "octo/repo", "7")
    registry = build_registry(config.tools, repo, (store.directory,))
    install_gate(config, repo, store, registry, ())
    with pytest.raises(AwaitingApproval):
        registry.call("write_file", {"path": "x.txt", "content": "unapproved"})
    assert not (repo / "x.txt").exists()
    listed = registry.call("list_directory", {"path": "."})
    assert listed.ok  # reads are not specs
