"""The issue's current state, derived from its history entries (never stored separately)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import ValidationError

from planner.memory.history import latest_plan_of
from planner.outcome.result import PreviousPlan, QualityNote, TaskStatus, TaskView
from planner.plan.documents import Plan

REFINEMENT = "refinement"
"""The `source` of plan and revision entries written by planner.refinement."""
StateT = TypeVar("StateT")


def replayed(
    state: StateT,
    entries: Iterable[dict[str, Any]],
    handlers: Mapping[str, Callable[[StateT, dict[str, Any]], None]],
) -> StateT:
    """`state` after each entry, oldest first, went through the handler of its type (an entry
    of a type without one changes nothing)."""
    for entry in entries:
        handler = handlers.get(str(entry.get("type")))
        if handler is not None:
            handler(state, entry)
    return state


@dataclass
class IssueState:
    plan: Plan | None = None
    revision: int = 0
    revision_reason: str = ""
    previous_progress: tuple[int, int] | None = None
    revisions_since_human: int = 0
    task_status: dict[str, TaskStatus] = field(default_factory=dict)
    task_summary: dict[str, str] = field(default_factory=dict)
    actions_by_task: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    completed: bool = False
    invalid_plan_entries: int = 0
    plan_started_at: str = ""
    plan_comments_seen: frozenset[str] | None = None
    """The ids of the issue's comments the current plan was made from (None: not recorded)."""
    plan_history: list[PreviousPlan] = field(default_factory=list)
    plan_quality: QualityNote | None = None
    result_quality: QualityNote | None = None

    @classmethod
    def from_entries(cls, entries: Iterable[dict[str, Any]]) -> IssueState:
        return replayed(cls(), entries, _HANDLERS)

    def tasks(self) -> list[TaskView]:
        if self.plan is None:
            return []
        by_id = {task.id: task for task in self.plan.task_decomposition.subtasks}
        return [
            TaskView(
                id=task_id,
                description=by_id[task_id].description,
                status=self.task_status.get(task_id, "pending"),
                summary=self.task_summary.get(task_id, ""),
            )
            for task_id in self.plan.action_plan.execution_order
            if task_id in by_id
        ]

    def next_task(self) -> str | None:
        """The first unfinished task in execution order whose dependencies are done."""
        assert self.plan is not None
        for view in self.tasks():
            if view.status in ("completed", "failed"):
                continue
            subtask = self.plan.subtask(view.id)
            deps = subtask.dependencies if subtask else []
            if all(self.task_status.get(dep) == "completed" for dep in deps):
                return view.id
        return None

    def progress(self) -> tuple[int, int]:
        views = self.tasks()
        return sum(1 for v in views if v.status == "completed"), len(views)


def _on_plan(state: IssueState, entry: dict[str, Any]) -> None:
    plan = _load_plan(state, latest_plan_of(entry))
    if plan is None:
        return
    state.plan = plan
    state.revision = 0
    state.revision_reason = ""
    state.previous_progress = None
    state.plan_started_at = str(entry.get("timestamp", ""))
    seen = entry.get("comments_seen")
    listed = isinstance(seen, list) and all(isinstance(i, str) for i in seen)
    state.plan_comments_seen = frozenset(seen) if isinstance(seen, list) and listed else None
    state.plan_history.clear()
    _forget_quality(state, entry)
    state.task_status.clear()
    state.task_summary.clear()
    state.actions_by_task.clear()
    state.completed = False


def _on_revision(state: IssueState, entry: dict[str, Any]) -> None:
    plan = _load_plan(state, latest_plan_of(entry))
    if plan is None:
        return
    state.previous_progress = state.progress()
    state.plan_history.append(
        PreviousPlan(
            number=state.revision,
            started_at=state.plan_started_at,
            reason=state.revision_reason,
            tasks=state.tasks(),
        )
    )
    state.plan_started_at = str(entry.get("timestamp", ""))
    state.plan = plan
    state.revision = int(entry.get("revision") or state.revision + 1)
    state.revision_reason = str(entry.get("reason", ""))
    if entry.get("source") != REFINEMENT:
        # max_revisions bounds reflection revisions; refinement has its own limit.
        state.revisions_since_human += 1
    _forget_quality(state, entry)
    kept = {task.id for task in plan.task_decomposition.subtasks}
    carry = entry.get("carry_progress", True)
    state.task_status = {
        task_id: status
        for task_id, status in state.task_status.items()
        if carry and task_id in kept and status == "completed"
    }
    state.completed = False


def _on_task(state: IssueState, entry: dict[str, Any]) -> None:
    task_id = str(entry.get("task_id", ""))
    status = entry.get("status")
    if status in ("pending", "in_progress", "completed", "failed"):
        state.task_status[task_id] = status
    if status in ("pending", "in_progress"):
        state.completed = False  # a re-opened task: the plan is not finished any more
    if entry.get("summary"):
        state.task_summary[task_id] = str(entry["summary"])


def _on_action(state: IssueState, entry: dict[str, Any]) -> None:
    state.actions_by_task.setdefault(str(entry.get("task_id")), []).append(entry)


def _on_completion(state: IssueState, entry: dict[str, Any]) -> None:
    state.completed = bool(entry.get("done", True))


def _on_human_input(state: IssueState, entry: dict[str, Any]) -> None:
    state.revisions_since_human = 0


def _forget_quality(state: IssueState, entry: dict[str, Any]) -> None:
    """A plan from elsewhere has not been judged yet; refinement's own plans keep the last
    judgement on show until theirs arrives."""
    if entry.get("source") != REFINEMENT:
        state.plan_quality = None
        if entry.get("type") == "plan":
            state.result_quality = None


def _on_quality_judgement(state: IssueState, entry: dict[str, Any]) -> None:
    try:
        note = QualityNote(
            score=entry.get("score"),
            acceptable=entry.get("acceptable", True),
            attempts=entry.get("attempt") or 1,
            refinements=entry.get("refinements", (entry.get("attempt") or 1) - 1),
            max_refinements=entry.get("max_refinements"),
            issues=entry.get("issues") or [],
            suggestions=entry.get("suggestions") or [],
        )
    except ValidationError:
        return  # a damaged entry shows no quality line rather than stopping the pass
    if entry.get("subject") == "result":
        state.result_quality = note
    else:
        state.plan_quality = note


def _load_plan(state: IssueState, raw: dict[str, Any]) -> Plan | None:
    try:
        return Plan.model_validate(raw)
    except ValidationError:
        state.invalid_plan_entries += 1
        return None


_HANDLERS = {
    "plan": _on_plan,
    "revision": _on_revision,
    "task": _on_task,
    "action": _on_action,
    "completion": _on_completion,
    "human_input": _on_human_input,
    "quality_judgement": _on_quality_judgement,
}
