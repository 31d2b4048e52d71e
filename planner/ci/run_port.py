"""What the branch's durability (planner.ci.durability.durable) and the planning sessions
(planner.ci.handlers.interactive) need from the run on one issue; planner.ci.issue_run.IssueRun
implements it.

The run calls both of them, so they name this port, not IssueRun, and the imports point one
way: issue_run → durable → run_port, handlers → interactive → run_port.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from planner.ci.branch.gitops import GitWorkspace, Identity
from planner.ci.branch.lease import Lease
from planner.ci.events.triggers import Trigger
from planner.ci.forges.base import ForgeAdapter, IssueData, PullRequestData
from planner.ci.outcome import CiOutcome, OutcomeStatus
from planner.ci.report.tracking import TrackingState, TrackingView
from planner.config import PlannerConfig
from planner.core.interfaces import HistoryBackend, ToolProvider
from planner.outcome.result import PassResult


@dataclass
class Target:
    """The issue a permitted trigger acts on (and the PR a feedback comment was made on)."""

    number: int
    issue: IssueData
    pull: PullRequestData | None = None


class IssueRunPort(Protocol):
    forge: ForgeAdapter
    trigger: Trigger
    target: Target
    config: PlannerConfig
    workspace: Path
    number: int
    branch: str
    run_id: str
    git: GitWorkspace | None
    """The issue branch's checkout once the pass prepared it (None before)."""
    lease: Lease | None
    start_head: str
    """HEAD as the branch was fetched, before the pass (planner.ci.durability.durable)."""
    view: TrackingView
    """What the tracking comment shows; notes are appended to it."""

    def identity(self) -> Identity:
        """Who commits: forge.commit_name/commit_email, else the platform's bot."""
        ...

    def commit_message(self, result: PassResult) -> str: ...

    def reply(self, status: OutcomeStatus, text: str) -> CiOutcome:
        """Answer the person on the issue and do nothing else."""
        ...

    def execute(
        self, *, model: Any, extra_tools: tuple[ToolProvider, ...], history: HistoryBackend | None
    ) -> CiOutcome:
        """A pass on the issue (under the lease the caller holds)."""
        ...

    def load_earlier_runs(self) -> None:
        """The tracking comment's lines of earlier runs, before it is written again."""
        ...

    def write_comment(self) -> None: ...

    def finish(self, outcome: CiOutcome, state: TrackingState, label: bool = True) -> None:
        """Final comment, label and question; fills in the outcome's links."""
        ...
