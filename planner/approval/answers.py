"""A person's `/planner approve …` or `/planner reject …` applied to the waiting specs.

The forge layer calls this before the pass, with the login it already checked for write access;
the pass that follows executes what was approved and hands rejections back to the model.
"""

from __future__ import annotations

from planner.approval.commands import Approve, Reject
from planner.approval.models import ActionSpecExt, PlanRecord, SpecSelection
from planner.approval.store import spec_number
from planner.approval.tool import PlanTool


def apply_answer(
    tool: PlanTool,
    answer: Approve | Reject,
    approver: str,
    *,
    comment_id: str = "",
    thread: int | None = None,
) -> str:
    """Record the answer; the returned line says what happened (for the tracking comment).
    `comment_id` on `thread`: where it was given, kept with an approval."""
    waiting = _waiting_by_plan(tool)
    known = {spec_id for ids in waiting.values() for spec_id in ids}
    if not known:
        return "Nothing is waiting for approval."
    wanted = list(answer.ids) or sorted(known, key=spec_number)
    unknown = [spec_id for spec_id in wanted if spec_id not in known]
    chosen = [spec_id for spec_id in wanted if spec_id in known]
    for plan_id, ids in waiting.items():
        mine = [spec_id for spec_id in chosen if spec_id in ids]
        if not mine:
            continue
        if isinstance(answer, Approve):
            selection = SpecSelection(ids=mine)
            tool.approve(plan_id, approver, selection, comment_id=comment_id, thread=thread)
        else:
            tool.reject(plan_id, approver, mine, answer.reason)
    verb = "approved" if isinstance(answer, Approve) else "rejected"
    line = f"{approver} {verb} {', '.join(chosen)}." if chosen else ""
    if unknown:
        line += f" Not waiting for approval: {', '.join(unknown)}."
    return line.strip()


def waiting_specs(tool: PlanTool) -> list[ActionSpecExt]:
    """Specs a person was asked about and has not answered yet, oldest first."""
    return [
        spec
        for record in tool.records(("pending_review",))
        if record.state.approval_requests
        for spec in record.state.action_specs
        if spec.outcome == "pending" and spec.needs_person
    ]


def _waiting_by_plan(tool: PlanTool) -> dict[str, list[str]]:
    return {
        record.plan.id: _waiting_ids(record)
        for record in tool.records(("pending_review",))
        if _waiting_ids(record)
    }


def _waiting_ids(record: PlanRecord) -> list[str]:
    return [s.id for s in record.state.action_specs if s.outcome == "pending" and s.needs_person]
