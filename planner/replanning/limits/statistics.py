"""§14.2 get_replan_statistics: what replanning did, and how much room is left."""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, Field

from planner.replanning.limits.controls import ReplanControls
from planner.replanning.limits.levels import LEVELS, PLAN_REVISION_LIMIT, QUESTION_LIMIT
from planner.replanning.limits.state import ReplanState


class ReplanStatistics(BaseModel):
    """Decisions over the issue's whole history; counts and room left for the current work
    (they restart when work completes or a person answers an escalation)."""

    decisions: int = 0
    executed: int = 0
    overridden: int = 0
    questions: int = 0
    total_counted: int = 0
    by_phase: dict[str, int] = Field(default_factory=dict)
    by_outcome: dict[str, int] = Field(default_factory=dict)
    counts: dict[str, int] = Field(default_factory=dict)
    remaining: dict[str, int] = Field(default_factory=dict)
    average_confidence: float | None = None


def statistics_of(state: ReplanState, controls: ReplanControls) -> ReplanStatistics:
    decisions = state.decisions
    confidences = [d["confidence"] for d in decisions if d.get("confidence") is not None]
    limits = [key for level in LEVELS.values() if (key := level.limit_key)]
    limits += [PLAN_REVISION_LIMIT, QUESTION_LIMIT]
    total_limit = controls.settings.global_.max_total_replans
    remaining = {key: max(0, controls.limit_of(key) - state.counts[key]) for key in limits}
    return ReplanStatistics(
        decisions=len(decisions),
        executed=sum(1 for d in decisions if d.get("executed")),
        overridden=sum(1 for d in decisions if d.get("override_reason")),
        questions=state.questions_asked,
        total_counted=state.total,
        by_phase=dict(Counter(str(d.get("phase")) for d in decisions)),
        by_outcome=dict(Counter(str(d.get("outcome")) for d in decisions)),
        counts=dict(state.counts),
        remaining=remaining | {"total": max(0, total_limit - state.total)},
        average_confidence=sum(confidences) / len(confidences) if confidences else None,
    )
