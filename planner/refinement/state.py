"""Where refinement stands, derived from the issue's history (nothing is stored separately).

Each subject (the plan, the finished result) goes through rounds of

    judge -> decide -> (replan -> judge -> decide)* -> accepted | rejected

and the next step is read from the last entry that concerns it, so a pass that stopped half-way
(budget, a crash) resumes at exactly that step in the next run. A round starts again when a plan
arrives from elsewhere (the planning call, a replanning revision), when a person gives guidance
(`human_input`), and when a piece of work is completed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from planner.memory.state import REFINEMENT, replayed
from planner.refinement.decision import DecisionInputs
from planner.refinement.judgement import QualityJudgement, Subject

log = logging.getLogger(__name__)
SOURCE = REFINEMENT
"""The `source` of plan and revision entries refinement writes."""
Step = Literal["idle", "judge", "decide", "replan", "accepted", "rejected", "guided"]
AFTER_DECISION: dict[str, Step] = {"accept": "accepted", "reject": "rejected", "replan": "replan"}


@dataclass
class Round:
    """One subject's refinement since its round started."""

    step: Step = "idle"
    judgements: int = 0
    attempts: int = 0
    suggestion_replans: int = 0
    judgement: QualityJudgement | None = None
    score_before_replan: int | None = None
    decision: dict[str, Any] | None = None
    """The latest refinement_decision entry of this round."""
    structure: dict[str, Any] | None = None
    """The structure validation of the latest replan (for the next decision's record)."""
    guidance: str = ""
    """A person's text after a rejection: feedback for the next replan."""

    def inputs(self) -> DecisionInputs:
        previous = self.score_before_replan if self.attempts else None
        return DecisionInputs(self.attempts, previous, self.suggestion_replans)


@dataclass
class RefinementState:
    plan: Round = field(default_factory=Round)
    result: Round = field(default_factory=Round)

    @classmethod
    def from_entries(cls, entries: Iterable[dict[str, Any]]) -> RefinementState:
        return replayed(cls(), entries, _HANDLERS)

    def round(self, subject: Subject) -> Round:
        return self.plan if subject == "plan" else self.result


def _on_plan(state: RefinementState, entry: dict[str, Any]) -> None:
    """A plan from elsewhere starts a new round; refinement's own plan is judged next."""
    if entry.get("source") != SOURCE:
        state.plan = Round(step="judge")
        if entry.get("type") == "plan":
            state.result = Round()
    elif _subject(entry) == "plan":
        state.plan.step = "judge"


def _on_judgement(state: RefinementState, entry: dict[str, Any]) -> None:
    current = state.round(_subject(entry))
    try:
        judgement = QualityJudgement.model_validate(entry.get("judgement") or {})
    except ValueError:  # a damaged entry: this step is read again from the history every pass
        log.warning("a quality_judgement history entry is malformed; the subject is judged again")
        return
    current.judgements += 1
    current.judgement = judgement
    current.step = "decide"


def _on_decision(state: RefinementState, entry: dict[str, Any]) -> None:
    current = state.round(_subject(entry))
    current.decision = entry
    decision = entry.get("decision")
    if decision == "replan":
        current.attempts += 1
        current.suggestion_replans += entry.get("rule") == "suggestions"
        current.score_before_replan = current.judgement.score if current.judgement else None
    current.step = AFTER_DECISION.get(str(decision), "decide")  # a damaged entry: decide again


def _on_replanned(state: RefinementState, entry: dict[str, Any]) -> None:
    """A replan was carried out. Changed: a changed plan is judged next (a finished result
    only after its new tasks ran); unchanged: the old judgement is decided on again."""
    current = state.round(_subject(entry))
    current.structure = entry.get("structure_validation")
    current.guidance = ""
    if not entry.get("changed"):
        current.step = "decide"
    else:
        current.step = "judge" if _subject(entry) == "plan" else "idle"


def _on_work(state: RefinementState, entry: dict[str, Any]) -> None:
    """A task ran after the finished result was accepted: it must be judged again."""
    if state.result.step == "accepted":
        state.result.step = "idle"


def _on_human_input(state: RefinementState, entry: dict[str, Any]) -> None:
    text = str(entry.get("text", "")).strip()
    subjects: tuple[Subject, ...] = ("plan", "result")
    for subject in subjects:
        current = state.round(subject)
        if current.step == "rejected" and text:
            fresh = Round(step="guided", judgement=current.judgement, guidance=text)
            setattr(state, subject, fresh)


def _on_completion(state: RefinementState, entry: dict[str, Any]) -> None:
    if entry.get("done", True):
        state.plan, state.result = Round(), Round()


def _subject(entry: dict[str, Any]) -> Subject:
    return "result" if entry.get("subject") == "result" else "plan"


_HANDLERS = {
    "plan": _on_plan,
    "revision": _on_plan,
    "quality_judgement": _on_judgement,
    "refinement_decision": _on_decision,
    "refinement_replan": _on_replanned,
    "task": _on_work,
    "human_input": _on_human_input,
    "completion": _on_completion,
}
