"""ReplanPromptBuilder: the decision prompts of each phase (replanning.md §4.2-§8.2, §14.3).

One template per phase lives in prompts/. The three planning decision points share one call
(the combined review): the planning reply produces all three sections at once, so one request
judges them together, each under the seed's own wording and criteria.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from planner.core.interfaces import ToolSpec
from planner.engine.phase import ReviewSection
from planner.plan.documents import Plan
from planner.replanning.prompting.decision import PHASE_TITLES, PHASE_TYPES, ReplanDecision
from planner.replanning.prompting.facts import ActionFacts, EvaluationFacts
from planner.text.budget import (
    ACTIONS_TOKENS,
    ISSUE_REREAD_TOKENS,
    TASK_LIST_TOKENS,
    within_tokens,
)
from planner.text.prompts import render

COMMON_FIELDS: tuple[tuple[str, str], ...] = (
    ("replan_needed", "bool"),
    ("confidence", "0-1"),
    ("reasoning", "str"),
    ("replan_type", "TYPES"),
    ("replan_level", "1-5"),
    ("issues_found", "[str]"),
    ("recommended_actions", "[str]"),
    ("clarification_needed", "bool"),
    ("clarification_questions", "[str]"),
)
"""The seed's decision fields (§2.4), each with a short shape: the format is one line, since a
decision request has a budget of 500 tokens (planning-process.md §13.4). target_phase is left
out of the text: replan_level names the phase (planner.replanning.limits.levels), and the response
schema still offers the field."""
PHASE_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "goal_understanding": (("assumptions_to_make", '["what you assume if nobody answers"]'),),
    "task_decomposition": (
        ("missing_steps", "[str]"),
        ("recommended_granularity", '"finer|coarser|as is, and why"'),
        ("scope_adjustment", "str"),
    ),
    "action_sequence": (
        ("unavailable_tools", "[str]"),
        ("alternative_tools", "[str]"),
        ("dependency_issues", "[str]"),
        ("plan_adjustments", "[str]"),
    ),
    "execution": (
        ("error_classification", '"transient|persistent|fatal"'),
        ("recovery_strategy", "str"),
        ("affected_actions", "[str]"),
    ),
    "reflection": (
        ("evaluation_result", '"success|partial_success|failure"'),
        ("achievement_rate", "0-100"),
        ("revision_scope", '"minor|moderate|major"'),
    ),
}
"""The evaluation's issues_identified and additional_actions are left out of the text: the
notice merges them with issues_found and recommended_actions, which every decision has."""
REVIEW_QUESTIONS = {
    "goal_understanding": "is the goal understood well enough? is anything unclear?",
    "task_decomposition": "is the decomposition appropriate and executable? is anything missing?",
    "action_sequence": "is the action plan executable? are the tools available?",
}
ISSUE_CHARS = 8_000
GOAL_CHARS = 300
HISTORY_SHOWN = 3
"""Replans named (with their reasons) in a decision prompt; the count covers all of them."""
REASON_CHARS = 100
HISTORY_CHARS = 4_000


@dataclass(frozen=True)
class PlanningInputs:
    """What the planning decision points look at."""

    plan: Plan
    issue: dict[str, Any]
    tools: list[ToolSpec]
    history: str


class ReplanPromptBuilder:
    def __init__(self, max_subtasks: int = 100) -> None:
        self.max_subtasks = max_subtasks

    # -- the decision format ({replan_decision_format} of the seed) -------------------------

    def decision_format(
        self,
        phase: str,
        key: str | None = "replan_decision",
        common: bool = True,
        own: bool = True,
    ) -> str:
        """The JSON shape of a decision on one line; common=False leaves out the fields every
        phase shares except replan_type (the combined review states them once); own=False the
        phase's own fields (an execution check after a success has no error to classify)."""
        types = "|".join(PHASE_TYPES[phase])
        shared = COMMON_FIELDS if common else (("replan_type", "TYPES"),)
        fields = [*shared, *(PHASE_FIELDS[phase] if own else ())]
        shapes = [(name, f'"{types}"' if shape == "TYPES" else shape) for name, shape in fields]
        # Keys unquoted (a type notation, not JSON): the quotes would cost 2 tokens a field.
        document = "{" + ", ".join(f"{name}: {shape}" for name, shape in shapes) + "}"
        return f"{{{key}: {document}}}" if key else document

    def common_format(self) -> str:
        return ", ".join(
            f"{name}: {shape}" for name, shape in COMMON_FIELDS if name != "replan_type"
        )

    def _section_format(self, phase: str) -> str:
        return self.decision_format(phase, None, common=False)

    # -- §4.2, §5.2, §6.2: the planning phases --------------------------------------------

    def build_goal_understanding_prompt(self, format_text: str | None = None) -> str:
        return render(
            "replan_goal_understanding.md.j2",
            format=format_text or self.decision_format("goal_understanding"),
        )

    def build_task_decomposition_prompt(self, format_text: str | None = None) -> str:
        return render(
            "replan_task_decomposition.md.j2",
            format=format_text or self.decision_format("task_decomposition"),
        )

    def build_action_sequence_prompt(self, format_text: str | None = None) -> str:
        return render(
            "replan_action_sequence.md.j2",
            format=format_text or self.decision_format("action_sequence"),
        )

    def build_plan_review_prompt(
        self,
        inputs: PlanningInputs,
        phases: Sequence[str],
        answer: str = "",
        extras: Sequence[ReviewSection] = (),
    ) -> str:
        """The three planning decision points (or those still owed) in one request. The plan is
        shown once, as an outline every decision point (and the quality judgement riding in the
        review) reads, with the request and what happened before this plan."""
        builders = {
            "goal_understanding": self.build_goal_understanding_prompt,
            "task_decomposition": self.build_task_decomposition_prompt,
            "action_sequence": self.build_action_sequence_prompt,
        }
        sections = [
            {"name": phase, "text": builders[phase](self._section_format(phase))}
            for phase in phases
        ]
        return render(
            "replan_plan_review.md.j2",
            plan=inputs.plan,
            tools=", ".join(tool.name for tool in inputs.tools) or "(none)",
            issue=_reread(inputs.issue),
            context=_context(inputs),
            sections=sections,
            extras=extras,
            keys=_keys([*phases, *(extra.name for extra in extras)]),
            common=self.common_format(),
            answer=answer,
        )

    # -- §7.2 execution, §8.2 monitoring and reflection -------------------------------------

    def build_execution_prompt(
        self, facts: ActionFacts, answer: str, *, goal: str, replans: str
    ) -> str:
        return render(
            "replan_execution.md.j2",
            **{k: v for k, v in facts.to_dict().items() if k not in ("task_id", "can_retry")},
            remaining=within_tokens(facts.remaining_actions, TASK_LIST_TOKENS, "task list", PLAN),
            goal=_one_line(goal)[:GOAL_CHARS],
            replans=replans,
            format=self.decision_format("execution", own=bool(facts.error_info)),
            answer=answer,
        )

    def build_reflection_prompt(self, facts: EvaluationFacts, answer: str, *, replans: str) -> str:
        return render(
            "replan_reflection.md.j2",
            replans=replans,
            goal=facts.goal,
            success_criteria=facts.success_criteria,
            execution_summary=facts.execution_summary,
            completed_actions=within_tokens(
                facts.completed_actions, ACTIONS_TOKENS, "action list", HISTORY, newest=True
            ),
            current_state=facts.current_state,
            format=self.decision_format("reflection"),
            answer=answer,
        )

    # -- folded mode: the decision inside the phase's own reply ------------------------------

    def build_folded_review(self, phases: Sequence[str]) -> str:
        sections = [{"name": p, "question": REVIEW_QUESTIONS[p]} for p in phases]
        return render(
            "replan_folded_review.md.j2",
            keys=_keys(phases),
            sections=sections,
            format=self.decision_format("goal_understanding", None),
        )

    def build_folded_completion(self, answer: str = "") -> str:
        return render(
            "replan_folded_completion.md.j2",
            format=self.decision_format("reflection"),
            answer=answer,
        )

    def build_folded_execution(self) -> str:
        return render("replan_folded_execution.md.j2")

    # -- escalation and replan execution --------------------------------------------------

    def build_alternative_prompt(
        self, phase: str, decision: ReplanDecision, reason: str, blocked: str
    ) -> str:
        return render(
            "replan_alternative.md.j2",
            phase=PHASE_TITLES.get(phase, phase).lower(),
            reason=reason,
            decision=decision.model_dump_json(exclude_defaults=True),
            blocked=blocked,
            format=self.decision_format(phase if phase in PHASE_FIELDS else "execution"),
        )

    def build_revise_prompt(
        self,
        plan: Plan,
        decision: ReplanDecision,
        *,
        level_name: str,
        trigger: str,
        checklist: str,
        completed: list[str],
    ) -> str:
        return render(
            "replan_revise.md.j2",
            plan=plan,
            decision=decision,
            level_name=level_name,
            trigger=trigger,
            checklist=checklist,
            completed=completed,
        )

    def build_regenerate_actions_prompt(
        self,
        plan: Plan,
        decision: ReplanDecision,
        tools: list[ToolSpec],
        completed: list[str],
        folded: str = "",
    ) -> str:
        return render(
            "replan_regenerate_actions.md.j2",
            plan=plan,
            decision=decision,
            tools=tool_lines(tools),
            completed=completed,
            folded=folded,
        )

    def build_redecompose_prompt(
        self,
        plan: Plan,
        decision: ReplanDecision,
        tools: list[ToolSpec],
        checklist: str,
        folded: str = "",
    ) -> str:
        return render(
            "replan_redecompose.md.j2",
            plan=plan,
            decision=decision,
            tools=tool_lines(tools),
            checklist=checklist,
            max_subtasks=self.max_subtasks,
            folded=folded,
        )

    def build_goal_recheck_prompt(
        self,
        planning: dict[str, Any],
        reason: str,
        issues: list[str],
        answer: str = "",
        folded: str = "",
    ) -> str:
        """The planning request itself (`planning` holds its variables) plus why it runs again."""
        return render(
            "replan_goal_recheck.md.j2",
            **planning,
            reason=reason,
            issues=issues,
            answer=answer,
            folded=folded,
        )


