"""CiOutcome: what one CI run ended with, for the entry point (exit code, job outputs, job
summary). Its own module because the run (planner.ci.issue_run), the planning sessions
(planner.ci.handlers.interactive), the job summary and the entry point all make or read one."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

OutcomeStatus = Literal["skipped", "stopped", "completed", "in_progress", "needs_human", "failed"]


class CiOutcome(BaseModel):
    """What happened, for the entry point (exit code, job outputs, job summary)."""

    status: OutcomeStatus
    reason: str = ""
    platform: str = ""
    issue_number: int | None = None
    branch: str = ""
    pr_url: str = ""
    comment_url: str = ""
    commit: str = ""
    """The commit this run pushed ('' when the pass changed nothing)."""
    tokens_used: int = 0
    model_calls: int = 0
    history_path: str = ""

    @property
    def exit_code(self) -> int:
        return 1 if self.status == "failed" else 0
