"""Refiner: the two points of a pass where the quality judge has its say.

    after_plan()         a plan was produced or changed (the planning call, a replanning
                         revision, refinement's own replan, a person's guidance after a
                         rejection): judge it, then accept, replan with feedback, or reject
    before_completion()  no task is left: judge the finished work; findings become new tasks
                         (PlanChanged), or the pass stops for a person when attempts are spent

Each step appends its history entry before the next one starts, and the next step is read back
from the history (state.py), so a pass stopped at any point resumes at the same step. Every loop
is bounded: a replan needs a `refinement_decision` to replan, and those stop at
max_refinement_attempts (priority 1) for each subject and round.
"""

from __future__ import annotations

from typing import Any, NoReturn

from pydantic import ValidationError

from planner.config import PlannerConfig
from planner.engine.context import PassContext
from planner.engine.phase import ReviewSection
from planner.memory.history import PlanningHistoryStore
from planner.outcome.flow import PlanChanged, StopPass
from planner.plan.documents import Plan
from planner.refinement.decision import make_refinement_decision
from planner.refinement.judge import QualityJudge
from planner.refinement.judgement import QualityJudgement, Subject
from planner.refinement.port import WorkDiff
from planner.refinement.recorder import RefinementRecorder
from planner.refinement.replan import Feedback, FeedbackReplanner
from planner.refinement.state import RefinementState, Round
from planner.text.prompts import render

REVIEW_KEY = "quality_judgement"
"""The plan judgement's key in replanning's plan review reply."""
UNAVAILABLE = QualityJudgement(score=None, is_acceptable=True)
"""A judge that gave no usable reply cannot hold up a plan that passed validation: no score
(priority 2) with the plan taken as acceptable, recorded as unavailable."""


