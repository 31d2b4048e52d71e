"""Every JSON document of the planning process (seed: planning-process.md §2, §7.4.3, §10).

Models are lenient about extra keys (models add commentary) and strict about what we use.
Semantic checks of a plan (ids, dependencies, order, limits, tools) run inside validation when a
`PlanRules` object is passed as validation context, so a bad plan is re-asked like bad JSON.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from planner.core.tool_names import canonical_tool, unknown_tool_problem
from planner.plan.clarifications import check_clarification, echoes_planner


class Doc(BaseModel):
    model_config = ConfigDict(extra="ignore")


class GoalUnderstanding(Doc):
    main_objective: str = Field(min_length=1)
    success_criteria: list[str] = Field(default_factory=list)
    constraints: list[str] = Field(default_factory=list)
    context: str = ""


NO_DEPENDENCY = frozenset({"", "none", "null", "n/a", "na", "-", "nothing"})
"""What small models write for "no dependency" (seen: Qwen2.5-Coder 1.5B's `["none"]`)."""


class Subtask(Doc):
    id: str = Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9_.\-]+$")
    description: str
    dependencies: list[str] = Field(default_factory=list)
    estimated_complexity: Literal["low", "medium", "high"] = "medium"
    required_tools: list[str] = Field(default_factory=list)

    @field_validator("dependencies", mode="before")
    @classmethod
    def _placeholders_are_no_dependency(cls, value: Any) -> Any:
        """`["none"]` means no dependency, not a dependency on a task called none."""
        if isinstance(value, str):
            value = [] if value.strip().casefold() in NO_DEPENDENCY else [value]
        if isinstance(value, list):
            return [
                v
                for v in value
                if not (isinstance(v, str) and v.strip().casefold() in NO_DEPENDENCY)
            ]
        return value


class TaskDecomposition(Doc):
    reasoning: str = ""
    subtasks: list[Subtask] = Field(min_length=1)


class PlannedAction(Doc):
    task_id: str
    action_type: str = "tool_call"
    tool: str | None = None
    purpose: str = ""
    expected_outcome: str = ""
    fallback_strategy: str = ""


class ActionPlan(Doc):
    execution_order: list[str] = Field(min_length=1)
    actions: list[PlannedAction] = Field(default_factory=list)


class Plan(Doc):
    """The plan as stored in history: the three planning sections."""

    goal_understanding: GoalUnderstanding
    task_decomposition: TaskDecomposition
    action_plan: ActionPlan

    def subtask(self, task_id: str) -> Subtask | None:
        return next((t for t in self.task_decomposition.subtasks if t.id == task_id), None)

    def actions_for(self, task_id: str) -> list[PlannedAction]:
        return [a for a in self.action_plan.actions if a.task_id == task_id]

    def tools_for(self, task_id: str) -> list[str]:
        """The tools the task's planned actions name."""
        return [a.tool for a in self.actions_for(task_id) if a.tool]


@dataclass(frozen=True)
class PlanRules:
    """What a plan must satisfy beyond its shape."""

    max_subtasks: int = 100
    tool_names: frozenset[str] | None = None
    current_plan: Plan | None = None
    tool_descriptions: Mapping[str, str] | None = None
    """One line per tool name, so an invented tool's refusal can say what the closest do."""
    question_reference: str | None = None
    """What a clarification's questions must be about (the issue, the repository map); None
    leaves relevance unchecked. Empty or echoed clarifications are refused either way."""
    issue_text: str | None = None
    """The issue's own words, without the repository map: where a question's answer may be
    stated (None: question_reference)."""
    repair: Callable[[Plan, Mapping[str, str] | None, frozenset[str]], list[str]] | None = None
    """Repairs a plan's mechanical defects in place, one line per repair
    (planner.plan.repair), given the tools and the ids of current_plan's tasks (a
    replacement keeps those as they are); None: every defect is re-asked."""

    def tools(self) -> Mapping[str, str] | None:
        if self.tool_names is None:
            return None
        described = self.tool_descriptions or {}
        return {name: described.get(name, "") for name in sorted(self.tool_names)}


def plan_problems(plan: Plan, rules: PlanRules) -> list[str]:
    """Every reason this plan cannot be executed; empty when it is valid."""
    subtasks = plan.task_decomposition.subtasks
    problems = _limit_problems(len(subtasks), rules.max_subtasks)
    problems += _id_problems(subtasks)
    ids = {task.id for task in subtasks}
    problems += _dependency_problems(subtasks, ids)
    problems += _cycle_problems(subtasks, ids)
    problems += _order_problems(plan, ids)
    problems += _action_problems(plan.action_plan.actions, ids, rules.tools())
    return problems


