"""Legacy mode (planning.enabled: false, seed §7.5): the model works the issue with tools,
without a plan, until it finishes or stops calling tools."""

from __future__ import annotations

from typing import NoReturn

from planner.engine.context import PassContext
from planner.engine.conversation import FINISH_TASK, assistant, user
from planner.engine.flow import StopPass
from planner.engine.issue import prompt_view
from planner.engine.prompts import render
from planner.engine.steps.execute import run_tool_calls


def run_legacy(run: PassContext) -> NoReturn:
    # Seed §7.5: without planning the base system prompt is used, without the planning section.
    messages = [
        {"role": "system", "content": render("system_legacy.md.j2")},
        user(render("legacy_request.md.j2", issue=prompt_view(run.issue))),
    ]
    while True:
        reply = run.chat("legacy", messages, [*run.tools.specs(), FINISH_TASK])
        messages.append(assistant(reply.content, reply.tool_calls))
        finish = (
            run_tool_calls(run, "legacy", reply.tool_calls, messages)
            if reply.tool_calls
            else ("completed", reply.content or "")
        )
        if finish is not None:
            run.store.append("completion", done=True, summary={}, comment=finish[1])
            raise StopPass(
                "completed" if finish[0] == "completed" else "failed", finish[1] or "done"
            )
