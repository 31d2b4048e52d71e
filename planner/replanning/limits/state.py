"""Replanning state derived from the issue's history (replanning.md §10.2), like
planner.memory.state.

Nothing here is stored separately: counts, the pending question, an interrupted replan and the
planning review still owed are all recomputed from entries, so a pass that stopped mid-way and
the next run in a new process see exactly the same numbers.

Counting rules:
- an executed replan counts once against its level's limit and the global limit, from its
  `replan_started` entry (so a replan interrupted by the budget still counts);
- a question to people counts against goal_understanding.max_clarification_requests and the
  global limit;
- a person's instruction after planner stopped for human intervention resets the counts (they
  bound autonomous replanning between human checkpoints), except the question count;
- every plan revision counts against planning.revision.max_revisions (a cap only when that key
  is set explicitly), except refinement's (planner.refinement bounds those itself);
- a completed piece of work (`completion` with done) resets everything.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from planner.memory.questions import QuestionCount, ends_piece_of_work
from planner.memory.state import REFINEMENT
from planner.replanning.limits.levels import QUESTION_LIMIT, REVISION_CAP
from planner.replanning.prompting.decision import PLANNING_PHASES


@dataclass
class PendingQuestion:
    """Questions put to people that no answer or assumption has resolved yet."""

    id: str
    phase: str
    kind: str
    """clarification (the model needs facts) or confirmation (a low-confidence replan)."""
    asked_at: str
    questions: list[str]
    assumptions: list[str]
    trigger: str = ""
    facts: dict[str, Any] = field(default_factory=dict)
    has_plan: bool = True
    answers: list[str] = field(default_factory=list)


@dataclass
class ReplanState:
    counts: Counter[str] = field(default_factory=Counter)
    total: int = 0
    signatures: Counter[str] = field(default_factory=Counter)
    pending_question: PendingQuestion | None = None
    interrupted: dict[str, Any] | None = None
    """A `replan_started` entry whose `replan_decision` never came (the pass stopped)."""
    review_pending: list[str] = field(default_factory=list)
    escalated: bool = False
    decisions: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def from_entries(cls, entries: Iterable[dict[str, Any]]) -> ReplanState:
        state, questions = cls(), QuestionCount()
        for entry in entries:
            handler = _HANDLERS.get(str(entry.get("type")))
            if handler is not None:
                handler(state, entry)
            questions.add(entry)  # the one question count (planner.memory.questions)
            state.counts[QUESTION_LIMIT] = questions.asked
        return state

    @property
    def questions_asked(self) -> int:
        return self.counts[QUESTION_LIMIT]

    def count(self, limit_key: str | None, signature: str = "") -> None:
        if limit_key:
            self.counts[limit_key] += 1
        if signature:
            self.signatures[signature] += 1
        self.total += 1

    def reset(self, keep_questions: bool) -> None:
        questions = self.counts[QUESTION_LIMIT] if keep_questions else 0
        self.counts.clear()
        self.signatures.clear()
        self.total = 0
        if questions:
            self.counts[QUESTION_LIMIT] = questions
            self.total = questions


def _on_started(state: ReplanState, entry: dict[str, Any]) -> None:
    state.count(entry.get("limit_key"), str(entry.get("signature", "")))
    state.interrupted = entry


def _on_decision(state: ReplanState, entry: dict[str, Any]) -> None:
    state.decisions.append(entry)
    started = state.interrupted
    if started is not None and started.get("replan_id") == entry.get("replan_id"):
        state.interrupted = None
    elif entry.get("counted"):
        state.count(entry.get("limit_key"), str(entry.get("signature", "")))
    if entry.get("outcome") == "asked_user":
        state.pending_question = _question_of(entry)


def _question_of(entry: dict[str, Any]) -> PendingQuestion:
    return PendingQuestion(
        id=str(entry.get("replan_id")),
        phase=str(entry.get("phase")),
        kind=str(entry.get("question_kind", "clarification")),
        asked_at=str(entry.get("decided_at") or entry.get("timestamp", "")),
        questions=list(entry.get("questions", [])),
        assumptions=list(entry.get("assumptions", [])),
        trigger=str(entry.get("trigger", "")),
        facts=dict(entry.get("facts") or {}),
    )


def _on_core_clarification(state: ReplanState, entry: dict[str, Any]) -> None:
    """The planning reply itself asked (no plan could be made): planning-process.md §10.1.1."""
    error = entry.get("error") or {}
    state.count(None)  # the global limit; the question itself is counted by from_entries
    state.pending_question = PendingQuestion(
        id=f"clarification@{entry.get('timestamp', '')}",
        phase="goal_understanding",
        kind="clarification",
        asked_at=str(entry.get("asked_at") or entry.get("timestamp", "")),
        questions=list(error.get("clarification_needed", [])),
        assumptions=list(error.get("assumptions", [])),
        has_plan=False,
    )


def _on_resolved(state: ReplanState, entry: dict[str, Any]) -> None:
    pending = state.pending_question
    if pending is not None and pending.id == entry.get("question_id"):
        state.pending_question = None


def _on_human_input(state: ReplanState, entry: dict[str, Any]) -> None:
    if state.pending_question is not None:
        state.pending_question.answers.append(str(entry.get("text", "")))
    if state.escalated:
        state.reset(keep_questions=True)
        state.escalated = False


def _on_intervention(state: ReplanState, entry: dict[str, Any]) -> None:
    state.escalated = True


def _on_completion(state: ReplanState, entry: dict[str, Any]) -> None:
    if ends_piece_of_work(entry):
        state.reset(keep_questions=False)
        state.pending_question = None
        state.review_pending = []


def _on_plan(state: ReplanState, entry: dict[str, Any]) -> None:
    state.review_pending = list(PLANNING_PHASES)
    if state.pending_question is not None and not state.pending_question.has_plan:
        state.pending_question = None  # the plan that the question held up now exists


def _on_revision(state: ReplanState, entry: dict[str, Any]) -> None:
    state.review_pending = list(entry.get("review_phases") or [])
    if entry.get("source") != REFINEMENT:  # the quality judge's replans have their own limit
        state.counts[REVISION_CAP] += 1


def _on_review(state: ReplanState, entry: dict[str, Any]) -> None:
    state.review_pending = []


_HANDLERS = {
    "replan_started": _on_started,
    "replan_decision": _on_decision,
    "clarification": _on_core_clarification,
    "clarification_resolved": _on_resolved,
    "human_input": _on_human_input,
    "human_intervention": _on_intervention,
    "completion": _on_completion,
    "plan": _on_plan,
    "revision": _on_revision,
    "plan_review": _on_review,
}