def _limit_problems(count: int, limit: int) -> list[str]:
    return [f"the plan has {count} subtasks; at most {limit} are allowed"] if count > limit else []


def _id_problems(subtasks: list[Subtask]) -> list[str]:
    duplicates = _repeated(task.id for task in subtasks)
    return [f"subtask id {task_id!r} is used more than once" for task_id in duplicates]


def _dependency_problems(subtasks: list[Subtask], ids: set[str]) -> list[str]:
    problems = []
    for task in subtasks:
        for dep in task.dependencies:
            if dep == task.id:
                problems.append(f"subtask {task.id!r} depends on itself")
            elif dep not in ids:
                problems.append(f"subtask {task.id!r} depends on {dep!r}, which does not exist")
    return problems


def _cycle_problems(subtasks: list[Subtask], ids: set[str]) -> list[str]:
    """Kahn's algorithm: whatever cannot be ordered sits on a cycle (or depends on one)."""
    remaining = {t.id: {d for d in t.dependencies if d in ids and d != t.id} for t in subtasks}
    while ready := [task_id for task_id, deps in remaining.items() if not deps]:
        for task_id in ready:
            del remaining[task_id]
        for deps in remaining.values():
            deps.difference_update(ready)
    if not remaining:
        return []
    return [f"dependencies form a cycle among: {', '.join(sorted(remaining))}"]


def _order_problems(plan: Plan, ids: set[str]) -> list[str]:
    order = plan.action_plan.execution_order
    problems = [
        f"execution_order names {t!r}, which is not a subtask" for t in order if t not in ids
    ]
    problems += [f"execution_order lists {t!r} more than once" for t in _repeated(order)]
    problems += [f"execution_order leaves out subtask {t!r}" for t in sorted(ids - set(order))]
    position = {task_id: index for index, task_id in enumerate(order)}
    for task in plan.task_decomposition.subtasks:
        for dep in task.dependencies:
            if task.id in position and dep in position and position[dep] > position[task.id]:
                problems.append(f"execution_order runs {task.id!r} before its dependency {dep!r}")
    return problems


def _repeated(items: Iterable[str]) -> list[str]:
    counts = Counter(items)
    return sorted(item for item, count in counts.items() if count > 1)


def _action_problems(
    actions: list[PlannedAction], ids: set[str], tools: Mapping[str, str] | None
) -> list[str]:
    problems = [
        f"an action names task {a.task_id!r}, which is not a subtask"
        for a in actions
        if a.task_id not in ids
    ]
    if tools is not None:
        unknown = sorted({a.tool for a in actions if a.tool and a.tool not in tools})
        problems += [
            f"an action names a tool that does not exist: {unknown_tool_problem(name, tools)}"
            for name in unknown
        ]
        if unknown:
            problems.append(f"available tools: {', '.join(tools)}")
    return problems


def map_tool_names(plan: Plan, tools: Mapping[str, str] | None) -> None:
    """Actions naming a real tool in another spelling are given its real name."""
    if tools is None:
        return
    for action in plan.action_plan.actions:
        if action.tool and action.tool not in tools:
            action.tool = canonical_tool(action.tool, tools) or action.tool


def repaired(plan: Plan, rules: PlanRules) -> list[str]:
    """Repair `plan` in place as far as mechanical repairs go (tool spellings, references that
    are not tasks, then rules.repair); one line per repair that people should see."""
    map_tool_names(plan, rules.tools())
    drop_non_task_references(plan, rules)
    if rules.repair is None:
        return []
    current = rules.current_plan.task_decomposition.subtasks if rules.current_plan else []
    return rules.repair(plan, rules.tools(), frozenset(task.id for task in current))


def restore_kept(plan: Plan, current: Plan, keep: frozenset[str]) -> list[str]:
    """The tasks in `keep` (completed ones) that a replacement of `current` left out are put
    back first, with their actions: they ran, and the plan is the record of what was done.
    The 1.5B's revisions drop them, and re-asking got the same plan twice, then a failed pass."""
    ids = {task.id for task in plan.task_decomposition.subtasks}
    missing = [t for t in current.action_plan.execution_order if t in keep and t not in ids]
    back = [task.model_copy(deep=True) for t in missing if (task := current.subtask(t))]
    for task in back:
        task.dependencies = [d for d in task.dependencies if d in keep]
    plan.task_decomposition.subtasks = back + plan.task_decomposition.subtasks
    order = [t for t in plan.action_plan.execution_order if t not in missing]
    plan.action_plan.execution_order = missing + order
    ran = [a.model_copy() for a in current.action_plan.actions if a.task_id in missing]
    plan.action_plan.actions = ran + plan.action_plan.actions
    return [f"completed task {t!r} kept in the plan (the replacement left it out)" for t in missing]


