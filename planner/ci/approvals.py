"""`/planner approve …` and `/planner reject …` from a person the trigger already checked for
write access: recorded with PlanTool before the pass, which then runs what was approved."""

from __future__ import annotations

from pathlib import Path

from planner.approval.answers import apply_answer
from planner.approval.commands import parse_command
from planner.approval.setup import build_plan_tool
from planner.engine.config import PlannerConfig
from planner.engine.history import PlanningHistoryStore
from planner.engine.interfaces import ToolResult
from planner.engine.issue import IssueContext


def record_answer(
    config: PlannerConfig, workspace: Path, directory: Path, issue: IssueContext, text: str,
    approver: str,
) -> str | None:
    """The tracking comment's line about the answer, or None when `text` is not one."""
    answer = parse_command(text)
    if answer is None:
        return None
    journal = PlanningHistoryStore(directory, issue.repository, issue.number)
    tool = build_plan_tool(
        config, workspace, directory, issue.number, _no_execution, journal=journal
    )
    return apply_answer(tool, answer, approver)


def _no_execution(name: str, arguments: dict[str, object]) -> ToolResult:
    return ToolResult(ok=False, error="specs run inside the pass, not while answers are recorded")
