"""Mechanical defects of a plan are repaired, not re-asked into failure.

Small models get the structure of a plan wrong in ways that have one obvious repair: an
execution order that runs a task before its dependency, a dependency on a task that does not
exist (or on itself, or in a cycle), an action for a task that does not exist, a tool that does
not exist (`pytest`, `open_file`). Each repair is applied to the plan and described in one
line; the lines are recorded with the plan (`plan_repaired`) so people see what planner changed.
A plan is re-asked only for what has no such repair (no subtask at all, too many subtasks).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

from planner.engine.documents import Plan, PlannedAction, Subtask
from planner.engine.tool_names import RUN_COMMAND, canonical_tool

RUN_TESTS = "run_tests"
TEST_RUNNER = re.compile(
    r"(^|[\s_./-])(pytest|unittest|nose2?|tox|jest|mocha|vitest|npm[\s_-]*test|go[\s_-]*test|"
    r"cargo[\s_-]*test|make[\s_-]*test|run[\s_-]*tests?|tests?)($|[\s_./-])",
    re.IGNORECASE,
)
"""Tool names that mean "run the test suite"."""
NEAREST_CUTOFF = 0.75


PLANNER_WORK = re.compile(
    r"^\W*(commit|push|merge|(open|create|submit|raise|make|send)\b.*\b(pull|merge) request|"
    r"(open|create|submit|raise)\s+(a|the)?\s*(pr|mr)\b)",
    re.IGNORECASE,
)
"""Tasks planner does itself after the work: committing, pushing, opening the pull request."""


def repair_plan(plan: Plan, tools: Mapping[str, str] | None) -> list[str]:
    """Repair `plan` in place; one line per repair made."""
    notes = _without_planner_work(plan)
    notes += _unique_ids(plan.task_decomposition.subtasks)
    ids = {task.id for task in plan.task_decomposition.subtasks}
    notes += _known_dependencies(plan.task_decomposition.subtasks, ids)
    notes += _acyclic(plan)
    notes += _actions_of_tasks(plan, ids)
    if tools is not None:
        notes += [note for action in plan.action_plan.actions if (note := _tool(action, tools))]
    notes += _topological_order(plan)
    return notes


def _without_planner_work(plan: Plan) -> list[str]:
    """Commit, push and pull-request tasks are dropped (planner does them), unless nothing else
    would be left."""
    subtasks = plan.task_decomposition.subtasks
    dropped = [t for t in subtasks if PLANNER_WORK.match(t.description)]
    if not dropped or len(dropped) == len(subtasks):
        return []
    gone = {t.id for t in dropped}
    plan.task_decomposition.subtasks = [t for t in subtasks if t.id not in gone]
    for task in plan.task_decomposition.subtasks:
        task.dependencies = [d for d in task.dependencies if d not in gone]
    plan.action_plan.actions = [a for a in plan.action_plan.actions if a.task_id not in gone]
    plan.action_plan.execution_order = [
        t for t in plan.action_plan.execution_order if t not in gone
    ]
    names = ", ".join(repr(t.id) for t in dropped)
    return [f"tasks {names} dropped: planner commits, pushes and opens the pull request itself"]


def _unique_ids(subtasks: list[Subtask]) -> list[str]:
    seen: set[str] = set()
    notes = []
    for task in subtasks:
        if task.id in seen:
            new_id = next(f"{task.id}-{n}" for n in range(2, 1000) if f"{task.id}-{n}" not in seen)
            notes.append(f"a second subtask {task.id!r} was renamed {new_id!r}")
            task.id = new_id
        seen.add(task.id)
    return notes


def _known_dependencies(subtasks: list[Subtask], ids: set[str]) -> list[str]:
    notes = []
    for task in subtasks:
        dropped = [d for d in task.dependencies if d not in ids or d == task.id]
        if dropped:
            task.dependencies = [d for d in task.dependencies if d not in dropped]
            notes.append(f"subtask {task.id!r}: dependencies on {dropped} dropped (no such task)")
    return notes


def _acyclic(plan: Plan) -> list[str]:
    """A dependency on a task listed later in the model's order closes a cycle: dropped."""
    remaining = _unordered(plan.task_decomposition.subtasks)
    if not remaining:
        return []
    position = _positions(plan)
    notes = []
    for task in plan.task_decomposition.subtasks:
        backwards = [
            d for d in task.dependencies if d in remaining and position[d] > position[task.id]
        ]
        if task.id in remaining and backwards:
            task.dependencies = [d for d in task.dependencies if d not in backwards]
            notes.append(f"subtask {task.id!r}: dependencies on {backwards} dropped (a cycle)")
    return notes + _acyclic(plan) if notes else notes


def _unordered(subtasks: list[Subtask]) -> set[str]:
    """Kahn's algorithm: the tasks that cannot be ordered (on or behind a cycle)."""
    remaining = {t.id: set(t.dependencies) for t in subtasks}
    while ready := [task_id for task_id, deps in remaining.items() if not deps]:
        for task_id in ready:
            del remaining[task_id]
        for deps in remaining.values():
            deps.difference_update(ready)
    return set(remaining)


def _positions(plan: Plan) -> dict[str, int]:
    listed = [t.id for t in plan.task_decomposition.subtasks]
    order = [t for t in plan.action_plan.execution_order if t in listed]
    ranked = list(dict.fromkeys([*order, *listed]))
    return {task_id: index for index, task_id in enumerate(ranked)}


def _actions_of_tasks(plan: Plan, ids: set[str]) -> list[str]:
    stray = [a for a in plan.action_plan.actions if a.task_id not in ids]
    if not stray:
        return []
    plan.action_plan.actions = [a for a in plan.action_plan.actions if a.task_id in ids]
    names = sorted({a.task_id for a in stray})
    return [f"{len(stray)} action(s) for tasks that do not exist ({names}) dropped"]


def _tool(action: PlannedAction, tools: Mapping[str, str]) -> str | None:
    """An action's tool that does not exist: the test run, the nearest real tool, or none."""
    name = action.tool
    if not name or name in tools:
        return None
    action.tool = _replacement(name, tools)
    if action.tool is None:
        action.purpose = f"{action.purpose} (planned with {name!r}, which is not a tool)".strip()
        return f"task {action.task_id!r}: tool {name!r} does not exist; the action keeps no tool"
    return f"task {action.task_id!r}: tool {name!r} does not exist; {action.tool!r} is used"


def _replacement(name: str, tools: Mapping[str, str]) -> str | None:
    known = canonical_tool(name, tools)
    if known is not None:
        return known
    if TEST_RUNNER.search(name):
        return next((t for t in (RUN_TESTS, RUN_COMMAND) if t in tools), None)
    nearest = difflib.get_close_matches(name, list(tools), n=1, cutoff=NEAREST_CUTOFF)
    return nearest[0] if nearest else None


def _topological_order(plan: Plan) -> list[str]:
    """The model's order where it is valid; each task after its dependencies, every task once."""
    subtasks = {t.id: t for t in plan.task_decomposition.subtasks}
    wanted = sorted(subtasks, key=_positions(plan).__getitem__)
    order: list[str] = []
    while len(order) < len(wanted):
        ready = next(
            t for t in wanted if t not in order and set(subtasks[t].dependencies) <= set(order)
        )
        order.append(ready)
    if order == plan.action_plan.execution_order:
        return []
    plan.action_plan.execution_order = order
    return [f"execution order set to {order} (each task after its dependencies)"]
