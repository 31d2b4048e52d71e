"""Keeps one task's tool loop moving towards a change (small models read instead of acting).

The guard answers some calls itself instead of running them: a call identical to one made
earlier in the task with nothing changed since (its result is already in the conversation), a
read of a file the task prompt already shows unchanged, and any read once the task has used
`budget.max_actions_per_task` calls. A few calls past that the task ends as failed. It also
tells whether a finished task changed anything or produced evidence (a command or test run)
that nothing needed changing: a task meant to change something may not be ticked without.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from planner.core.interfaces import ToolCall, ToolResult
from planner.core.tool_names import READ_ONLY_TOOLS as READ_ONLY
from planner.core.tool_names import path_argument
from planner.plan.documents import Plan, Subtask

EVIDENCE = frozenset({"run_command", "run_tests"})
GRACE_CALLS = 4
"""Calls a task may still make after reading was refused, before it ends as failed."""
REFUSALS_IN_A_ROW = 3
"""Calls answered without running, one after another, that end the task: a small model that
repeats a refused call ignores the answer (one was seen repeating it twenty times)."""
INSPECTION_VERBS = re.compile(
    r"^\W*(read|inspect|understand|analy[sz]e|review|locate|find|identify|examine|look|"
    r"check|verify|test|run|explore|investigate|determine|study|open|list|search|confirm|"
    r"validate|ensure)\b",
    re.IGNORECASE,
)
"""A task description starting with one of these looks, it does not change."""
CHANGE_WORDS = re.compile(
    r"\b(fix|implement|add|update|change|modify|edit|write|rename|remove|delete|replace|"
    r"create|correct|refactor|make|handle|support|document|extend|adjust|convert)\w*",
    re.IGNORECASE,
)
"""A task whose description has none of these was not asked to change anything."""
TESTING_VERBS = re.compile(
    r"^\W*(test|run|verify|check|validate|confirm|ensure|review)\b", re.IGNORECASE
)
"""A task that only looks and starts with one of these checks the change (the tests do). The
1.5B's "Review the implementation and test the `page` function thoroughly", left after the fix,
read past the end of pager.py until the action cap and then edited the fix away."""
ACT = (
    "change the file with edit_file (oldText copied from the lines shown, without the line "
    'numbers) or write_file, or call finish_task with status "failed" and the reason'
)


class TaskCapReached(Exception):
    """The task made GRACE_CALLS more calls after reading was refused: it ends as failed."""


@dataclass
class TaskGuard:
    limit: int
    shown: frozenset[str] = frozenset()
    """Files whose current content the task prompt shows."""
    windows: frozenset[str] = frozenset()
    """Files the task prompt shows as windows around their definitions."""
    calls: int = 0
    changed: set[str] = field(default_factory=set)
    changes: int = 0
    done_before: bool = False
    """The model wrote back, unchanged, files an earlier task of the plan had written: the
    change the task asks for is there, and the task is completed without one of its own."""
    stands_by: bool = False
    """A round after the issue's own test failed: writing back, unchanged, the files the task
    changed says the model keeps its change (the test, written by a model, may be wrong)."""
    evidence: int = 0
    seen: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Call key -> (its number in the task, the change count after it)."""
    refused_in_a_row: int = 0

    def answer(self, call: ToolCall) -> ToolResult | None:
        """What to tell the model instead of running `call`, or None to run it."""
        refusal = self._refusal(call)
        self.refused_in_a_row = self.refused_in_a_row + 1 if refusal else 0
        if self.refused_in_a_row >= REFUSALS_IN_A_ROW:
            raise TaskCapReached(
                f"the model repeated calls that were answered without running "
                f"{self.refused_in_a_row} times in a row"
            )
        return refusal

    def _refusal(self, call: ToolCall) -> ToolResult | None:
        self.calls += 1
        if self.calls > self.limit + GRACE_CALLS:
            raise TaskCapReached(
                f"the task made {self.calls - 1} tool calls without finishing "
                f"(budget.max_actions_per_task is {self.limit})"
            )
        earlier = self.seen.get(_key(call))
        if earlier is not None and earlier[1] == self.changes:
            return _refused(
                f"You already made this exact call (call {earlier[0]} of this task) and "
                f"nothing changed since, so its result is the one above. Do not repeat it: {ACT}."
            )
        if call.name == "read_file" and self._shown_unchanged(call.arguments):
            return _refused(
                f"The current content of {call.arguments.get('path')} is already in the task "
                f"prompt above, and it has not changed. Do not read it: {ACT}."
            )
        if call.name in READ_ONLY and self.calls > self.limit:
            return _refused(
                f"This task has made {self.calls - 1} tool calls; reading more is not allowed. "
                f"Decide now: {ACT}."
            )
        return None

    def ran(self, call: ToolCall, result: ToolResult) -> None:
        """Note what a call that ran did."""
        if call.name in EVIDENCE:
            self.evidence += 1
        elif result.ok and call.name not in READ_ONLY:
            self.changes += 1
            self.changed.add(path_argument(call.arguments))
        self.seen[_key(call)] = (self.calls, self.changes)

    def _shown_unchanged(self, arguments: dict[str, Any]) -> bool:
        path = path_argument(arguments)
        ranged = arguments.get("start_line") or arguments.get("end_line")
        return path in self.shown and path not in self.changed and not ranged


