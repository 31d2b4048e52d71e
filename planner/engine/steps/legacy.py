"""Legacy mode (planning.enabled: false, seed §7.5): the model works the issue with tools,
without a plan, until it finishes or stops calling tools. The whole issue is one task
("legacy"): its turns run like a task's (planner.engine.steps.execute.task_turns)."""

from __future__ import annotations

from typing import NoReturn

from planner.engine.context import PassContext
from planner.engine.conversation import user
from planner.engine.flow import StopPass
from planner.engine.issue import prompt_view
from planner.engine.prompts import render
from planner.engine.steps.execute import Finish, task_turns
from planner.engine.task_guard import TaskGuard, did_nothing

LEGACY = "legacy"


def run_legacy(run: PassContext) -> NoReturn:
    # Seed §7.5: without planning the base system prompt is used, without the planning section.
    files = run.shown_files([f"{run.issue.title}\n{run.issue.body}"])
    request = render("legacy_request.md.j2", issue=prompt_view(run.issue), files=files.text)
    messages = [{"role": "system", "content": render("system_legacy.md.j2")}, user(request)]
    # Without a plan the whole issue is one task: it gets twice a task's calls.
    guard = TaskGuard(2 * run.config.budget.max_actions_per_task, files.whole)
    finish = task_turns(run, LEGACY, messages, guard, lambda f: _undone(run, f), kind=LEGACY)
    if _undone(run, finish):
        finish = ("failed", f"nothing was changed. The model said: {finish[1]}")
    run.store.append("completion", done=True, summary={}, comment=finish[1])
    raise StopPass("completed" if finish[0] == "completed" else "failed", finish[1] or "done")


def _undone(run: PassContext, finish: Finish) -> bool:
    """The issue asks for a change: a run that changed and ran nothing did not resolve it."""
    actions = run.state().actions_by_task.get(LEGACY, [])
    return finish[0] == "completed" and did_nothing(actions)
