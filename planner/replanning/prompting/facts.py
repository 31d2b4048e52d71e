"""What a decision prompt is told about the situation (replanning.md §2.3), built from state.

Facts are plain data so a decision that asked a person can be asked again, with the answer,
in a later run (they are stored in the `replan_decision` entry).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import ConfigDict

from planner.core.interfaces import ToolCall, ToolResult
from planner.memory.entries import FactsShape
from planner.memory.state import IssueState
from planner.memory.summaries import actions_outline
from planner.outcome.result import PassResult, render_checklist
from planner.text.issue import fence_untrusted, sanitize_untrusted

RESULT_CHARS = 1_500
NONE_RAN = "Tests: none run."
"""Said of a repository without tests: no news for the final evaluation, which is left without."""
ARGUMENT_CHARS = 500


class ActionFacts(FactsShape):
    """§7.2: the action just executed and where the plan stands (the fields, as the history
    keeps them, are FactsShape's)."""

    model_config = ConfigDict(frozen=True)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ActionFacts:
        return cls(**{**data, "can_retry": False})


def action_facts(
    state: IssueState,
    entries: list[dict[str, Any]],
    task_id: str,
    call: ToolCall,
    result: ToolResult,
) -> ActionFacts:
    arguments = sanitize_untrusted(json.dumps(call.arguments, ensure_ascii=False), ARGUMENT_CHARS)
    outcome = "failed" if not result.ok else "succeeded"
    trigger = (
        f"action {call.name} failed: {_first_line(result.error)}"
        if not result.ok
        else (f"checkpoint after {call.name} for {task_id}")
    )
    return _facts(
        state,
        entries,
        task_id=task_id,
        trigger=trigger,
        executed_action=f"{call.name}({arguments}) for task {task_id}: {outcome}",
        # fenced whole for the judge: an unclosed `<!--` in a file it read hides nothing after it
        execution_result=fence_untrusted(result.content, RESULT_CHARS),
        error_info=fence_untrusted(result.error or "", RESULT_CHARS),
        can_retry=not result.ok,
    )


def task_failure_facts(
    state: IssueState, entries: list[dict[str, Any]], task_id: str, summary: str
) -> ActionFacts:
    return _facts(
        state,
        entries,
        task_id=task_id,
        trigger=f"task {task_id} failed",
        executed_action=f"finish_task(status=failed) for task {task_id}",
        execution_result=fence_untrusted(summary, RESULT_CHARS),
        error_info=f"the model reported task {task_id} as failed",
        can_retry=True,
    )


def _facts(state: IssueState, entries: list[dict[str, Any]], **fields: Any) -> ActionFacts:
    done, total = state.progress()
    outcomes = _action_outcomes_of_current_plan(entries)
    return ActionFacts(
        completed_count=done,
        total_count=total,
        error_count=outcomes.count(False),
        consecutive_errors=_trailing_failures(outcomes),
        remaining_actions=remaining_actions(state),
        **fields,
    )


def _action_outcomes_of_current_plan(entries: list[dict[str, Any]]) -> list[bool]:
    outcomes: list[bool] = []
    for entry in entries:
        if entry.get("type") in ("plan", "revision"):
            outcomes.clear()
        elif entry.get("type") == "action":
            outcomes.append(bool(entry.get("ok")))
    return outcomes


def _trailing_failures(outcomes: list[bool]) -> int:
    count = 0
    for ok in reversed(outcomes):
        if ok:
            break
        count += 1
    return count


def remaining_actions(state: IssueState) -> str:
    """The tasks not done yet, the first (the one at work) with its planned actions."""
    if state.plan is None:
        return ""
    lines: list[str] = []
    for view in state.tasks():
        if view.status == "completed":
            continue
        actions = [] if lines else state.plan.actions_for(view.id)
        planned = "; ".join(f"{a.tool or a.action_type}: {a.purpose}" for a in actions)
        lines.append(
            f"- {view.id}{_unless_pending(view.status)}: {view.description}"
            + (f" [planned: {planned}]" if planned else "")
        )
    return "\n".join(lines)


@dataclass(frozen=True)
class EvaluationFacts:
    """§8.2: the overall result once every task has run."""

    goal: str
    success_criteria: str
    execution_summary: str
    completed_actions: str
    current_state: str


def evaluation_facts(state: IssueState, snapshot: PassResult) -> EvaluationFacts:
    assert state.plan is not None
    goal = state.plan.goal_understanding
    views = state.tasks()
    done, total = state.progress()
    failed = sum(1 for view in views if view.status == "failed")
    summary = [f"{done}/{total} tasks completed" + (f", {failed} failed." if failed else ".")]
    summary += [f"- {v.id}{_unless_done(v.status)}: {v.summary or 'no summary'}" for v in views]
    evidence = snapshot.verification.evidence() if snapshot.verification else []
    summary += [line for line in evidence if line != NONE_RAN]
    actions = [a for view in views for a in state.actions_by_task.get(view.id, [])]
    return EvaluationFacts(
        goal=goal.main_objective,
        success_criteria="; ".join(goal.success_criteria),
        execution_summary="\n".join(summary),
        completed_actions=actions_outline(actions),
        current_state=_progress_line(render_checklist(snapshot, max_chars=6_000)),
    )


def _unless_pending(status: str) -> str:
    return "" if status == "pending" else f" ({status})"


def _unless_done(status: str) -> str:
    return "" if status == "completed" else f" ({status})"


def _first_line(text: str | None) -> str:
    """A short, safe trigger key: tool errors may carry repository or server text."""
    cleaned = sanitize_untrusted(text or "", 2_000).strip()
    return cleaned.splitlines()[0][:160] if cleaned else "unknown error"


def _progress_line(checklist: str) -> str:
    """What the checklist adds to the summary (which lists every task and the progress): its
    revision mark, when the plan was revised."""
    lines = [line.strip("#*📋 ") for line in checklist.splitlines() if line.strip()]
    return lines[0] if lines and lines[0] != "Execution Plan" else ""
