"""make_refinement_decision: accept, replan or reject, by the seed's six priorities.

    1  no score                  -> accept: no judgement, the work goes on (issue 23 overrides
                                    the seed's "reject if not acceptable": a judge without a
                                    score has not judged)
    2  attempts exhausted        -> accept if acceptable, else reject
    3  stagnation                -> accept if acceptable, else replan (attempts remain: see 1)
    4  not acceptable            -> replan
    5  acceptable + suggestions + refine_suggestions_on_success + under max_suggestion_replans
                                 -> replan
    6  acceptable                -> accept

Stagnation is `improvement < delta_threshold OR relative_improvement < delta_threshold_percent`:
OR, because with AND one large figure would keep a flat score looping (the seed's argument).
A pure function: everything it needs is passed in, so every branch is a table row in a test.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from planner.config import RefinementConfig
from planner.refinement.judgement import QualityJudgement

Decision = Literal["accept", "replan", "reject"]
Rule = Literal[
    "attempts_exhausted", "no_score", "stagnation", "not_acceptable", "suggestions", "acceptable"
]
RULE_NUMBERS: dict[Rule, int] = {
    "attempts_exhausted": 1,
    "no_score": 2,
    "stagnation": 3,
    "not_acceptable": 4,
    "suggestions": 5,
    "acceptable": 6,
}


@dataclass(frozen=True)
class Stagnation:
    """How the score moved since the judgement that asked for the last replan."""

    previous_score: int
    score: int
    improvement: float
    relative_improvement: float | None
    """Percent of the previous score; None when the previous score was 0 (any gain counts)."""
    stagnated: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RefinementOutcome:
    decision: Decision
    rule: Rule
    stagnation: Stagnation | None = None

    @property
    def rule_number(self) -> int:
        return RULE_NUMBERS[self.rule]


@dataclass(frozen=True)
class DecisionInputs:
    """The round so far: replans already made and the score before the last one."""

    attempts: int = 0
    """Replans with feedback already made for this subject (the seed's refinement attempts)."""
    previous_score: int | None = None
    """Score of the judgement that led to the last replan; None before the first replan."""
    suggestion_replans: int = 0
    """Replans made for suggestions alone (priority 5)."""


def stagnation_of(
    previous: int | None, score: int | None, settings: RefinementConfig
) -> Stagnation | None:
    """None when there is nothing to compare (no replan yet, or no score)."""
    if previous is None or score is None:
        return None
    improvement = float(score - previous)
    relative = None if previous == 0 else improvement / previous * 100
    stagnated = improvement < settings.delta_threshold or (
        relative is not None and relative < settings.delta_threshold_percent
    )
    return Stagnation(previous, score, improvement, relative, stagnated)


def make_refinement_decision(
    judgement: QualityJudgement, inputs: DecisionInputs, settings: RefinementConfig
) -> RefinementOutcome:
    """The seed's priorities 1-6, first match wins."""
    acceptable = judgement.is_acceptable
    settle: Decision = "accept" if acceptable else "reject"
    stagnation = stagnation_of(inputs.previous_score, judgement.score, settings)
    if judgement.score is None:
        # No usable score is no judgement: the work goes on (small models answer the judge
        # without a score and "not acceptable"; the seed's reject here stopped every pass).
        return RefinementOutcome("accept", "no_score")
    if inputs.attempts >= settings.max_refinement_attempts:
        return RefinementOutcome(settle, "attempts_exhausted", stagnation)
    if stagnation is not None and stagnation.stagnated:
        return RefinementOutcome("accept" if acceptable else "replan", "stagnation", stagnation)
    if not acceptable:
        return RefinementOutcome("replan", "not_acceptable", stagnation)
    if _refine_suggestions(judgement, inputs, settings):
        return RefinementOutcome("replan", "suggestions", stagnation)
    return RefinementOutcome("accept", "acceptable", stagnation)


def _refine_suggestions(
    judgement: QualityJudgement, inputs: DecisionInputs, settings: RefinementConfig
) -> bool:
    return (
        bool(judgement.suggestions)
        and settings.refine_suggestions_on_success
        and inputs.suggestion_replans < settings.max_suggestion_replans
    )
