"""`/planner approve …` and `/planner reject …` from a person the trigger already checked for
write access: recorded with PlanTool before the pass, which then runs what was approved."""

from __future__ import annotations

from pathlib import Path

from planner.approval.answers import apply_answer, waiting_specs
from planner.approval.commands import parse_command
from planner.approval.render import approval_request
from planner.approval.setup import build_plan_tool
from planner.approval.tool import PlanTool
from planner.engine.config import PlannerConfig
from planner.engine.history import PlanningHistoryStore
from planner.engine.interfaces import ToolResult
from planner.engine.issue import IssueContext


def waiting_section(
    config: PlannerConfig, workspace: Path, directory: Path, issue: IssueContext
) -> str:
    """The tracking comment's approval request: what waits, previewed (empty if nothing)."""
    tool = _plan_tool(config, workspace, directory, issue)
    waiting = waiting_specs(tool)
    return approval_request(tool, waiting) if waiting else ""


def _plan_tool(
    config: PlannerConfig, workspace: Path, directory: Path, issue: IssueContext
) -> PlanTool:
    journal = PlanningHistoryStore(directory, issue.repository, issue.number)
    return build_plan_tool(
        config, workspace, directory, issue.number, _no_execution, journal=journal
    )


def record_answer(
    config: PlannerConfig,
    workspace: Path,
    directory: Path,
    issue: IssueContext,
    text: str,
    approver: str,
) -> str | None:
    """The tracking comment's line about the answer, or None when `text` is not one."""
    answer = parse_command(text)
    if answer is None:
        return None
    return apply_answer(_plan_tool(config, workspace, directory, issue), answer, approver)


def _no_execution(name: str, arguments: dict[str, object]) -> ToolResult:
    return ToolResult(ok=False, error="specs run inside the pass, not while answers are recorded")
