"""The approval gate as a phase of the pass: at pass start it runs what people approved and
hands rejections back; before each tool call it tells the gate which task is asking; before
completion (plan mode) it asks for the staged changes. The gate itself sits in front of the tool
registry (ToolRegistry.guard), so no tool call of any phase can bypass it."""

from __future__ import annotations

from typing import Any

from planner.approval.gate import ApprovalGate
from planner.core.interfaces import ToolCall, ToolResult
from planner.engine.context import PassContext
from planner.engine.phase import Phase


class ApprovalPhase(Phase):
    name = "approval"

    def __init__(self, gate: ApprovalGate) -> None:
        self.gate = gate

    def start(self, run: PassContext) -> None:
        instruction = run.issue.instruction.strip()
        if instruction and self.gate.waiting():
            rejected = self.gate.reject_waiting("a person on the issue", instruction)
            run.store.append("approval_superseded", spec_ids=rejected, by=instruction[:500])
        self.gate.resume(_Port(run))

    def before_action(self, run: PassContext, task_id: str, call: ToolCall) -> ToolResult | None:
        self.gate.current_task = task_id
        return None

    def before_completion(self, run: PassContext) -> None:
        self.gate.before_completion()

    def unmade_changes(self, run: PassContext) -> set[str]:
        return self.gate.unmade_changes()


class _Port:
    """What the gate hands back, recorded in the pass like any action."""

    def __init__(self, run: PassContext) -> None:
        self.run = run

    def record_action(self, task_id: str, call: ToolCall, result: ToolResult) -> None:
        self.run.record_action(task_id, call, result)

    def append(self, entry_type: str, **fields: Any) -> None:
        self.run.store.append(entry_type, **fields)

    def reopen_task(self, task_id: str) -> None:
        if task_id and self.run.state().task_status.get(task_id) in ("completed", "failed"):
            self.run.store.append("task", task_id=task_id, status="in_progress")
