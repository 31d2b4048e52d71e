"""Control-flow signals of a pass: the only way a step or phase changes where the loop goes."""

from __future__ import annotations

from planner.outcome.result import PassStatus


class StopPass(Exception):
    """End the pass now with this status (budget, a question for people, completion).

    `reason` and `messages` land in the run_end entry and the pass result; `questions`, when
    given, are the questions the pass result shows people (e.g. what an approval waits for).
    Whatever else must be remembered is appended to the history before raising.
    """

    def __init__(
        self,
        status: PassStatus,
        reason: str,
        messages: list[str] | None = None,
        questions: list[str] | None = None,
    ) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.messages = messages or []
        self.questions = questions or []


class PlanChanged(Exception):
    """The plan changed: leave the current task and pick the next one from the new plan.

    Without `feedback` the new plan is already in the history (a revision was saved). With
    `feedback` nothing was saved: the plan is made again from scratch and the planning request
    carries this text (a judge's reason for rejecting the plan).
    """

    def __init__(self, feedback: str = "") -> None:
        super().__init__(feedback or "plan changed")
        self.feedback = feedback
