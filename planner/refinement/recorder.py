"""The history entries of refinement, written the moment each step is taken.

quality_judgement    subject (plan|result), attempt (judgements), refinements (replans before it,
                     what max_refinement_attempts counts), score, acceptable, issues, suggestions
refinement_decision  subject, decision, rule (and its priority number), attempts, stagnation
                     figures, the structure validation of the replan that led here
refinement_replan    subject, changed, structure validation (plan) or added tasks (result),
                     the feedback that was given
revision             a changed plan, with source "refinement" and its subject
"""

from __future__ import annotations

from typing import Any

from planner.memory.history import PlanningHistoryStore
from planner.plan.documents import Plan
from planner.refinement.decision import RefinementOutcome
from planner.refinement.judgement import QualityJudgement, Subject
from planner.refinement.replan import Feedback
from planner.refinement.state import SOURCE, Round


class RefinementRecorder:
    def __init__(self, store: PlanningHistoryStore, max_attempts: int) -> None:
        self.store = store
        self.max_attempts = max_attempts

    def judgement(
        self, subject: Subject, judgement: QualityJudgement, current: Round, unavailable: bool
    ) -> None:
        self.store.append(
            "quality_judgement",
            subject=subject,
            attempt=current.judgements + 1,
            refinements=current.attempts,
            max_refinements=self.max_attempts,
            **judgement.verdict(),
            unavailable=unavailable,
            judgement=judgement.model_dump(mode="json"),
        )

    def decision(self, subject: Subject, outcome: RefinementOutcome, current: Round) -> None:
        stagnation = outcome.stagnation
        self.store.append(
            "refinement_decision",
            subject=subject,
            decision=outcome.decision,
            rule=outcome.rule,
            priority=outcome.rule_number,
            score=current.judgement.score if current.judgement else None,
            attempts=current.attempts,
            max_attempts=self.max_attempts,
            suggestion_replans=current.suggestion_replans,
            stagnation=stagnation.to_dict() if stagnation else None,
            structure_validation=current.structure,
        )

    def replanned(self, subject: Subject, feedback: Feedback, changed: bool, **fields: Any) -> None:
        self.store.append(
            "refinement_replan",
            subject=subject,
            changed=changed,
            guided=bool(feedback.guidance),
            feedback=feedback.to_dict(),
            **fields,
        )

    def revision(self, plan: Plan, number: int, subject: Subject, reason: str) -> None:
        """A refined plan, shown to people as a revision with the judge's reason. Completed
        tasks keep their ticks; no replanning review is owed (the judge has just vetted it,
        and a review could change the plan past the judge)."""
        self.store.append(
            "revision",
            revision=number,
            reason=reason,
            changes=[],
            updated_plan=plan.model_dump(mode="json"),
            carry_progress=True,
            review_phases=[],
            source=SOURCE,
            subject=subject,
        )
