"""Reflect phase (seed §7.4.1 phase 5; the default with planning.replanning off).

After a failed action (trigger_on_error), every trigger_interval actions and after a failed
task the model reflects; plan_revision_needed revises the plan within
planning.revision.max_revisions, past which the pass stops for a person (§7.4.4).
"""

from __future__ import annotations

import logging
import re

from planner.config import PlannerConfig
from planner.core.errors import ModelBehaviourError
from planner.core.interfaces import ToolCall, ToolResult
from planner.engine.context import PassContext
from planner.engine.phase import Phase
from planner.memory.state import IssueState
from planner.memory.summaries import task_actions_digest
from planner.model.conversation import user
from planner.outcome.evidence import evidence_text
from planner.outcome.flow import PlanChanged, StopPass
from planner.plan.documents import HumanIntervention, InterventionSummary, ReflectionReply
from planner.text.issue import sanitize_untrusted
from planner.text.prompts import render

log = logging.getLogger(__name__)


def reflection_wanted(config: PlannerConfig, *, failed: bool, actions: int) -> bool:
    """Is this action a reflection trigger point? Either trigger fires on its own: a failed
    action (with trigger_on_error) or every trigger_interval actions, failed or not.
    (`actions`: actions run so far)"""
    reflection = config.planning.reflection
    if not reflection.enabled:
        return False
    on_error = failed and reflection.trigger_on_error
    interval = reflection.trigger_interval
    return on_error or (interval > 0 and actions % interval == 0)


def failed_action(result: ToolResult) -> bool:
    """An action that failed as a trigger point counts failures: not one the tool refused for
    the model's own input (ToolResult.refused), which goes back to the model as its answer.
    The 1.5B's write of a file that no longer parsed was judged a reason to replan, and the
    revised plan was five read_file actions (env_port: 19 calls, needs_human)."""
    return not result.ok and not result.refused


def task_reflection_wanted(config: PlannerConfig) -> bool:
    """A failed task is a reflection trigger point when errors are."""
    reflection = config.planning.reflection
    return reflection.enabled and reflection.trigger_on_error


class ReflectionPhase(Phase):
    name = "reflection"

    def after_action(
        self, run: PassContext, task_id: str, call: ToolCall, result: ToolResult
    ) -> ToolResult:
        if reflection_wanted(run.config, failed=failed_action(result), actions=run.action_counter):
            # The action and its error are the last of the recent actions the request lists.
            name = re.sub(r"[^\w.-]", "", call.name)[:64] or "a tool"
            outcome = "succeeded" if result.ok else "failed"
            reflect(run, task_id, f"the last action below ({name}, which {outcome})")
        return result

    def after_task(self, run: PassContext, task_id: str, status: str, summary: str) -> None:
        if status == "failed" and task_reflection_wanted(run.config):
            reflect(run, task_id, f"task {task_id} reported failure", summary)


def reflect(run: PassContext, task_id: str, trigger: str, detail: str = "") -> None:
    """`trigger`: planner's words for what happened; `detail`: the model's or a tool's
    (untrusted, fenced)."""
    state = run.state()
    request = render(
        "reflection_request.md.j2",
        plan=state.plan,
        trigger=trigger,
        detail=sanitize_untrusted(detail, 4_000),
        task_id=task_id,
        statuses={task.id: task.status for task in state.tasks()},
        current=task_id,
        brief=True,
        done=state.progress()[0],
        total=state.progress()[1],
        actions=task_actions_digest(state.actions_by_task.get(task_id, []), first_lines=True),
        depth=run.config.planning.reflection.depth,
        tests=evidence_text(run.store.entries()),
    )
    messages = [run.system("reflection"), user(request)]
    try:
        reply = run.structured("reflection", messages, ReflectionReply, current_plan=state.plan)
    except ModelBehaviourError as exc:
        # Level 2: a failed reflection is logged and execution continues.
        log.warning("reflection failed: %s", exc)
        run.store.append("error", level=2, error="reflection_failed", message=str(exc))
        return
    run.store.save_reflection(reply.model_dump())
    if reply.reflection.plan_revision_needed:
        _revise(run, reply, state)


def _revise(run: PassContext, reply: ReflectionReply, state: IssueState) -> None:
    assert reply.plan_revision is not None and state.plan is not None
    limit = run.config.planning.revision.max_revisions
    if state.revisions_since_human >= limit:
        _request_intervention(run, state, reply.plan_revision.reason)
    revised = reply.plan_revision.apply_to(state.plan)
    run.store.save_revision(revised.model_dump(), reply.model_dump())
    if reply.plan_revision.repairs:
        run.store.append("plan_repaired", repairs=reply.plan_revision.repairs)
    run.report(run.snapshot("in_progress", "plan revised"))
    raise PlanChanged


def _request_intervention(run: PassContext, state: IssueState, wanted: str) -> None:
    done, total = state.progress()
    failed = sum(1 for status in state.task_status.values() if status == "failed")
    limit = run.config.planning.revision.max_revisions
    document = HumanIntervention(
        summary=InterventionSummary(
            tasks_completed=done,
            tasks_failed=failed,
            revision_attempts=state.revisions_since_human,
            reason=f"the plan revision limit ({limit}) was reached",
            current_state=f"{done}/{total} tasks complete; wanted another revision: {wanted}",
            recommendations=["Reply with guidance (`/planner <instructions>`)."],
        ),
        comment="Automatic processing is stuck, so a person needs to step in.",
    )
    run.store.append("human_intervention", document=document.model_dump())
    raise StopPass(
        "needs_human",
        document.summary.reason,
        [document.comment, document.summary.current_state],
    )
