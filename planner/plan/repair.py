"""Mechanical defects of a plan are repaired, not re-asked into failure.

Small models get the structure of a plan wrong in ways that have one obvious repair: an
execution order that runs a task before its dependency, a dependency on a task that does not
exist (or on itself, or in a cycle), an action for a task that does not exist, a tool that does
not exist (`pytest`, `open_file`). Each repair is applied to the plan and described in one
line; the lines are recorded with the plan (`plan_repaired`) so people see what planner changed.
A plan is re-asked only for what has no such repair (no subtask at all, too many subtasks).

Small models also plan the reading: "Read stack.py", "Identify where peek() goes", then the
change. A task is shown the files it is about, so a task that only looks before a task that
changes files is folded into that task, and with whole-file edits consecutive changes to the
same files are one task (the model writes those files whole once). The tests run after every
change, so a trailing task that only runs them is folded into the change too.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping

from planner.core.tool_names import RUN_COMMAND, WRITE_TOOLS, canonical_tool
from planner.plan.documents import Plan, PlannedAction, Subtask
from planner.plan.task_guard import TESTING_VERBS, changes_in_plan, forced_change, looks_in_plan

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


def repair_plan(
    plan: Plan,
    tools: Mapping[str, str] | None,
    known: frozenset[str] = frozenset(),
    *,
    whole_file: bool = False,
) -> list[str]:
    """Repair `plan` in place; one line per repair made. `known`: the tasks of the plan this
    one replaces, never folded or joined (a completed task must stay as it was). `whole_file`:
    the model writes the files a task is shown whole (llm.edit_format), so changes to the same
    files are joined."""
    notes = _without_planner_work(plan)
    notes += _unique_ids(plan.task_decomposition.subtasks)
    ids = {task.id for task in plan.task_decomposition.subtasks}
    notes += _known_dependencies(plan.task_decomposition.subtasks, ids)
    notes += _acyclic(plan)
    notes += _actions_of_tasks(plan, ids)
    if tools is not None:
        notes += [note for action in plan.action_plan.actions if (note := _tool(action, tools))]
    notes += _topological_order(plan)
    notes += _forced_change_planned(plan, tools, known)
    notes += _fold_looking_tasks(plan, known, tests_run=tools is not None and RUN_TESTS in tools)
    return notes + (_join_same_file_changes(plan, known) if whole_file else [])


def _forced_change_planned(
    plan: Plan, tools: Mapping[str, str] | None, known: frozenset[str]
) -> list[str]:
    """The `forced_change` of a plan that only looks gets a write_file action: the change is
    then the plan's, whatever folding does to the descriptions that made it forced (the 1.5B's
    "Read settings.py", "Check if APP_PORT is set" were folded into "If APP_PORT is set, return
    its value", planned with read_file, which no longer looked like a plan that only looks)."""
    forced = forced_change(plan)
    if forced is None or forced in known or (tools is not None and "write_file" not in tools):
        return []
    purpose = "make the change the issue asks for"
    plan.action_plan.actions.append(
        PlannedAction(task_id=forced, tool="write_file", purpose=purpose)
    )
    return [f"task {forced!r} makes the change: every task of the plan only looked"]


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


FILE_NAME = re.compile(r"[\w./-]+\.[A-Za-z]\w{0,9}\b")
"""A word that names a file (stack.py, docs/usage.md)."""
SHOWN = "the task that changes the files is shown them"
TESTED = "the tests run after every change"


def _fold_looking_tasks(plan: Plan, known: frozenset[str], *, tests_run: bool) -> list[str]:
    """A task that only looks and comes before a task that changes files is folded into the
    first such task; with the tests run after every change (`tests_run`), a trailing task that
    only checks is folded into the last change. Tasks in `known` take no part."""
    order = plan.action_plan.execution_order
    changes = [t for t in order if t not in known and _changes_or_writes(plan, t)]
    notes = []
    for task_id in [t for t in order if t not in known] if changes else []:
        into, why = _fold_target(plan, task_id, changes, tests_run)
        if into:
            _merge(plan, task_id, into)
            notes.append(f"task {task_id!r} folded into task {into!r}: {why}")
    return notes