def replan_history_line(decisions: Sequence[dict[str, Any]], total: int, limit: int) -> str:
    """`1 (limit 10): execution, level 2 partial_replan: the file was missing`: the replans
    carried out for this piece of work, the latest few with their reasons."""
    done = [d for d in decisions if d.get("executed")][-HISTORY_SHOWN:]
    if not total:
        return f"none (limit {limit})"
    shown = "; ".join(_replan_summary(d) for d in done)
    return f"{total} (limit {limit})" + (f": {shown}" if shown else "")


def _replan_summary(decision: dict[str, Any]) -> str:
    reasoning = (decision.get("llm_decision") or {}).get("reasoning") or ""
    what = f"{decision.get('phase')}, level {decision.get('level')} {decision.get('replan_type')}"
    return f"{what}: {_one_line(str(reasoning))[:REASON_CHARS]}"


def tool_lines(tools: list[ToolSpec], status: bool = False) -> str:
    state = "available — " if status else ""
    lines = [f"- {tool.name}: {state}{_one_line(tool.description)}" for tool in tools]
    return "\n".join(lines) or "- (no tools)"


def _context(inputs: PlanningInputs) -> str:
    """The run's instruction and what happened before this plan ('' for a first plan)."""
    issue = inputs.issue
    parts = []
    if issue.get("instruction"):
        parts.append(
            '<untrusted-data source="instruction for this run">\n'
            f"{issue['instruction']}\n</untrusted-data>"
        )
    if inputs.history:
        parts.append(
            "Before this plan:\n"
            '<untrusted-data source="planning history">\n'
            f"{inputs.history[-HISTORY_CHARS:]}\n</untrusted-data>"
        )
    return "\n".join(parts)


PLAN = "the whole plan is in the issue's history"
HISTORY = "every action is in the issue's history"


def _reread(issue: dict[str, Any]) -> dict[str, Any]:
    """The issue as a decision reads it again: its body within ISSUE_REREAD_TOKENS."""
    where = "the plan was made from the full text"
    body = within_tokens(str(issue.get("body", "")), ISSUE_REREAD_TOKENS, "issue text", where)
    return {**issue, "body": body}


def _keys(phases: Sequence[str]) -> str:
    # Keys unquoted, as in the decision format: `{goal_understanding: {...}, ...}`.
    return "{" + ", ".join(f"{phase}: {{...}}" for phase in phases) + "}"


def _one_line(text: str) -> str:
    return " ".join(text.split())
