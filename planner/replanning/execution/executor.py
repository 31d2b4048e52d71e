"""Carrying out a replan (replanning.md §7.4): the model writes the replacement, planner checks it.

Each level asks for exactly the part of the plan it re-enters and validates the result like a
fresh plan (ids, dependencies, order, tools), re-asking once with the precise problem:

    level 2  partial replan / plan revision  -> a plan revision of the remaining work
    level 3  action regeneration             -> a new action_plan for the same subtasks
    level 4  task redecomposition            -> new task_decomposition + action_plan
    level 5  goal re-check                   -> the planning request again, with the reason

Level 1 (retry) changes no plan: the replanning phase runs the failed call again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Self

from pydantic import Field, ValidationInfo, model_validator

from planner.core.errors import ModelBehaviourError
from planner.plan.documents import (
    ActionPlan,
    Doc,
    Plan,
    PlanningError,
    PlanningReply,
    PlanRevision,
    PlanRules,
    TaskDecomposition,
    plan_problems,
    repaired,
    restore_kept,
)
from planner.replanning.limits.levels import Level
from planner.replanning.port import ReplanPort
from planner.replanning.prompting.decision import ReplanDecision
from planner.replanning.prompting.prompt_builder import ReplanPromptBuilder


class ReplanFailed(Exception):
    """The model could not produce a usable replacement plan (§13.2)."""


class PlanningQuestion(Exception):
    """The goal re-check ended in questions for people instead of a plan."""

    def __init__(self, error: PlanningError, comment: str) -> None:
        super().__init__(error.message)
        self.error = error
        self.comment = comment


@dataclass(frozen=True)
class KeepRules:
    """Validation context of a replacement: the plan rules plus tasks that must survive."""

    rules: PlanRules
    keep: frozenset[str] = frozenset()


def _problems(plan: Plan, info: ValidationInfo) -> list[str]:
    context = info.context
    if not isinstance(context, KeepRules):
        return []
    ids = {task.id for task in plan.task_decomposition.subtasks}
    missing = sorted(context.keep - ids)
    problems = plan_problems(plan, context.rules)
    if missing:
        problems.append(f"completed tasks must stay in the plan: {', '.join(missing)}")
    return problems


def _repaired(plan: Plan, info: ValidationInfo) -> tuple[Plan, list[str]]:
    """A replacement plan repaired as a fresh plan is (unknown tools, order, references), so
    only what has no mechanical repair is sent back to the model."""
    context = info.context
    if not isinstance(context, KeepRules):
        return plan, []
    plan = plan.model_copy(deep=True)
    kept = restore_kept(plan, _current(info), context.keep)
    return plan, kept + repaired(plan, context.rules)


def _current(info: ValidationInfo) -> Plan:
    context = info.context
    assert isinstance(context, KeepRules) and context.rules.current_plan is not None
    return context.rules.current_plan


class RevisedPlanReply(PlanRevision):
    """Level 2: the seed's plan_revision object, checked against the plan it revises."""

    @model_validator(mode="after")
    def _executable(self, info: ValidationInfo) -> RevisedPlanReply:
        if isinstance(info.context, KeepRules):
            self.repair(_current(info), info.context.rules, info.context.keep)
            problems = _problems(self.apply_to(_current(info)), info)
            if problems:
                raise ValueError("the revised plan is not executable: " + "; ".join(problems))
        return self


class PartsReply(Doc):
    """A reply holding new `PARTS` of the plan (levels 3 and 4): the plan they make of the
    current one is repaired and checked as a fresh plan is, and the repaired parts are kept."""

    PARTS: ClassVar[tuple[str, ...]]
    """The fields of the reply that replace the plan's fields of the same name."""
    WHAT: ClassVar[str]
    """What the parts are, as the error that rejects them says."""
    if TYPE_CHECKING:  # a field of each reply, declared after its parts (the schema's order)
        repairs: list[str]

    def plan_of(self, current: Plan) -> Plan:
        """`current` with this reply's parts in place of its own."""
        return current.model_copy(update={part: getattr(self, part) for part in self.PARTS})

    @model_validator(mode="after")
    def _executable(self, info: ValidationInfo) -> Self:
        if isinstance(info.context, KeepRules):
            plan, self.repairs = _repaired(self.plan_of(_current(info)), info)
            for part in self.PARTS:
                setattr(self, part, getattr(plan, part))
            problems = _problems(plan, info)
            if problems:
                raise ValueError(f"{self.WHAT} is not executable: " + "; ".join(problems))
        return self


class ActionsReply(PartsReply):
    """Level 3: a new action plan for the same subtasks."""

    PARTS = ("action_plan",)
    WHAT = "the action plan"

    action_plan: ActionPlan
    comment: str = ""
    replan_review: Any = None
    repairs: list[str] = Field(default_factory=list, exclude=True)
    """What planner repaired in the new action plan (never from the model)."""


