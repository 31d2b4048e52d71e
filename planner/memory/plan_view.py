"""The plan as every surface shows it: the tracking comment, the pull request's body, the job
summary, `planner plan --status` and the Mermaid graph all take their tasks from `plan_result`,
so none of them ticks a task whose change still waits for a person."""

from __future__ import annotations

from collections.abc import Collection

from planner.memory.state import IssueState
from planner.outcome.result import PassResult, PassStatus, TaskView


def plan_result(
    state: IssueState, unmade: Collection[str], status: PassStatus, reason: str = ""
) -> PassResult:
    """The issue's plan as its history records it, tasks with a change not made yet (staged,
    asked about, approved and not run: `unmade`) marked as waiting."""
    return PassResult(
        status=status,
        stop_reason=reason,
        goal=state.plan.goal_understanding.main_objective if state.plan else "",
        plan=state.plan,
        tasks=held_back(state.tasks(), unmade),
        revision=state.revision,
        revision_reason=state.revision_reason,
        previous_progress=state.previous_progress,
        plan_started_at=state.plan_started_at,
        plan_history=list(state.plan_history),
        plan_quality=state.plan_quality,
        result_quality=state.result_quality,
    )


def held_back(tasks: list[TaskView], unmade: Collection[str]) -> list[TaskView]:
    """The tasks, those with a change not made yet marked as waiting."""
    return [t.model_copy(update={"waiting": True}) if t.id in unmade else t for t in tasks]
