"""The issue's plan read back from its history after the pass (the job summary, `planner plan
--status`): the same view the tracking comment shows (planner.engine.plan_view), with the
changes still held by the approval gate read from the issue's plans."""

from __future__ import annotations

from planner.approval.gate import unmade_in_history
from planner.engine.history import PlanningHistoryStore
from planner.engine.plan_view import plan_result
from planner.engine.result import PassResult, PassStatus
from planner.engine.state import IssueState


def history_plan(
    history: PlanningHistoryStore, status: PassStatus, reason: str = ""
) -> PassResult | None:
    """The plan as the history records it; None when the issue has no plan (yet)."""
    if not history.filepath.is_file():
        return None
    state = IssueState.from_entries(history.entries())
    if state.plan is None:
        return None
    return plan_result(state, unmade_in_history(history), status, reason)
