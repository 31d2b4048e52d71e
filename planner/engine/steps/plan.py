"""Plan step (seed: planning-process.md §7.4.1 phases 1-3): one planning call makes the plan.

make_plan(run, feedback) asks for goal understanding, task decomposition and action plan in one
document, plans on stated assumptions once the question budget is spent, and otherwise stops
the pass with the model's questions. The plan is saved to the history before it returns.

A planning reply that never ends (seed §10.1.2, a decomposition that fails: the 1.5B listed
"Read `shop/report.py` …" as subtask 7, 8, 9 … until it was stopped, twice), or a JSON reply
that twice lacks the plan's parts (the 1.5B, asked to implement a stub), gets the coarsest
decomposition instead of a failed pass: the issue as one task, as without planning. A reply
that is not JSON at all is still fatal (seed §7.8, level 4: JSON parse errors). With
planning.decompose false that one task is the plan, and no planning call is made.
"""

from __future__ import annotations

from typing import Any

from planner.core.errors import ModelBehaviourError
from planner.engine.context import PassContext
from planner.memory.questions import questions_asked
from planner.model.conversation import assistant, iso, user
from planner.model.replies import extract_json
from planner.outcome.flow import StopPass
from planner.plan.documents import PlanningReply
from planner.text.issue import sanitize_untrusted
from planner.text.prompts import render


def make_plan(run: PassContext, feedback: str = "") -> PlanningReply:
    if not run.config.planning.decompose:
        return _saved(run, _issue_as_one_task(run, ""))
    request = render("planning_request.md.j2", **run.planning_variables())
    request += run.phases.addendum(run, "planning") + ("\n" + feedback if feedback else "")
    messages = [run.system("planning"), user(request)]
    try:
        reply = _planning_reply(run, messages)
    except ModelBehaviourError as unusable:
        if not (unusable.cut_off or _a_plan_without_its_parts(unusable)):
            raise
        reply = _issue_as_one_task(run, ONE_TASK_REPAIR if unusable.cut_off else NO_PLAN_REPAIR)
    if reply.error is not None:
        _stop_with_questions(run, reply)
    return _saved(run, reply)


def _saved(run: PassContext, reply: PlanningReply) -> PlanningReply:
    """The plan, in the history and the tracking comment."""
    if reply.repairs:
        run.store.append("plan_repaired", repairs=reply.repairs)
    # The comments the plan was made from: later prompts show the ones that came after.
    seen = [comment.id for comment in run.issue.comments if comment.id]
    run.store.save_plan(reply.plan().model_dump(), comments_seen=seen)
    run.report(run.snapshot("in_progress", "planned"))
    return reply


def _planning_reply(run: PassContext, messages: list[dict[str, Any]]) -> PlanningReply:
    reply: PlanningReply = run.structured("planning", messages, PlanningReply)
    why = _why_no_questions(run) if reply.error is not None else ""
    return _plan_on_assumptions(run, messages, reply, why) if why else reply


ONE_TASK = (
    "Make the change the issue asks for, in every file it concerns, and finish when it is done"
)


ONE_TASK_REPAIR = (
    "planned as one task: the planning reply was cut off twice before its JSON ended (the "
    "model kept repeating itself, or reached the output limit)"
)


NO_PLAN_REPAIR = (
    "planned as one task: the planning reply was JSON without a usable plan twice (parts "
    "missing or invalid)"
)


PLAN_PARTS = ("goal_understanding", "task_decomposition", "action_plan")


def _a_plan_without_its_parts(unusable: ModelBehaviourError) -> bool:
    """The reply was an attempt at a plan (JSON holding some of its parts) that validation
    refused; not prose, nor JSON of anything else."""
    try:
        document = extract_json(unusable.raw)
    except ModelBehaviourError:
        return False
    return isinstance(document, dict) and any(part in document for part in PLAN_PARTS)


def _goal_from_title(run: PassContext) -> str:
    """The issue's title says what it is about; its number means nothing to the model (nor,
    for a local issue file, to anyone: `ISSUE.md` has none)."""
    title = " ".join(run.issue.title.split())
    return title or f"Resolve issue #{run.issue.number}"


def _issue_as_one_task(run: PassContext, why: str) -> PlanningReply:
    """The coarsest decomposition: one task that is the whole issue (its files are shown from
    the issue's text, as without planning)."""
    document = {
        "goal_understanding": {"main_objective": _goal_from_title(run)},
        "task_decomposition": {"subtasks": [{"id": "task_1", "description": ONE_TASK}]},
        "action_plan": {"execution_order": ["task_1"]},
    }
    reply = PlanningReply.model_validate(document, context=run.plan_rules(None))
    if why:
        reply.repairs.insert(0, why)
    return reply


def _stop_with_questions(run: PassContext, reply: PlanningReply) -> None:
    assert reply.error is not None
    run.store.append(
        "clarification",
        error=reply.error.model_dump(),
        comment=reply.comment,
        asked_at=iso(run.clock()),
    )
    run.questions = list(reply.error.clarification_needed)
    run.phases.on_clarification(run, reply.error, None)
    raise StopPass(
        "needs_human",
        f"clarification needed: {reply.error.message}",
        [reply.comment or reply.error.message],
    )


def _why_no_questions(run: PassContext) -> str:
    """Why the people may not be asked now ("" = they may): the question budget is spent, or
    a phase's limits say no (max_total_replans: 0 allows no question at all)."""
    used, limit = _questions_used(run), _question_limit(run)
    if used >= limit:
        return (
            f"you have already asked the people on this issue {used} time(s), the most this "
            f"repository allows ({limit})"
        )
    return run.phases.no_more_questions(run)


def _question_limit(run: PassContext) -> int:
    return run.config.planning.replanning.goal_understanding.max_clarification_requests


def _questions_used(run: PassContext) -> int:
    return questions_asked(run.store.entries())


def _plan_on_assumptions(
    run: PassContext, messages: list[dict[str, Any]], asking: PlanningReply, why: str
) -> PlanningReply:
    """No question may be asked (`why`): the model must plan on its stated assumptions."""
    assert asking.error is not None
    assumptions = [sanitize_untrusted(a, 1_000) for a in asking.error.assumptions]
    run.store.append("assumed", assumptions=assumptions, reason=why)
    run.phases.on_clarification(run, asking.error, assumptions)
    instruction = render("plan_on_assumptions.md.j2", why=why, assumptions=assumptions)
    conversation = [*messages, assistant(asking.model_dump_json(), []), user(instruction)]
    reply: PlanningReply = run.structured("planning", conversation, PlanningReply)
    return reply