def _fold_target(plan: Plan, task_id: str, changes: list[str], tests_run: bool) -> tuple[str, str]:
    """The task `task_id` is folded into, and why ("" when it stays)."""
    task = plan.subtask(task_id)
    if task is None or not looks_in_plan(plan, task_id):
        return "", ""
    order = plan.action_plan.execution_order
    later = [t for t in changes if order.index(t) > order.index(task_id)]
    if later:
        return later[0], SHOWN
    checks = tests_run and TESTING_VERBS.match(task.description)
    return (changes[-1], TESTED) if checks else ("", "")


def _join_same_file_changes(plan: Plan, known: frozenset[str]) -> list[str]:
    """Consecutive tasks whose descriptions name the same files (or both none: the issue's)
    are one task: the model writes those files whole once. Tasks in `known` stay apart."""
    notes = []
    position = 0
    while position + 1 < len(order := plan.action_plan.execution_order):
        first, second = order[position], order[position + 1]
        if _joinable(plan, first, second) and not {first, second} & known:
            _merge(plan, second, first)
            notes.append(f"task {second!r} joined to task {first!r}: both change the same files")
        else:
            position += 1
    return notes


def _joinable(plan: Plan, first: str, second: str) -> bool:
    both_change = _changes(plan, first) and _changes(plan, second)
    return both_change and _same_files(plan, first, second)


def _changes(plan: Plan, task_id: str) -> bool:
    return changes_in_plan(plan, task_id)


def _changes_or_writes(plan: Plan, task_id: str) -> bool:
    """A task that changes files, or one planned with a tool that writes them whatever its
    wording (1.5B: "If APP_PORT is not set, set the DEFAULT_PORT to 8000" with write_file; no
    looking task was folded into it, and they read settings.py one line at a time)."""
    writes = WRITE_TOOLS & set(plan.tools_for(task_id))
    return _changes(plan, task_id) or bool(writes and not looks_in_plan(plan, task_id))


def _same_files(plan: Plan, first: str, second: str) -> bool:
    named = [_files_named(plan.subtask(task_id)) for task_id in (first, second)]
    return named[0] == named[1]


def _files_named(task: Subtask | None) -> set[str]:
    return {name.strip("./") for name in FILE_NAME.findall(task.description if task else "")}


def _merge(plan: Plan, gone: str, into: str) -> None:
    """Task `gone` becomes part of task `into`: its actions go there, a change's description is
    added to `into`'s, and the order stays valid (what depended on `gone` depends on `into`
    when `into` comes first, else on what `gone` depended on)."""
    removed, kept = plan.subtask(gone), plan.subtask(into)
    assert removed is not None and kept is not None
    order = plan.action_plan.execution_order
    before = order.index(into) < order.index(gone)
    if _changes(plan, gone):
        kept.description = f"{kept.description.rstrip()}; {removed.description}"
    for action in plan.action_plan.actions:
        if action.task_id == gone:
            action.task_id, action.purpose = into, action.purpose or removed.description
    earlier = [d for d in removed.dependencies if order.index(d) < order.index(into)]
    kept.dependencies = _without([*kept.dependencies, *earlier], into, gone)
    instead = [into] if before else removed.dependencies
    for task in plan.task_decomposition.subtasks:
        if gone in task.dependencies:
            task.dependencies = _without([*task.dependencies, *instead], task.id, gone)
    plan.task_decomposition.subtasks = [t for t in plan.task_decomposition.subtasks if t.id != gone]
    plan.action_plan.execution_order = [t for t in order if t != gone]


def _without(dependencies: list[str], own: str, gone: str) -> list[str]:
    return list(dict.fromkeys(d for d in dependencies if d not in (own, gone)))