def drop_non_task_references(plan: Plan, rules: PlanRules) -> None:
    """A task depends on tasks. Small models list the things a task needs instead: tools
    (Qwen2.5-Coder 0.5B: `"dependencies": ["read_file", "edit_file"]`), files and functions
    (1.5B: `["temperature.py", "to_fahrenheit"]`), in `dependencies` and in `execution_order`.
    A name that is a tool, or a word of the issue or the repository map, is dropped (an order
    left incomplete is completed in the plan's own subtask order); any other unknown name, a
    missing or misspelt task, is still sent back to the model."""
    subtasks = plan.task_decomposition.subtasks
    ids = {task.id for task in subtasks}
    tools = rules.tools() or {}
    words = _words(rules.question_reference or "")

    def names_another_thing(name: str) -> bool:
        bare = name.strip().removesuffix("()")
        known = bare in tools or canonical_tool(bare, tools) is not None
        return name not in ids and (known or bare.casefold() in words)

    for task in subtasks:
        task.dependencies = [d for d in task.dependencies if not names_another_thing(d)]
    order = plan.action_plan.execution_order
    kept = [task_id for task_id in order if not names_another_thing(task_id)]
    if len(kept) < len(order):
        missing = [task.id for task in subtasks if task.id not in kept]
        plan.action_plan.execution_order = kept + missing


WORD = re.compile(r"[\w./-]+")


def _words(text: str) -> set[str]:
    """The names a text mentions (paths, identifiers), as dependencies would spell them."""
    return {word.strip("./-").casefold() for word in WORD.findall(text)} | {
        word.casefold() for word in WORD.findall(text)
    }


def _rules(info: ValidationInfo) -> PlanRules | None:
    context = info.context
    return context if isinstance(context, PlanRules) else None


class PlanningError(Doc):
    """§10.1.1: the model cannot plan yet and asks a person."""

    type: str = "unclear_goal"
    message: str
    clarification_needed: list[str] = Field(default_factory=list)
    assumptions: list[str] = Field(default_factory=list)


NO_ACTION_PLAN = "the reply had no action_plan: the tasks run in their listed order"


def _listed_action_plan(decomposition: TaskDecomposition) -> ActionPlan:
    """The action plan a reply left out: the tasks in their listed order (repaired to follow
    the dependencies), each with its required tools as planned actions. The 1.5B ended a
    planning reply after the tasks, twice alike, and the pass failed at planning."""
    subtasks = decomposition.subtasks
    actions = [
        PlannedAction(task_id=task.id, tool=tool, purpose=task.description)
        for task in subtasks
        for tool in task.required_tools
        if tool != "finish_task"  # ending a task is no planned action
    ]
    return ActionPlan(execution_order=[task.id for task in subtasks], actions=actions)


class PlanningReply(Doc):
    """The planning-phase reply: either a full plan or a planning error."""

    phase: Literal["planning"] = "planning"
    goal_understanding: GoalUnderstanding | None = None
    task_decomposition: TaskDecomposition | None = None
    action_plan: ActionPlan | None = None
    error: PlanningError | None = None
    comment: str = ""
    repairs: list[str] = Field(default_factory=list, exclude=True)
    """What planner repaired in the plan before accepting it (never from the model)."""
    replan_review: Any = None
    """Folded replanning only: the model's own decisions on the three planning phases, parsed
    leniently by planner.replanning (a bad review never makes the plan re-asked)."""

    @model_validator(mode="after")
    def _complete_and_valid(self, info: ValidationInfo) -> PlanningReply:
        rules = _rules(info)
        if self.error is not None:
            if rules is not None:
                self._only_real_questions(self.error, rules)
            return self
        listed = rules is not None and self.action_plan is None
        if listed and self.task_decomposition is not None:
            self.action_plan = _listed_action_plan(self.task_decomposition)
        if not (self.goal_understanding and self.task_decomposition and self.action_plan):
            raise ValueError(
                "a planning reply needs goal_understanding, task_decomposition and action_plan "
                "(or an error object asking for clarification)"
            )
        if rules is not None:
            self._repair(rules)
            if listed:
                self.repairs.insert(0, NO_ACTION_PLAN)
        problems = plan_problems(self.plan(), rules) if rules else []
        if problems:
            raise ValueError("the plan is not executable: " + "; ".join(problems))
        return self

    def _repair(self, rules: PlanRules) -> None:
        plan = self.plan()
        self.repairs = repaired(plan, rules)
        self.goal_understanding = plan.goal_understanding
        self.task_decomposition = plan.task_decomposition
        self.action_plan = plan.action_plan

    def _only_real_questions(self, error: PlanningError, rules: PlanRules) -> None:
        """A clarification people cannot answer is refused (and re-asked as a plan); real
        questions are kept without the degenerate ones, and echoed text is dropped."""
        check = check_clarification(
            error.message, error.clarification_needed, rules.question_reference
        )
        if check.problem is not None:
            raise ValueError(
                f"the clarification is not a question for the people on the issue: "
                f"{check.problem}. Do not ask. Plan the work now, proceeding on stated "
                "assumptions, and list them under goal_understanding.constraints"
            )
        error.clarification_needed = list(check.questions)
        if echoes_planner(error.message):
            error.message = "planner needs answers before it can plan this work"
        if echoes_planner(self.comment):
            self.comment = ""

    def plan(self) -> Plan:
        assert self.goal_understanding and self.task_decomposition and self.action_plan
        return Plan(
            goal_understanding=self.goal_understanding,
            task_decomposition=self.task_decomposition,
            action_plan=self.action_plan,
        )


