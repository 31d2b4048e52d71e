"""`/planner approve …` and `/planner reject …` from a person the trigger already checked for
write access: recorded with PlanTool before the pass, which then runs what was approved.

An answer counts only as a command on its own line that came after the request it answers was
shown (planner.ci.gate.request_marks); anything else is answered with why it did not count."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from planner.approval.answers import apply_answer, waiting_specs
from planner.approval.commands import UNREADABLE, is_attempt, parse_command
from planner.approval.models import ActionSpecExt, spec_digest
from planner.approval.render import approval_request
from planner.approval.setup import build_plan_tool
from planner.approval.tool import PlanTool
from planner.ci.gate.request_marks import ENTRY, RequestMark, digest
from planner.config import PlannerConfig
from planner.core.interfaces import ToolResult
from planner.memory.history import PlanningHistoryStore
from planner.text.issue import IssueContext


@dataclass(frozen=True)
class WaitingRequest:
    section: str
    """The tracking comment's approval request: what waits, previewed ("" if nothing)."""
    specs: dict[str, str]
    """What it shows, by spec id: spec_digest() of each."""


def waiting_request(
    config: PlannerConfig, workspace: Path, directory: Path, issue: IssueContext
) -> WaitingRequest:
    """What waits for a person, previewed for the tracking comment."""
    tool = _plan_tool(config, workspace, directory, issue)
    waiting = waiting_specs(tool)
    section = approval_request(tool, waiting) if waiting else ""
    return WaitingRequest(section, {spec.id: spec_digest(spec) for spec in waiting})


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
    refusal: Callable[[], str] = lambda: "",
    *,
    comment_id: str = "",
    thread: int | None = None,
) -> str | None:
    """The tracking comment's line about the answer, or None when `text` is not one.
    `refusal` says why an answer cannot count ('' when it can); asked only of answers.
    `comment_id` on `thread` is where the answer was given (kept with an approval)."""
    line = text.strip().split("\n", 1)[0].strip()
    answer = parse_command(line)
    if not line:
        return None
    tool = _plan_tool(config, workspace, directory, issue)
    waiting = waiting_specs(tool)
    if answer is None and not is_attempt(line):  # guidance: it never rejects what waits
        return _not_an_answer(waiting) if waiting else None
    if not waiting:
        return None if answer is None else "Nothing is waiting for approval."
    problem = refusal()
    if problem:
        return f"`{line[:80]}` did not count, so nothing was approved or rejected: {problem}"
    if answer is None:
        return UNREADABLE
    return apply_answer(tool, answer, approver, comment_id=comment_id, thread=thread)


def _not_an_answer(waiting: list[ActionSpecExt]) -> str:
    ids = ", ".join(spec.id for spec in waiting)
    return (
        f"Nothing was approved or rejected: this comment is not an answer to the approval "
        f"request, so {ids} still wait(s) for `/planner approve` or `/planner reject <id> <why>`."
        " The comment stays on the issue, and the next pass reads it."
    )


def last_mark(journal: PlanningHistoryStore) -> RequestMark | None:
    """Where the approval request now waiting was first shown (None if it never was)."""
    marks = [e for e in journal.entries() if e.get("type") == ENTRY]
    return RequestMark.model_validate(marks[-1]["mark"]) if marks else None


def remember_shown(
    journal: PlanningHistoryStore, request: WaitingRequest, mark: Callable[[], RequestMark]
) -> None:
    """A new mark when what is shown changed; the same request shown again keeps its mark."""
    previous = last_mark(journal)
    if previous is None or previous.digest != digest(request.section):
        made = mark().model_copy(update={"specs": request.specs})
        journal.append(ENTRY, mark=made.model_dump())


def _no_execution(name: str, arguments: dict[str, object]) -> ToolResult:
    return ToolResult(ok=False, error="specs run inside the pass, not while answers are recorded")
