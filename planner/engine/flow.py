"""Control-flow signals of a pass, shared by the coordinator and the replanning hooks."""

from __future__ import annotations

from planner.engine.result import PassStatus


class StopPass(Exception):
    """End the pass now with this status (budget, a question for people, completion)."""

    def __init__(self, status: PassStatus, reason: str, messages: list[str] | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.messages = messages or []


class PlanChanged(Exception):
    """The plan was revised while a task ran; pick the next task from the new plan."""
