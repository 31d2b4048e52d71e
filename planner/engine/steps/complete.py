"""Complete step (seed §7.4.1): no task is left, the model judges whether the work is done."""

from __future__ import annotations

from typing import NoReturn

from planner.engine.context import PassContext
from planner.model.conversation import user
from planner.outcome.flow import StopPass
from planner.outcome.result import render_checklist
from planner.plan.documents import CompletionReply
from planner.text.issue import comments_since, prompt_view
from planner.text.prompts import render


def complete(run: PassContext) -> NoReturn:
    state = run.state()
    request = render(
        "completion_request.md.j2",
        plan=state.plan,
        tasks=state.tasks(),
        instruction=prompt_view(run.issue)["instruction"],
        recent=comments_since(run.issue, state.plan_comments_seen),
        checklist=render_checklist(run.snapshot("in_progress", "")),
    )
    request += run.phases.addendum(run, "completion")
    messages = [run.system("completion"), user(request)]
    reply: CompletionReply = run.structured("completion", messages, CompletionReply)
    run.phases.on_completion_reply(run, reply)
    run.store.append(
        "completion", done=reply.done, summary=reply.summary.model_dump(), comment=reply.comment
    )
    run.summary = reply.summary
    if not reply.done:
        raise StopPass("needs_human", "the model did not consider the work done", [reply.comment])
    raise StopPass("completed", "all tasks finished", [reply.comment] if reply.comment else [])
