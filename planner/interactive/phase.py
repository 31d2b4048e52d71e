"""The interactive phase: an issue's planning session as a hook of the pass loop.

before_planning   after an approved session, every plan of the issue is made from the
                  session's enhanced instruction (build_enhanced_instruction), followed by the
                  instruction of the run when there is one (a session cancelled after it,
                  or the approved session cancelled, ends that); while a session of the issue still
                  waits for people, no plan is made (the pass stops as needs_human).

The session itself (questions, decisions, review) is a conversation with people between
passes: on an issue planner.ci.handlers.interactive drives it, in a terminal `planner plan` does.
"""

from __future__ import annotations

from planner.engine.context import PassContext
from planner.engine.phase import Phase
from planner.interactive.model import PlanningSession, PlanningSessionStatus
from planner.interactive.operations import build_enhanced_instruction
from planner.interactive.storage import issue_sessions
from planner.outcome.flow import StopPass

RUN_HEADING = "## Instruction for this run"


class InteractivePhase(Phase):
    name = "interactive"

    def before_planning(self, run: PassContext, instruction: str) -> str:
        sessions = issue_sessions(run.store.entries())
        if sessions and sessions[-1].active:
            waiting = sessions[-1]
            reason = (
                f"interactive planning session {waiting.session_id} is in "
                f"{waiting.status.value}: no plan before it is approved"
            )
            raise StopPass("needs_human", reason, [reason])
        approved = _latest_approved(sessions)
        if approved is None:
            return instruction
        design = build_enhanced_instruction(approved)
        if design in instruction:
            return instruction
        extra = instruction.strip()
        return f"{design}\n\n{RUN_HEADING}\n{extra}" if extra else design


def _latest_approved(sessions: list[PlanningSession]) -> PlanningSession | None:
    """The design passes plan from: the newest session that ended by a person's word, when it
    was approved (a cancelled one, approved before or not, means none; a failed one is no
    word and is passed over)."""
    for session in reversed(sessions):
        if session.status == PlanningSessionStatus.APPROVED:
            return session
        if session.status == PlanningSessionStatus.CANCELLED:
            return None
    return None