class Reflection(Doc):
    action_evaluated: str = ""
    status: Literal["success", "failure", "partial"]
    evaluation: str
    alignment_with_plan: str = ""
    issues_identified: list[str] = Field(default_factory=list)
    plan_revision_needed: bool


class RevisionChange(Doc):
    type: str = "modify_action"
    details: str = ""


class PlanRevision(Doc):
    reason: str
    changes: list[RevisionChange | str] = Field(default_factory=list)
    updated_action_plan: ActionPlan
    updated_subtasks: list[Subtask] | None = None
    """Optional full replacement of the subtask list (new or split tasks)."""
    repairs: list[str] = Field(default_factory=list, exclude=True)
    """What planner repaired in the revised plan (never from the model)."""

    def apply_to(self, plan: Plan) -> Plan:
        subtasks = self.updated_subtasks or plan.task_decomposition.subtasks
        decomposition = plan.task_decomposition.model_copy(update={"subtasks": subtasks})
        return plan.model_copy(
            update={"task_decomposition": decomposition, "action_plan": self.updated_action_plan}
        )

    def repair(
        self, current: Plan, rules: PlanRules, keep: frozenset[str] = frozenset()
    ) -> list[str]:
        """Repair the plan this revision makes of `current` (as a fresh plan is repaired, after
        the tasks in `keep` it left out are put back) and keep the result; one line per repair."""
        plan = self.apply_to(current).model_copy(deep=True)
        self.repairs = restore_kept(plan, current, keep) + repaired(plan, rules)
        if plan.task_decomposition.subtasks != current.task_decomposition.subtasks:
            self.updated_subtasks = plan.task_decomposition.subtasks
        self.updated_action_plan = plan.action_plan
        return self.repairs


class ReflectionReply(Doc):
    phase: Literal["reflection"] = "reflection"
    reflection: Reflection
    plan_revision: PlanRevision | None = None
    comment: str = ""

    @model_validator(mode="after")
    def _revision_when_needed(self, info: ValidationInfo) -> ReflectionReply:
        if not self.reflection.plan_revision_needed:
            return self
        if self.plan_revision is None:
            raise ValueError("plan_revision_needed is true but plan_revision is missing")
        rules = _rules(info)
        if rules and rules.current_plan:
            self.plan_revision.repair(rules.current_plan, rules)
            revised = self.plan_revision.apply_to(rules.current_plan)
            problems = plan_problems(revised, rules)
            if problems:
                raise ValueError("the revised plan is not executable: " + "; ".join(problems))
        return self


class CompletionSummary(Doc):
    goal_achieved: bool
    tasks_completed: int = Field(ge=0)
    tasks_failed: int = Field(default=0, ge=0)
    key_outcomes: list[str] = Field(default_factory=list)


class CompletionReply(Doc):
    phase: Literal["completion"] = "completion"
    summary: CompletionSummary
    done: bool
    comment: str = ""
    replan_decision: Any = None
    """Folded replanning only: the §8 decision of the final evaluation (parsed leniently)."""


class InterventionSummary(Doc):
    goal_achieved: bool = False
    tasks_completed: int
    tasks_failed: int
    revision_attempts: int
    reason: str
    current_state: str
    recommendations: list[str] = Field(default_factory=list)


class HumanIntervention(Doc):
    """§10.4: written by planner (not the model) when it must stop and ask a person."""

    phase: Literal["completion"] = "completion"
    status: Literal["requires_human_intervention"] = "requires_human_intervention"
    summary: InterventionSummary
    comment: str


class FunctionCall(Doc):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ExecutionRecord(Doc):
    """The seed's execution-phase JSON, as recorded for each tool call."""

    phase: Literal["execution"] = "execution"
    current_task: str | None
    function_call: FunctionCall
    comment: str = ""
