"""Structure validation of a replanned plan against the one it replaces (task-refinement.md).

A model asked to improve a plan regenerates all of it, so its reply may break what worked:

    task count changed by more than task_count_change_threshold (a fraction of the previous
    count) AND by more than task_count_change_min_absolute tasks      -> structure broken
    a dependency on a task that does not exist                        -> structure broken
    dependencies that form a cycle                                    -> structure broken

A plan that is not executable for another reason (execution order, unknown tools, a completed
task dropped) is treated the same way. A broken plan is not used: with enable_individual_fallback
the previous tasks stay and only the changed tasks that still fit are taken over, one by one;
otherwise the previous plan stays as it was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from planner.config import RefinementConfig
from planner.plan.documents import Plan, PlanRules, Subtask, plan_problems

Outcome = Literal["valid", "fallback", "kept_previous"]


@dataclass(frozen=True)
class StructureValidation:
    outcome: Outcome
    plan: Plan
    """The plan to use: the proposed one, the previous one with taken tasks, or the previous."""
    problems: list[str] = field(default_factory=list)
    """Why the proposed plan was broken (empty when valid)."""
    taken: list[str] = field(default_factory=list)
    """Individual fallback: changed tasks taken over from the proposed plan."""
    refused: list[str] = field(default_factory=list)
    """Individual fallback: changed tasks that did not fit, with the reason."""

    @property
    def changed(self) -> bool:
        return self.outcome == "valid" or bool(self.taken)

    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "problems": self.problems,
            "taken": self.taken,
            "refused": self.refused,
        }


def validate_structure(
    previous: Plan,
    proposed: Plan,
    settings: RefinementConfig,
    rules: PlanRules,
    keep: frozenset[str] = frozenset(),
) -> StructureValidation:
    """The plan to continue with, and why (see the module docstring)."""
    problems = structure_problems(previous, proposed, settings)
    problems += [p for p in _executable_problems(proposed, rules, keep) if p not in problems]
    if not problems:
        return StructureValidation("valid", proposed)
    if not settings.enable_individual_fallback:
        return StructureValidation("kept_previous", previous, problems)
    return _individual_fallback(previous, proposed, rules, keep, problems)


def structure_problems(previous: Plan, proposed: Plan, settings: RefinementConfig) -> list[str]:
    """The seed's three structure checks."""
    problems = _count_problems(len(_tasks(previous)), len(_tasks(proposed)), settings)
    ids = {task.id for task in _tasks(proposed)}
    problems += _dangling(_tasks(proposed), ids)
    problems += [p for p in plan_problems(proposed, PlanRules()) if "cycle" in p]
    return problems


def _count_problems(before: int, after: int, settings: RefinementConfig) -> list[str]:
    change = abs(after - before)
    ratio = change / before if before else float(change > 0)
    if ratio > settings.task_count_change_threshold and (
        change > settings.task_count_change_min_absolute
    ):
        return [f"the task count changed from {before} to {after} ({ratio:.0%})"]
    return []


def _dangling(subtasks: list[Subtask], ids: set[str]) -> list[str]:
    return [
        f"subtask {task.id!r} depends on {dep!r}, which does not exist"
        for task in subtasks
        for dep in task.dependencies
        if dep not in ids
    ]


def _executable_problems(plan: Plan, rules: PlanRules, keep: frozenset[str]) -> list[str]:
    ids = {task.id for task in _tasks(plan)}
    dropped = [f"completed task {task_id!r} was dropped" for task_id in sorted(keep - ids)]
    return [*plan_problems(plan, rules), *dropped]


# -- individual fallback ----------------------------------------------------------------------


def _individual_fallback(
    previous: Plan,
    proposed: Plan,
    rules: PlanRules,
    keep: frozenset[str],
    problems: list[str],
) -> StructureValidation:
    """Take over each changed task (same id, new content) that keeps the plan executable."""
    current, taken, refused = previous, [], []
    for task_id in _changed_ids(previous, proposed, keep):
        trial = _with_task(current, proposed, task_id)
        trouble = plan_problems(trial, rules)
        if trouble:
            refused.append(f"{task_id}: {'; '.join(trouble)}")
            continue
        current = trial
        taken.append(task_id)
    outcome: Outcome = "fallback" if taken else "kept_previous"
    return StructureValidation(outcome, current, problems, taken, refused)


def _changed_ids(previous: Plan, proposed: Plan, keep: frozenset[str]) -> list[str]:
    """Tasks of the previous plan that the proposed plan rewrote (completed ones stay)."""
    rewritten = {task.id: task for task in _tasks(proposed)}
    return [
        task.id
        for task in _tasks(previous)
        if task.id in rewritten and task.id not in keep and rewritten[task.id] != task
    ]


def _with_task(current: Plan, proposed: Plan, task_id: str) -> Plan:
    """`current` with one task (and its planned actions) as the proposed plan has them."""
    replacement = proposed.subtask(task_id)
    assert replacement is not None
    subtasks = [replacement if t.id == task_id else t for t in _tasks(current)]
    new_actions = proposed.actions_for(task_id)
    actions = [a for a in current.action_plan.actions if a.task_id != task_id or not new_actions]
    order = stable_order(subtasks, current.action_plan.execution_order)
    return current.model_copy(
        update={
            "task_decomposition": current.task_decomposition.model_copy(
                update={"subtasks": subtasks}
            ),
            "action_plan": current.action_plan.model_copy(
                update={"execution_order": order, "actions": [*actions, *new_actions]}
            ),
        }
    )


def stable_order(subtasks: list[Subtask], preferred: list[str]) -> list[str]:
    """A dependency order that keeps `preferred` wherever the dependencies allow; tasks on a
    cycle or depending on missing tasks are left in their preferred place (validation then
    reports them)."""
    position = {task_id: index for index, task_id in enumerate(preferred)}
    pending = sorted(subtasks, key=lambda t: position.get(t.id, len(position)))
    ids = {task.id for task in subtasks}
    order: list[str] = []
    while pending:
        ready = next(
            (t for t in pending if all(d in order or d not in ids for d in t.dependencies)),
            pending[0],
        )
        order.append(ready.id)
        pending.remove(ready)
    return order


def _tasks(plan: Plan) -> list[Subtask]:
    return plan.task_decomposition.subtasks
