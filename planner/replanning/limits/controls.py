"""The system's side of a decision: limits, confidence bands and loop detection (§9, §13.3/4).

The model decides whether a replan is needed; these rules decide whether it may run. They are
pure functions of the decision, the configuration and the counts derived from history.

Confidence bands (§9.3), with the thresholds from planning.replanning.llm_decision:
    >= 0.8                                   execute
    min_confidence_threshold .. 0.8          execute, with a warning
    user_confirmation_threshold .. min       ask a person (or keep the plan when confirmation
                                             is disabled or a person was already asked here)
    < user_confirmation_threshold            keep the plan: the decision is not trusted
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from planner.config import ReplanningConfig
from planner.replanning.limits.levels import (
    QUESTION_LIMIT,
    REVISION_CAP,
    Level,
    level_of,
    limit_key_of,
)
from planner.replanning.limits.state import ReplanState
from planner.replanning.prompting.decision import Phase, ReplanDecision

HIGH_CONFIDENCE = 0.8
"""§9.3: at or above this a replan runs without a warning (not configurable in the seed)."""

Action = Literal["continue", "execute", "ask", "assume", "escalate"]
Outcome = Literal[
    "no_replan",
    "executed",
    "executed_with_warning",
    "asked_user",
    "kept_low_confidence",
    "assumed",
    "limit_reached",
    "loop_detected",
    "superseded",
    "unparseable",
    "failed",
]


@dataclass(frozen=True)
class Verdict:
    """What the system does with one decision, and why."""

    action: Action
    outcome: Outcome
    level: Level | None = None
    limit_key: str | None = None
    signature: str = ""
    override_reason: str | None = None
    warning: str | None = None
    question_kind: str = ""

    @property
    def executes(self) -> bool:
        return self.action == "execute"


def percent(value: float) -> str:
    return f"{round(value * 100)}%"


class ReplanControls:
    def __init__(self, settings: ReplanningConfig, revision_cap: int | None = None) -> None:
        self.settings = settings
        self.revision_cap = revision_cap
        """planning.revision.max_revisions when set explicitly: plan revisions allowed between
        human checkpoints on top of the replanning limits; None = the replanning limits only."""

    def _room_for(
        self, level: Level, limit_key: str | None, state: ReplanState
    ) -> tuple[bool, str]:
        allowed, why = self.can_replan(limit_key, state)
        return self.revisions_left(level, state) if allowed else (allowed, why)

    def revisions_left(self, level: Level, state: ReplanState) -> tuple[bool, str]:
        """Room for one more plan revision under planning.revision.max_revisions?"""
        cap = self.revision_cap
        if cap is None or level.number < 2 or state.counts[REVISION_CAP] < cap:
            return True, ""
        return False, f"the limit of {cap} plan revisions ({REVISION_CAP}) was reached"

    def limit_of(self, limit_key: str) -> int:
        section, name = limit_key.split(".")
        return int(getattr(getattr(self.settings, section), name))

    def can_replan(self, limit_key: str | None, state: ReplanState) -> tuple[bool, str]:
        """§9.1: room left under this kind's limit and the global limit?"""
        total = self.settings.global_.max_total_replans
        if state.total >= total:
            return False, f"the limit of {total} replans in total (global.max_total_replans)"
        if limit_key is not None:
            limit = self.limit_of(limit_key)
            if state.counts[limit_key] >= limit:
                return False, f"the limit of {limit} ({limit_key}) was reached"
        return True, ""

    def is_loop(self, signature: str, state: ReplanState) -> bool:
        """§13.3: the same approach to the same trigger already ran same_trigger_max_count times."""
        rules = self.settings.global_
        return rules.infinite_loop_detection and (
            state.signatures[signature] >= rules.same_trigger_max_count
        )

    def should_override(
        self,
        decision: ReplanDecision,
        phase: Phase,
        trigger: str,
        state: ReplanState,
        *,
        answered: bool = False,
    ) -> Verdict:
        """Every override rule of §9.2 in order; `answered`: a person already answered here."""
        if not (decision.wants_replan or decision.asks_people):
            return Verdict("continue", "no_replan")
        bands = self.settings.llm_decision
        if decision.confidence < bands.user_confirmation_threshold:
            return Verdict(
                "continue",
                "kept_low_confidence",
                override_reason=(
                    f"confidence {percent(decision.confidence)} is below "
                    f"{percent(bands.user_confirmation_threshold)}: the decision is not "
                    "trusted and the current plan is kept"
                ),
            )
        if decision.asks_people:
            return self.question_verdict(state, "clarification")
        if decision.confidence < bands.min_confidence_threshold:
            return self._unsure(decision, state, answered)
        return self._replan(decision, phase, trigger, state)

    def _unsure(self, decision: ReplanDecision, state: ReplanState, answered: bool) -> Verdict:
        bands = self.settings.llm_decision
        reason = (
            f"confidence {percent(decision.confidence)} is below "
            f"{percent(bands.min_confidence_threshold)}"
        )
        if answered or not bands.require_user_confirmation_on_low_confidence:
            why = "a person was already asked here" if answered else "confirmation is disabled"
            return Verdict("continue", "kept_low_confidence", override_reason=f"{reason} and {why}")
        verdict = self.question_verdict(state, "confirmation")
        if verdict.action == "assume":
            return Verdict(
                "continue",
                "kept_low_confidence",
                override_reason=f"{reason}; {verdict.override_reason}",
            )
        return verdict

    def question_verdict(self, state: ReplanState, kind: str) -> Verdict:
        """Asking people is limited like a replan (max_clarification_requests)."""
        allowed, why = self.can_replan(QUESTION_LIMIT, state)
        if not allowed:
            return Verdict(
                "assume",
                "assumed",
                override_reason=f"no more questions to people: {why}",
                question_kind=kind,
            )
        return Verdict("ask", "asked_user", limit_key=QUESTION_LIMIT, question_kind=kind)

    def _replan(
        self, decision: ReplanDecision, phase: Phase, trigger: str, state: ReplanState
    ) -> Verdict:
        level = level_of(decision, phase)
        limit_key = limit_key_of(level, phase)
        signature = f"{phase}|{trigger}|L{level.number}"
        allowed, why = self._room_for(level, limit_key, state)
        if not allowed:
            return Verdict(
                "escalate", "limit_reached", level, limit_key, signature, f"not executed: {why}"
            )
        if self.is_loop(signature, state):
            count = self.settings.global_.same_trigger_max_count
            return Verdict(
                "escalate",
                "loop_detected",
                level,
                limit_key,
                signature,
                f"not executed: the same {level.name} for the same trigger already ran {count} "
                "time(s) (possible infinite loop)",
            )
        warning = None
        outcome: Outcome = "executed"
        if decision.confidence < HIGH_CONFIDENCE:
            outcome = "executed_with_warning"
            warning = (
                f"executed with a warning: confidence {percent(decision.confidence)} is below "
                f"{percent(HIGH_CONFIDENCE)}"
            )
        return Verdict("execute", outcome, level, limit_key, signature, None, warning)