class TasksReply(PartsReply):
    """Level 4: subtasks decomposed again, with their action plan."""

    PARTS = ("task_decomposition", "action_plan")
    WHAT = "the new decomposition"

    task_decomposition: TaskDecomposition
    action_plan: ActionPlan
    comment: str = ""
    replan_review: Any = None
    repairs: list[str] = Field(default_factory=list, exclude=True)
    """What planner repaired in the new decomposition (never from the model)."""


@dataclass
class ReplanChange:
    """A replacement plan and how it enters the history."""

    plan: Plan
    level: Level
    reason: str
    changes: list[Any] = field(default_factory=list)
    folded_review: Any = None
    repairs: list[str] = field(default_factory=list)
    """What planner repaired in the model's replacement before accepting it."""


@dataclass(frozen=True)
class Situation:
    """What the executor needs to know about the plan being replaced."""

    plan: Plan
    completed: list[str]
    trigger: str
    answer: str = ""
    folded_review: str = ""
    """Folded mode: the instruction asking the reply to judge itself (empty otherwise)."""


class ReplanExecutor:
    def __init__(self, port: ReplanPort, prompts: ReplanPromptBuilder) -> None:
        self.port = port
        self.prompts = prompts

    def execute(
        self, level: Level, decision: ReplanDecision, situation: Situation
    ) -> ReplanChange | None:
        """The replacement plan for this level (None for a retry); raises ReplanFailed."""
        steps = {2: self._revise, 3: self._regenerate_actions, 4: self._redecompose}
        try:
            if level.number == 1:
                return None
            if level.number == 5:
                return self._recheck_goal(level, decision, situation)
            return steps[level.number](level, decision, situation)
        except ModelBehaviourError as exc:
            raise ReplanFailed(str(exc)) from None

    def _rules(self, situation: Situation, keep: bool) -> KeepRules:
        rules = self.port.plan_rules(situation.plan)
        return KeepRules(rules, frozenset(situation.completed) if keep else frozenset())

    def _revise(self, level: Level, decision: ReplanDecision, situation: Situation) -> ReplanChange:
        prompt = self.prompts.build_revise_prompt(
            situation.plan,
            decision,
            level_name=level.name,
            trigger=situation.trigger,
            checklist=self.port.checklist(),
            completed=situation.completed,
        )
        reply = self.port.ask_document(
            "replan_revise", prompt, RevisedPlanReply, self._rules(situation, keep=True)
        )
        return ReplanChange(
            reply.apply_to(situation.plan),
            level,
            reply.reason,
            list(reply.changes),
            repairs=reply.repairs,
        )

    def _regenerate_actions(
        self, level: Level, decision: ReplanDecision, situation: Situation
    ) -> ReplanChange:
        prompt = self.prompts.build_regenerate_actions_prompt(
            situation.plan,
            decision,
            self.port.tool_specs(),
            situation.completed,
            folded=situation.folded_review,
        )
        reply = self.port.ask_document(
            "replan_actions", prompt, ActionsReply, self._rules(situation, keep=True)
        )
        return _parts_change(reply, level, decision, situation)

    def _redecompose(
        self, level: Level, decision: ReplanDecision, situation: Situation
    ) -> ReplanChange:
        prompt = self.prompts.build_redecompose_prompt(
            situation.plan,
            decision,
            self.port.tool_specs(),
            self.port.checklist(),
            folded=situation.folded_review,
        )
        reply = self.port.ask_document(
            "replan_tasks", prompt, TasksReply, self._rules(situation, keep=False)
        )
        return _parts_change(reply, level, decision, situation)

    def _recheck_goal(
        self, level: Level, decision: ReplanDecision, situation: Situation
    ) -> ReplanChange:
        prompt = self.prompts.build_goal_recheck_prompt(
            self.port.planning_variables(),
            decision.reasoning or situation.trigger,
            decision.issues_found,
            answer=situation.answer,
            folded=situation.folded_review,
        )
        reply = self.port.ask_document(
            "replan_goal", prompt, PlanningReply, self.port.plan_rules(None), system="planning"
        )
        if reply.error is not None:
            raise PlanningQuestion(reply.error, reply.comment)
        reason = _reason(decision, reply.comment)
        return ReplanChange(reply.plan(), level, reason, [], reply.replan_review, reply.repairs)


def _parts_change(
    reply: ActionsReply | TasksReply, level: Level, decision: ReplanDecision, situation: Situation
) -> ReplanChange:
    plan = reply.plan_of(situation.plan)
    reason = _reason(decision, reply.comment)
    return ReplanChange(plan, level, reason, [], reply.replan_review, reply.repairs)


def _reason(decision: ReplanDecision, comment: str) -> str:
    return decision.reasoning or comment or "the model decided to replan"