class Refiner:
    def __init__(
        self,
        config: PlannerConfig,
        store: PlanningHistoryStore,
        port: PassContext,
        diff: WorkDiff | None = None,
    ) -> None:
        self.settings = config.planning.refinement
        self.active = self.settings.enabled and config.planning.enabled
        self.phrase = config.forge.trigger_phrase
        self.store = store
        self.port = port
        self.judge = QualityJudge(port, diff)
        self.replanner = FeedbackReplanner(port, self.settings)
        self.recorder = RefinementRecorder(store, self.settings.max_refinement_attempts)
        self._reviewed: tuple[Plan, QualityJudgement] | None = None
        """The plan review's judgement of a plan (one call for both), until it is recorded."""

    def state(self) -> RefinementState:
        return RefinementState.from_entries(self.store.entries())

    # -- the hooks ------------------------------------------------------------------------------

    def after_plan(self) -> None:
        """Settle the current plan: raises StopPass when it is rejected and PlanChanged when
        refinement replaced it (so whatever runs after a plan change sees the new one)."""
        if not self.active:
            return
        before = self.port.issue_state().plan
        while self._plan_step():
            pass
        if self.port.issue_state().plan != before:
            raise PlanChanged

    def before_completion(self) -> None:
        """Settle the finished work; raises PlanChanged (new tasks) or StopPass (rejected)."""
        while self.active and self._result_step():
            pass

    # -- the plan -------------------------------------------------------------------------------

    def _plan_step(self) -> bool:
        """One step for the plan; False when it is settled (accepted, or nothing to judge)."""
        current, plan = self.state().plan, self.port.issue_state().plan
        if plan is None or current.step in ("idle", "accepted"):
            return False
        if current.step == "judge":
            self._judge("plan", self._judgement_of(plan), current)
        elif current.step == "decide":
            self._decide("plan", current)
        elif current.step in ("replan", "guided"):
            self._replan_plan(plan, current)
        else:
            self._rejected("plan", current)
        return True

    # -- the judgement inside replanning's plan review --------------------------------------------

    def review_section(self) -> ReviewSection | None:
        """The plan judgement as a section of the plan review call, when this plan is next to
        be judged."""
        plan = self.port.issue_state().plan
        if not self.active or plan is None or self.state().plan.step != "judge":
            return None
        return ReviewSection(REVIEW_KEY, render("refinement_review_section.md.j2"))

    def reviewed(self, answers: dict[str, Any]) -> None:
        """Keep the review's judgement of the current plan; an unusable one is left out (the
        judge is then asked on its own)."""
        try:
            judgement = QualityJudgement.model_validate(answers.get(REVIEW_KEY))
        except ValidationError:
            return
        plan = self.port.issue_state().plan
        self._reviewed = (plan, judgement) if plan is not None else None

    def _judgement_of(self, plan: Plan) -> QualityJudgement | None:
        reviewed, self._reviewed = self._reviewed, None
        if reviewed is not None and reviewed[0] == plan:
            return reviewed[1]
        return self.judge.judge_plan(plan)

    def _replan_plan(self, plan: Plan, current: Round) -> None:
        feedback = self._feedback(current)
        state = self.port.issue_state()
        completed = [view.id for view in state.tasks() if view.status == "completed"]
        validation = self.replanner.replan(plan, feedback, completed)
        changed = validation.plan != plan
        if changed:
            reason = _reason("quality review", feedback.judgement)
            self.recorder.revision(validation.plan, state.revision + 1, "plan", reason)
        self.recorder.replanned(
            "plan", feedback, changed, structure_validation=validation.to_dict()
        )
        self.port.progress("plan refined" if changed else "plan kept")

    # -- the finished work ----------------------------------------------------------------------

    def _result_step(self) -> bool:
        current, state = self.state().result, self.port.issue_state()
        if state.plan is None or current.step == "accepted":
            return False
        if current.step in ("idle", "judge"):
            self._judge("result", self.judge.judge_result(state.plan, state.tasks()), current)
        elif current.step == "decide":
            self._decide("result", current)
        elif current.step in ("replan", "guided"):
            self._follow_up(state.plan, current, state.revision)
        else:
            self._rejected("result", current)
        return True

    def _follow_up(self, plan: Plan, current: Round, revision: int) -> None:
        feedback = self._feedback(current)
        follow = self.replanner.follow_up(plan, feedback)
        if follow.plan is not None:
            reason = _reason("final quality review", feedback.judgement)
            self.recorder.revision(follow.plan, revision + 1, "result", reason)
        self.recorder.replanned(
            "result", feedback, follow.plan is not None, added=follow.added, problem=follow.problem
        )
        if follow.plan is not None:
            self.port.progress("tasks added after the final quality review")
            raise PlanChanged

    # -- shared steps ---------------------------------------------------------------------------

    def _judge(self, subject: Subject, judgement: QualityJudgement | None, current: Round) -> None:
        self.recorder.judgement(subject, judgement or UNAVAILABLE, current, judgement is None)

    def _decide(self, subject: Subject, current: Round) -> None:
        assert current.judgement is not None
        outcome = make_refinement_decision(current.judgement, current.inputs(), self.settings)
        self.recorder.decision(subject, outcome, current)
        self.port.progress(f"{subject} quality: {outcome.decision}")

    def _feedback(self, current: Round) -> Feedback:
        return Feedback(current.judgement or UNAVAILABLE, current.guidance)

    def _rejected(self, subject: Subject, current: Round) -> NoReturn:
        """Stop before anything (more) runs; a person's guidance starts a new attempt."""
        judgement = current.judgement or UNAVAILABLE
        what = "plan" if subject == "plan" else "finished work"
        score = f"{judgement.score}/100" if judgement.score is not None else "no score"
        reason = (
            f"the quality judge rejected the {what} ({score} after {current.attempts} of "
            f"{self.settings.max_refinement_attempts} refinement attempts)"
        )
        issues = [f"Quality issue: {issue}" for issue in judgement.issues]
        hint = f"Reply with `{self.phrase} <guidance>` to plan again with your guidance."
        raise StopPass("needs_human", reason, [*issues, hint])


def _reason(what: str, judgement: QualityJudgement) -> str:
    score = f" {judgement.score}/100" if judgement.score is not None else ""
    issues = "; ".join(judgement.issues) or "; ".join(judgement.suggestions)
    return f"{what}{score}: {issues}"[:1_000]
