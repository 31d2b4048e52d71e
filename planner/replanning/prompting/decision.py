"""The model's replan decision (replanning.md §2.4-§2.6 plus the phase extras of §4-§8).

Parsing is lenient where models are sloppy (85 or "85%" for a confidence, a string where a
list is expected, an unknown enum value) and strict about what decides control flow: a reply
without a usable replan_needed/confidence is "no decision", never a guess.
"""

from __future__ import annotations

import re
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

Phase = Literal[
    "goal_understanding", "task_decomposition", "action_sequence", "execution", "reflection"
]
PLANNING_PHASES: tuple[Phase, ...] = ("goal_understanding", "task_decomposition", "action_sequence")
PHASE_TITLES: dict[str, str] = {
    "goal_understanding": "Goal Understanding",
    "task_decomposition": "Task Decomposition",
    "action_sequence": "Action Sequence Generation",
    "execution": "Execution",
    "reflection": "Monitoring and Reflection",
}

ReplanType = Literal[
    "clarification_request",
    "goal_revision",
    "task_redecomposition",
    "action_regeneration",
    "partial_replan",
    "full_replan",
    "plan_revision",
    "retry",
    "none",
]
PHASE_TYPES: dict[str, tuple[str, ...]] = {
    "goal_understanding": ("clarification_request", "goal_revision", "none"),
    "task_decomposition": ("task_redecomposition", "none"),
    "action_sequence": ("action_regeneration", "none"),
    "execution": ("retry", "partial_replan", "full_replan", "none"),
    "reflection": ("plan_revision", "none"),
}
"""The replan types each phase's prompt offers (§4.4, §5.4, §6.4, §7.5, §8.4)."""

ErrorClass = Literal["transient", "persistent", "fatal"]
EvaluationResult = Literal["success", "partial_success", "failure"]
RevisionScope = Literal["minor", "moderate", "major"]

PERCENT = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*%?\s*$")


class ReplanDecision(BaseModel):
    """One phase's decision: whether to go back, how far, and why."""

    model_config = ConfigDict(extra="ignore")

    # §2.4 / §2.5: every phase
    replan_needed: bool
    confidence: float = Field(default=0.0, ge=0, le=1)
    """Missing means 0: an unqualified decision is never trusted (§13.4)."""
    reasoning: str = ""
    replan_type: ReplanType | None = None
    target_phase: Phase | None = None
    replan_level: int | None = None
    issues_found: list[str] = Field(default_factory=list)
    recommended_actions: list[str] = Field(default_factory=list)
    clarification_needed: bool = False
    clarification_questions: list[str] = Field(default_factory=list)
    # §4.4 goal understanding
    assumptions_to_make: list[str] = Field(default_factory=list)
    # §5.4 task decomposition
    missing_steps: list[str] = Field(default_factory=list)
    recommended_granularity: str = ""
    scope_adjustment: str = ""
    # §6.4 action sequence
    unavailable_tools: list[str] = Field(default_factory=list)
    alternative_tools: list[str] = Field(default_factory=list)
    dependency_issues: list[str] = Field(default_factory=list)
    plan_adjustments: list[str] = Field(default_factory=list)
    # §7.5 execution
    error_classification: ErrorClass | None = None
    recovery_strategy: str = ""
    affected_actions: list[str] = Field(default_factory=list)
    # §8.4 monitoring and reflection
    evaluation_result: EvaluationResult | None = None
    achievement_rate: float | None = Field(default=None, ge=0, le=100)
    issues_identified: list[str] = Field(default_factory=list)
    additional_actions: list[str] = Field(default_factory=list)
    revision_scope: RevisionScope | None = None

    @field_validator("confidence", mode="before")
    @classmethod
    def _fraction(cls, value: Any) -> Any:
        """0.85, "0.85", 85 and "85%" all mean 85 percent."""
        if isinstance(value, str) and (match := PERCENT.match(value)):
            value = float(match.group(1))
        if isinstance(value, int | float) and not isinstance(value, bool) and 1 < value <= 100:
            return value / 100
        return value

    @field_validator("achievement_rate", mode="before")
    @classmethod
    def _rate(cls, value: Any) -> Any:
        if isinstance(value, str) and (match := PERCENT.match(value)):
            return float(match.group(1))
        return value

    @field_validator("replan_level", mode="before")
    @classmethod
    def _level(cls, value: Any) -> int | None:
        try:
            level = int(value)
        except (TypeError, ValueError):
            return None
        return level if 1 <= level <= 5 else None

    @field_validator(
        "replan_type",
        "target_phase",
        "error_classification",
        "evaluation_result",
        "revision_scope",
        mode="before",
    )
    @classmethod
    def _known_or_none(cls, value: Any, info: Any) -> Any:
        """An enum value we do not know is dropped, not fatal: the level still decides."""
        allowed = _literal_values(cls.model_fields[info.field_name].annotation)
        text = str(value).strip().lower().replace(" ", "_") if value is not None else None
        return text if text in allowed else None

    @field_validator(
        "issues_found",
        "recommended_actions",
        "clarification_questions",
        "assumptions_to_make",
        "missing_steps",
        "unavailable_tools",
        "alternative_tools",
        "dependency_issues",
        "plan_adjustments",
        "affected_actions",
        "issues_identified",
        "additional_actions",
        mode="before",
    )
    @classmethod
    def _string_list(cls, value: Any) -> list[str]:
        if value is None:
            return []
        items = value if isinstance(value, list) else [value]
        return [_text(item) for item in items if _text(item)]

    @field_validator(
        "reasoning",
        "recommended_granularity",
        "scope_adjustment",
        "recovery_strategy",
        mode="before",
    )
    @classmethod
    def _string(cls, value: Any) -> str:
        return "" if value is None else _text(value)

    @property
    def asks_people(self) -> bool:
        """The model wants a person to answer before it goes on (§4.4 clarification_request)."""
        return self.clarification_needed or self.replan_type == "clarification_request"

    @property
    def wants_replan(self) -> bool:
        return self.replan_needed and self.replan_type != "none"

    def brief(self) -> str:
        kind = self.replan_type or "replan"
        return f"{kind} (confidence {round(self.confidence * 100)}%): {self.reasoning}"


def _literal_values(annotation: Any) -> set[str]:
    values: set[str] = set()
    for arg in get_args(annotation):
        values.update(a for a in get_args(arg) if isinstance(a, str))
        if isinstance(arg, str):
            values.add(arg)
    return values


def _text(value: Any) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{k}: {v}" for k, v in value.items())
    return " ".join(str(value).split())


NO_REPLAN = ReplanDecision(replan_needed=False, confidence=1.0, reasoning="no decision")


class DecisionReply(BaseModel):
    """The JSON a decision call returns (its schema is sent as the response format)."""

    replan_decision: ReplanDecision


class ReviewReply(BaseModel):
    """The JSON of the combined planning review: one decision per planning phase present."""

    goal_understanding: ReplanDecision | None = None
    task_decomposition: ReplanDecision | None = None
    action_sequence: ReplanDecision | None = None
