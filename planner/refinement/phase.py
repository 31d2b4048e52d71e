"""The refinement phase: the quality judge's hooks in the pass loop (planner/engine/phase.py).

after_plan          a plan was made, revised (by replanning, by refinement itself) or resumed:
                    judge it if it has not been judged, then accept, replan with the judge's
                    feedback (PlanChanged) or reject (StopPass, needs_human)
before_completion   no task is left: judge the finished work against the goal; its findings
                    become new tasks (PlanChanged) or, with attempts spent, a person is asked

Registered after replanning (planner/run/phases.py), so a plan that replanning's review changed
is judged before it runs. A plan that replanning reviews in a separate call is judged inside that
call (review_section / reviewed): one request reads the plan instead of two.
"""

from __future__ import annotations

from typing import Any

from planner.engine.context import PassContext
from planner.engine.phase import Phase, PlanEvent, ReviewSection
from planner.plan.documents import PlanningReply
from planner.refinement.port import WorkDiff
from planner.refinement.refiner import Refiner


class RefinementPhase(Phase):
    name = "refinement"

    def __init__(self, diff: WorkDiff | None = None) -> None:
        self.diff = diff
        self._refiner: Refiner | None = None

    def refiner(self, run: PassContext) -> Refiner:
        if self._refiner is None:
            self._refiner = Refiner(run.config, run.store, run, self.diff)
        return self._refiner

    def review_section(self, run: PassContext) -> ReviewSection | None:
        return self.refiner(run).review_section()

    def reviewed(self, run: PassContext, answers: dict[str, Any]) -> None:
        self.refiner(run).reviewed(answers)

    def after_plan(self, run: PassContext, reply: PlanningReply | None, event: PlanEvent) -> None:
        self.refiner(run).after_plan()

    def before_completion(self, run: PassContext) -> None:
        self.refiner(run).before_completion()
