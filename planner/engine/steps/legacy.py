"""Legacy mode (planning.enabled: false, seed §7.5): the model works the issue with tools,
without a plan, until it finishes or stops calling tools."""

from __future__ import annotations

from typing import Any, NoReturn

from planner.engine.context import PassContext
from planner.engine.conversation import FINISH_TASK, assistant, user
from planner.engine.flow import StopPass
from planner.engine.interfaces import ToolCall
from planner.engine.issue import prompt_view
from planner.engine.prompts import render
from planner.engine.steps.execute import Finish, nudge, run_tool_calls
from planner.engine.task_guard import TaskCapReached, TaskGuard, did_nothing


def run_legacy(run: PassContext) -> NoReturn:
    # Seed §7.5: without planning the base system prompt is used, without the planning section.
    files = run.shown_files([f"{run.issue.title}\n{run.issue.body}"])
    request = render("legacy_request.md.j2", issue=prompt_view(run.issue), files=files.text)
    messages = [{"role": "system", "content": render("system_legacy.md.j2")}, user(request)]
    # Without a plan the whole issue is one task: it gets twice a task's calls.
    guard = TaskGuard(2 * run.config.budget.max_actions_per_task, files.whole)
    nudged = warned = False
    while True:
        reply = run.chat("legacy", messages, [*run.tools.specs(), FINISH_TASK])
        messages.append(assistant(reply.content, reply.tool_calls))
        if not reply.tool_calls and not nudged and guard.calls == 0:
            nudged = True  # prose before any call: once, as a task is told
            messages.append(user(nudge("", reply)))
            continue
        finish = (
            _guarded_calls(run, reply.tool_calls, messages, guard)
            if reply.tool_calls
            else ("completed", reply.content or "")
        )
        if finish is not None and not warned and _claims_undone_work(run, finish):
            warned = True
            messages.append(user(render("nothing_done.md.j2", task_id="")))
            continue
        if finish is not None:
            finish = _checked(run, finish)
            run.store.append("completion", done=True, summary={}, comment=finish[1])
            raise StopPass(
                "completed" if finish[0] == "completed" else "failed", finish[1] or "done"
            )


def _guarded_calls(
    run: PassContext, calls: list[ToolCall], messages: list[dict[str, Any]], guard: TaskGuard
) -> Finish | None:
    try:
        return run_tool_calls(run, "legacy", calls, messages, guard)
    except TaskCapReached as cap:
        return "failed", f"stopped: {cap}"


def _claims_undone_work(run: PassContext, finish: Finish) -> bool:
    actions = run.state().actions_by_task.get("legacy", [])
    return finish[0] == "completed" and did_nothing(actions)


def _checked(run: PassContext, finish: Finish) -> Finish:
    """The issue asks for a change: a run that changed and ran nothing did not resolve it."""
    if _claims_undone_work(run, finish):
        return "failed", f"nothing was changed. The model said: {finish[1]}"
    return finish