def meant_to_change(task: Subtask | None, planned_tools: list[str]) -> bool:
    """A task asks for a change when its description says so (fix, add, update …), unless it
    starts with a verb of looking (read, check, verify …) or every tool planned for it reads."""
    if task is None or INSPECTION_VERBS.match(task.description):
        return False
    if planned_tools and all(tool in READ_ONLY for tool in planned_tools):
        return False
    return bool(CHANGE_WORDS.search(task.description))


def only_looks(task: Subtask | None, planned_tools: list[str]) -> bool:
    """A task that starts with a verb of looking (read, check, verify …), or whose planned
    tools all read: its answer may be prose, and it is not asked to write files."""
    if task is None:
        return False
    reads = bool(planned_tools) and all(tool in READ_ONLY for tool in planned_tools)
    return bool(INSPECTION_VERBS.match(task.description)) or reads


def looks_in_plan(plan: Plan | None, task_id: str) -> bool:
    """`only_looks` for a task of `plan`, unless it is the plan's `forced_change`."""
    if plan is None:
        return False
    looks = only_looks(plan.subtask(task_id), plan.tools_for(task_id))
    return looks and task_id != forced_change(plan)


def changes_in_plan(plan: Plan | None, task_id: str) -> bool:
    """`meant_to_change` for a task of `plan`, or it is the plan's `forced_change`."""
    if plan is None:
        return False
    meant = meant_to_change(plan.subtask(task_id), plan.tools_for(task_id))
    return meant or task_id == forced_change(plan)


def forced_change(plan: Plan) -> str | None:
    """In a plan all of whose tasks only look, the last task that does not only test: an
    issue asks for a change, and a plan that only looks would make none (1.5B: the one task
    was "Read APP_PORT and raise ValueError for anything else", and its answers were reads).
    None when some task does not only look, none says it looks (only its tools read), or
    every task tests."""
    order = plan.action_plan.execution_order
    tasks = [task for t in order if (task := plan.subtask(t))]
    if not all(only_looks(task, plan.tools_for(task.id)) for task in tasks):
        return None
    if not any(INSPECTION_VERBS.match(task.description) for task in tasks):
        return None
    candidates = [task.id for task in tasks if not TESTING_VERBS.match(task.description)]
    return candidates[-1] if candidates else None


def did_nothing(actions: list[dict[str, Any]]) -> bool:
    """No action (this pass or an earlier one) changed something or ran a command or the tests
    that could show no change was needed."""
    for action in actions:
        name = action.get("execution", {}).get("function_call", {}).get("name")
        if name in EVIDENCE or (action.get("ok") and name not in READ_ONLY):
            return False
    return True


def _refused(text: str) -> ToolResult:
    return ToolResult(ok=True, content=f"[not run] {text}")


def _key(call: ToolCall) -> str:
    return call.name + json.dumps(call.arguments, sort_keys=True, default=str)
