"""Feedback-based replanning (the seed's chosen design): the planning call again, with the
judge's issues and suggestions (and a person's guidance) as feedback.

The seed assumes the model regenerates the whole plan however it is asked, so the reply is taken
as a whole plan and then checked against the previous one (structure.py) before it is used. For
the finished work the findings become new tasks appended to the plan instead: what is done stays
done.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import Field, ValidationInfo, model_validator

from planner.config import RefinementConfig
from planner.core.errors import ModelBehaviourError
from planner.engine.context import PassContext
from planner.plan.documents import (
    Doc,
    Plan,
    PlannedAction,
    PlanningReply,
    PlanRules,
    Subtask,
    plan_problems,
)
from planner.refinement.judgement import QualityJudgement
from planner.refinement.structure import StructureValidation, stable_order, validate_structure
from planner.text.prompts import render


@dataclass(frozen=True)
class Feedback:
    """What the replan is told: the judgement it must answer, and a person's guidance."""

    judgement: QualityJudgement
    guidance: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {**self.judgement.model_dump(mode="json"), "guidance": self.guidance}


@dataclass(frozen=True)
class FollowUp:
    """New tasks for the finished work, or why there are none."""

    plan: Plan | None
    added: list[str] = field(default_factory=list)
    problem: str = ""


class FollowUpReply(Doc):
    """Tasks that resolve the judge's findings on the finished work."""

    subtasks: list[Subtask] = Field(min_length=1)
    actions: list[PlannedAction] = Field(default_factory=list)
    comment: str = ""

    @model_validator(mode="after")
    def _fits(self, info: ValidationInfo) -> FollowUpReply:
        context = info.context
        if isinstance(context, FollowUpRules):
            problems = plan_problems(self.extend(context.plan), context.rules)
            taken = [t.id for t in self.subtasks if context.plan.subtask(t.id) is not None]
            problems += [f"task id {task_id!r} already exists" for task_id in taken]
            if problems:
                raise ValueError("the new tasks do not fit the plan: " + "; ".join(problems))
        return self

    def extend(self, plan: Plan) -> Plan:
        subtasks = [*plan.task_decomposition.subtasks, *self.subtasks]
        order = plan.action_plan.execution_order + [t.id for t in self.subtasks]
        decomposition = plan.task_decomposition.model_copy(update={"subtasks": subtasks})
        actions = plan.action_plan.model_copy(
            update={
                "execution_order": stable_order(subtasks, order),
                "actions": [*plan.action_plan.actions, *self.actions],
            }
        )
        return plan.model_copy(update={"task_decomposition": decomposition, "action_plan": actions})


@dataclass(frozen=True)
class FollowUpRules:
    plan: Plan
    rules: PlanRules


class FeedbackReplanner:
    def __init__(self, port: PassContext, settings: RefinementConfig) -> None:
        self.port = port
        self.settings = settings

    def replan(self, plan: Plan, feedback: Feedback, completed: list[str]) -> StructureValidation:
        """The plan to continue with after a replan (the previous one when none is usable)."""
        try:
            reply = self.port.ask_document(
                "refinement_replan",
                self._replan_prompt(plan, feedback, completed),
                PlanningReply,
                system="planning",
            )
        except ModelBehaviourError as exc:
            return StructureValidation("kept_previous", plan, [f"no usable plan: {exc}"])
        if reply.error is not None:
            problem = f"the model asked questions instead of replanning: {reply.error.message}"
            return StructureValidation("kept_previous", plan, [problem])
        rules = self.port.plan_rules(plan)
        return validate_structure(plan, reply.plan(), self.settings, rules, frozenset(completed))

    def _replan_prompt(self, plan: Plan, feedback: Feedback, completed: list[str]) -> str:
        judgement = feedback.judgement
        return render(
            "refinement_replan.md.j2",
            planning_request=render("planning_request.md.j2", **self.port.planning_variables()),
            previous_plan=plan.model_dump_json(),
            **judgement.verdict(),
            guidance=feedback.guidance,
            completed=completed,
        )

    def follow_up(self, plan: Plan, feedback: Feedback) -> FollowUp:
        """New tasks for the judge's findings on the finished work."""
        rules = self.port.plan_rules(plan)
        room = rules.max_subtasks - len(plan.task_decomposition.subtasks)
        if room < 1:
            return FollowUp(None, problem=f"the plan already has {rules.max_subtasks} subtasks")
        prompt = self._follow_up_prompt(plan, feedback, room)
        try:
            reply = self.port.ask_document(
                "refinement_follow_up",
                prompt,
                FollowUpReply,
                FollowUpRules(plan, rules),
                "planning",
            )
        except ModelBehaviourError as exc:
            return FollowUp(None, problem=f"no usable tasks: {exc}")
        return FollowUp(reply.extend(plan), [task.id for task in reply.subtasks])

    def _follow_up_prompt(self, plan: Plan, feedback: Feedback, room: int) -> str:
        judgement = feedback.judgement
        return render(
            "refinement_follow_up.md.j2",
            plan=plan,
            checklist=self.port.checklist(),
            score=judgement.score,
            acceptable=judgement.is_acceptable,
            issues=judgement.issues or _unnamed(judgement),
            suggestions=judgement.suggestions,
            tools=self.port.tool_specs(),
            existing=[task.id for task in plan.task_decomposition.subtasks],
            max_new=room,
        )


def _unnamed(judgement: QualityJudgement) -> list[str]:
    """A rejection must name its problem for the follow-up; an acceptance has none."""
    return [] if judgement.is_acceptable else ["the reviewer did not name the problem"]
