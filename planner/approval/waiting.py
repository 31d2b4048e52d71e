"""What waits for a person at the approval gate: the stop that ends a pass waiting
(AwaitingApproval), what the gate needs from the pass (GatePort) and from where people answer
(ApprovalWitness), the words its notes start with, and the changes approved or pending that are
not made yet (unmade_tasks, unmade_in_history)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from planner.approval.models import ActionSpecExt, Approval, PlanRecord, PlanStatus
from planner.approval.store import PlanStore
from planner.approval.tool import RUNNABLE
from planner.core.interfaces import ToolCall, ToolResult
from planner.memory.history import PlanningHistoryStore
from planner.outcome.flow import StopPass

ROLLED_BACK = "Rolled back without asking anyone (planning is off, so no pass waits for approval)"
"""Starts every note about a change undone where a pass cannot wait: the CI layer shows these
notes in the tracking comment whatever the pass's status (planner.ci.durability.durable)."""
HELD: tuple[PlanStatus, ...] = ("proposed", "pending_review", *RUNNABLE)
"""Plans whose pending or approved specs are changes not made yet."""


class GatePort(Protocol):
    """What the gate needs from the pass."""

    def record_action(self, task_id: str, call: ToolCall, result: ToolResult) -> None: ...

    def append(self, entry_type: str, **fields: Any) -> None: ...

    def reopen_task(self, task_id: str) -> None: ...


class ApprovalWitness(Protocol):
    """Where people answer (the forge): an approval found only in planner's history, which a
    program a pass started may have written, runs nothing."""

    def confirm(self, approval: Approval, spec: ActionSpecExt) -> str:
        """'' when the forge shows `approval` of exactly `spec` (by its author, who may approve,
        after `spec` was shown, naming it); otherwise why not, for people."""
        ...

    def was_shown(self, spec: ActionSpecExt) -> bool:
        """Whether exactly `spec` was shown to people for approval."""
        ...


SYSTEM_APPROVER = "planner"
"""What the gate approves itself (by policy, in the call that asked for it)."""
NOT_CONFIRMED = "Not run"


class AwaitingApproval(StopPass):
    """The pass ends waiting for a person (needs_human). `markdown` asks and previews; the
    forge layer shows it (rendered again from PlanTool), the pass result carries one line per
    spec as questions."""

    def __init__(self, reason: str, markdown: str, waiting: list[ActionSpecExt]) -> None:
        asks = [f"approve or reject {s.id}: {s.description} ({s.risk} risk)" for s in waiting]
        super().__init__("needs_human", reason, [], asks)
        self.markdown = markdown


def unmade_tasks(records: Iterable[PlanRecord]) -> set[str]:
    """The tasks of `records` (plans still held) with a change pending or approved, not run."""
    return {
        spec.task_id
        for record in records
        for spec in record.state.action_specs
        if spec.task_id and spec.outcome in ("pending", "approved")
    }


def unmade_in_history(journal: PlanningHistoryStore) -> set[str]:
    """What `ApprovalGate.unmade_changes` says, read after the pass from the issue's history
    (its plan files, else their copies in the JSONL history): for what is shown of the plan
    outside a pass (the job summary, `planner plan --status`)."""
    store = PlanStore(journal.directory, journal)
    refs = [ref for ref in store.index() if ref.issue == journal.issue_id and ref.status in HELD]
    loaded = (store.load(ref.id) for ref in refs)
    return unmade_tasks(r for r in loaded if r is not None and r.state.status in HELD)
