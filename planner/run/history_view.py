"""The issue's plan read back from its history after the pass (the job summary, `planner plan
--status`): the same view the tracking comment shows (planner.memory.plan_view), with the
changes still held by the approval gate read from the issue's plans."""

from __future__ import annotations

from planner.approval.waiting import unmade_in_history
from planner.memory.history import PlanningHistoryStore
from planner.memory.plan_view import plan_result
from planner.memory.state import IssueState
from planner.outcome.result import PassResult, PassStatus


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
