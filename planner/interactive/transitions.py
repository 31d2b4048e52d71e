"""The seed's state table (ADR-021 §2) and nothing else:

    discovery -> design     every question answered or skipped
    design    -> review     every decision point decided
    review    -> approved   a person approves
    review    -> design     a person rejects while reject_count < 3 (after counting this one)
    review    -> cancelled  the third rejection
    any       -> cancelled  a person cancels
    any       -> failed     the model or its API failed (error_message)

plus the edge-case rows: a missing design_summary at review goes back to design, and a resume
position that does not match the answers restarts discovery. Each function changes the session
in place and stamps updated_at; an illegal move raises TransitionError and changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from planner.interactive.model import (
    DecisionPoint,
    PlanningSession,
    PlanningSessionStatus,
    Question,
    now_iso,
)

S = PlanningSessionStatus
MAX_REJECTIONS = 3
"""The seed's limit: the third rejection cancels the session."""


class TransitionError(ValueError):
    """A move the state table does not allow; the message says why, for the person."""


def _require(session: PlanningSession, *allowed: PlanningSessionStatus) -> None:
    if session.status not in allowed:
        wanted = " or ".join(s.value for s in allowed)
        raise TransitionError(f"the session is in {session.status.value}, not {wanted}")


def _touch(session: PlanningSession, at: str | None) -> str:
    session.updated_at = at or now_iso()
    return session.updated_at


# -- discovery ---------------------------------------------------------------------------------


def record_answer(session: PlanningSession, question_id: str, answer: str, at: str = "") -> None:
    _require(session, S.DISCOVERY)
    question = _question(session, question_id)
    question.answer = answer
    question.answered_at = _touch(session, at)
    session.current_question_index = first_open(session.questions)


def skip_question(session: PlanningSession, question_id: str, at: str = "") -> None:
    """One question left unanswered on purpose (answer null), like a timed-out one."""
    _require(session, S.DISCOVERY)
    question = _question(session, question_id)
    question.answer = None
    question.answered_at = _touch(session, at)
    session.current_question_index = first_open(session.questions)


def skip_open_questions(session: PlanningSession, at: str = "") -> list[str]:
    """The timeout: every open question is recorded as skipped (answer null). Their ids."""
    _require(session, S.DISCOVERY)
    stamp = _touch(session, at)
    skipped = [q for q in session.questions if q.open]
    for question in skipped:
        question.answer, question.answered_at = None, stamp
    session.current_question_index = len(session.questions)
    return [q.id for q in skipped]


def finish_discovery(session: PlanningSession, at: str = "") -> bool:
    """discovery -> design once no question is open; False (no change) otherwise."""
    _require(session, S.DISCOVERY)
    if session.open_questions():
        return False
    session.status = S.DESIGN
    session.current_question_index = len(session.questions)
    _touch(session, at)
    return True


def _question(session: PlanningSession, question_id: str) -> Question:
    found = next((q for q in session.questions if q.id == question_id), None)
    if found is None:
        raise TransitionError(f"there is no question {question_id}")
    return found


def first_open(items: Sequence[Question | DecisionPoint]) -> int:
    """The resume position: the first open question (or decision point), else the length."""
    for index, item in enumerate(items):
        closed = item.answered_at if isinstance(item, Question) else item.decided_at
        if closed is None:
            return index
    return len(items)


# -- design ------------------------------------------------------------------------------------


def record_decision(
    session: PlanningSession,
    decision_id: str,
    option_id: str,
    rationale: str | None,
    at: str = "",
) -> None:
    _require(session, S.DESIGN)
    decision = next((d for d in session.decisions if d.id == decision_id), None)
    if decision is None:
        raise TransitionError(f"there is no decision point {decision_id}")
    if decision.option(option_id) is None:
        known = ", ".join(o.id for o in decision.options)
        raise TransitionError(f"{decision_id} has no option {option_id} (options: {known})")
    decision.selected_option_id = option_id
    decision.rationale = rationale or None
    decision.decided_at = _touch(session, at)
    session.current_decision_index = first_open(session.decisions)


def finish_design(session: PlanningSession, at: str = "") -> bool:
    """design -> review once every decision point is decided (and there is at least one)."""
    _require(session, S.DESIGN)
    if not session.decisions or session.open_decisions():
        return False
    session.status = S.REVIEW
    session.current_decision_index = len(session.decisions)
    session.design_summary = None  # written for this review by the review phase
    _touch(session, at)
    return True


def require_summary(session: PlanningSession, at: str = "") -> bool:
    """The edge case 'design_summary is null at review': back to design, decisions open again.
    True when the session may stay in review."""
    _require(session, S.REVIEW)
    if (session.design_summary or "").strip():
        return True
    session.status = S.DESIGN
    _reopen_decisions(session)
    _touch(session, at)
    return False


def _reopen_decisions(session: PlanningSession) -> None:
    for decision in session.decisions:
        decision.selected_option_id = decision.rationale = decision.decided_at = None
    session.current_decision_index = 0


# -- review ------------------------------------------------------------------------------------


def approve(session: PlanningSession, at: str = "") -> None:
    _require(session, S.REVIEW)
    if not (session.design_summary or "").strip():
        raise TransitionError("the session has no design summary to approve")
    session.status = S.APPROVED
    _touch(session, at)


def reject(session: PlanningSession, at: str = "") -> PlanningSessionStatus:
    """review -> design, or -> cancelled at the third rejection. The new status."""
    _require(session, S.REVIEW)
    session.reject_count += 1
    if session.reject_count >= MAX_REJECTIONS:
        session.status = S.CANCELLED
    else:
        session.status = S.DESIGN
        session.decisions = []  # the design phase proposes new options with the feedback
        session.current_decision_index = 0
        session.design_summary = None
    _touch(session, at)
    return session.status


# -- any state ---------------------------------------------------------------------------------


def cancel(session: PlanningSession, at: str = "") -> None:
    if session.status == S.CANCELLED:
        raise TransitionError("the session is already cancelled")
    session.status = S.CANCELLED
    _touch(session, at)


def fail(session: PlanningSession, message: str, at: str = "") -> None:
    session.status = S.FAILED
    session.error_message = message
    _touch(session, at)


def check_resume_position(session: PlanningSession, at: str = "") -> bool:
    """The seed's resume rule: the position must match the answers and decisions; if not,
    discovery starts again (questions kept, answers and decisions cleared). True if consistent."""
    if not session.active or _position_consistent(session):
        return True
    session.status = S.DISCOVERY
    for question in session.questions:
        question.answer = question.answered_at = None
    session.decisions = []
    session.design_summary = None
    session.current_question_index = session.current_decision_index = 0
    _touch(session, at)
    return False


def _position_consistent(session: PlanningSession) -> bool:
    questions, decisions = session.questions, session.decisions
    question_at = first_open(questions)
    decision_at = first_open(decisions)
    if session.current_question_index != question_at:
        return False
    if session.status == S.DISCOVERY:
        return decision_at == 0 and session.current_decision_index == 0
    if question_at != len(questions) or session.current_decision_index != decision_at:
        return False
    return session.status == S.DESIGN or (bool(decisions) and decision_at == len(decisions))
