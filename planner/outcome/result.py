"""The typed outcome of a pass, and the markdown checklist people see on the issue."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field

from planner.outcome.evidence import VerificationNote
from planner.plan.documents import CompletionSummary, Plan

PassStatus = Literal["completed", "in_progress", "needs_human", "failed"]
PASS_STATUSES: dict[str, PassStatus] = {
    "completed": "completed",
    "in_progress": "in_progress",
    "needs_human": "needs_human",
    "failed": "failed",
}
"""A status as the history writes it -> the PassStatus it is."""
TaskStatus = Literal["pending", "in_progress", "completed", "failed"]
NotificationKind = Literal[
    "plan_revision", "replan_override", "clarification", "assumptions", "escalation"
]
COMMENT_LIMIT = 65_000
"""GitHub refuses comments over 65,536 characters; a safe default for render_checklist."""


class Usage(BaseModel):
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, prompt_tokens: int, completion_tokens: int) -> None:
        self.model_calls += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens


class TaskView(BaseModel):
    id: str
    description: str
    status: TaskStatus = "pending"
    summary: str = ""
    waiting: bool = False
    """A change of the task is held back (staged for approval, or waiting for a person): the
    task is not done until it is made, whatever its status says."""

    @property
    def done(self) -> bool:
        return self.status == "completed" and not self.waiting

    @property
    def shown_status(self) -> TaskStatus | Literal["waiting"]:
        """What every rendering of the plan shows: a held change makes the task wait."""
        return "waiting" if self.waiting else self.status


class Notification(BaseModel):
    """A message for the people on the issue, posted by the forge layer as its own comment.

    kinds: plan_revision (§11.2, a replan was executed), replan_override (§11.2, the system
    refused the model's replan), clarification (§11.3, questions and the assumptions used if
    nobody answers), assumptions (no answer came in time; planner proceeds on them),
    escalation (a replan could not run and there is no alternative; a person must act).
    Snapshots carry every notification of the pass so far: post each `id` once.
    """

    id: str
    kind: NotificationKind
    body: str
    timestamp: str


class PreviousPlan(BaseModel):
    """A plan that a revision replaced, with its tasks as they stood then (§11.4.4)."""

    number: int
    """0 for the original plan, N for the plan made by revision #N."""
    started_at: str = ""
    reason: str = ""
    """Why this plan was made (empty for the original plan)."""
    tasks: list[TaskView] = Field(default_factory=list)


class QualityNote(BaseModel):
    """The quality judge's latest word on the plan or on the finished work (task-refinement.md;
    judged by planner.refinement, read back from history by planner.memory.state)."""

    score: int | None = None
    acceptable: bool = True
    attempts: int = 1
    """Judgements of this plan (or of this piece of finished work) so far, this one included."""
    refinements: int = 0
    """Replans with the judge's feedback before this judgement: what
    planning.refinement.max_refinement_attempts counts."""
    max_refinements: int | None = None
    """planning.refinement.max_refinement_attempts when the judgement was made."""
    issues: list[str] = Field(default_factory=list)
    suggestions: list[str] = Field(default_factory=list)

    def line(self, what: str) -> str:
        """`Quality 82/100 after 1 of 2 refinement attempts`, `Quality 86/100, first judgement`
        (what: "Quality" or "Result quality"): the count max_refinement_attempts limits."""
        score = f"{self.score}/100" if self.score is not None else "not scored"
        if not self.refinements:
            return f"{what} {score}, first judgement"
        limit = f" of {self.max_refinements}" if self.max_refinements is not None else ""
        plural = "attempt" if self.refinements == 1 and not limit else "attempts"
        return f"{what} {score} after {self.refinements}{limit} refinement {plural}"


class PassResult(BaseModel):
    """What one pass achieved, for the forge and CI layers and for people."""

    status: PassStatus
    stop_reason: str = ""
    goal: str = ""
    plan: Plan | None = None
    tasks: list[TaskView] = Field(default_factory=list)
    revision: int = 0
    revision_reason: str = ""
    previous_progress: tuple[int, int] | None = None
    plan_started_at: str = ""
    """When the current plan (original or revision) was recorded."""
    plan_history: list[PreviousPlan] = Field(default_factory=list)
    """Plans replaced by revisions, oldest first."""
    usage: Usage = Field(default_factory=Usage)
    actions: int = 0
    messages: list[str] = Field(default_factory=list)
    questions: list[str] = Field(default_factory=list)
    summary: CompletionSummary | None = None
    history_path: str = ""
    notifications: list[Notification] = Field(default_factory=list)
    """Comments for the issue produced by this pass so far (see Notification)."""
    plan_quality: QualityNote | None = None
    """The quality judge on the current plan (None: not judged, e.g. refinement is off)."""
    result_quality: QualityNote | None = None
    """The quality judge on the finished work, judged before completion."""
    verification: VerificationNote | None = None
    """The repository's tests: the command, the latest result against the baseline, new
    failures and changed test files (None: verification never ran, e.g. it is off)."""
    proceed_after: str = ""
    """A pass waiting for people (needs_human) that goes on without them from this time (ISO
    8601 UTC) at its next run: the scheduled sweep (planner.ci.handlers.sweep) starts that run.
    '' when nothing proceeds by itself."""

    @property
    def completed(self) -> bool:
        return self.status == "completed"

    def progress(self) -> tuple[int, int]:
        done = sum(1 for task in self.tasks if task.done)
        return done, len(self.tasks)


MARKS = {"completed": "x", "failed": " ", "pending": " ", "in_progress": " ", "waiting": " "}
SUFFIX = {
    "failed": " ❌ failed",
    "in_progress": " ⏳ in progress",
    "pending": "",
    "completed": "",
    "waiting": " ⏸️ waiting for approval",
}


def render_checklist(
    result: PassResult, max_chars: int | None = None, *, history: bool = True
) -> str:
    """The plan as a markdown checklist (replanning.md §11.4).

    A revised plan adds its reason, the previous progress, the §11.4.5 footer and the earlier
    plans folded into <details> (left out with `history=False`: a task's prompt needs the plan
    it works on, and a small model copies the earlier ones). With max_chars, the oldest earlier
    plans are dropped first until the text fits; the current checklist itself is never cut.
    """
    current = _current_checklist(result)
    if not history:
        return current
    earlier = result.plan_history
    for omitted in range(len(earlier) + 1):
        text = current + _history_block(earlier[omitted:], omitted)
        if max_chars is None or len(text) <= max_chars:
            return text
    return current


def _current_checklist(result: PassResult) -> str:
    if not result.tasks:
        return "_No plan yet._\n"
    title = "## 📋 Execution Plan"
    lines = [f"{title} (Revised #{result.revision})" if result.revision else title, ""]
    if result.goal:
        lines += [f"**Goal**: {_one_line(result.goal)}", ""]
    if result.revision:
        lines += _revision_header(result)
    lines += [_task_line(task) for task in result.tasks]
    lines += ["", _progress_line(result)]
    lines += _quality_lines(result)
    if result.revision:
        lines.append(f"*Plan Revisions: {result.revision} times*")
        if result.plan_started_at:
            started = format_timestamp(result.plan_started_at)
            lines.append(f"*Current Plan: #{result.revision + 1} (started at {started})*")
    return "\n".join(lines) + "\n"


def _history_block(plans: list[PreviousPlan], omitted: int) -> str:
    if not plans:
        return ""
    lines = ["", "<details>", "<summary>📜 Previous Plan History</summary>", ""]
    if omitted:
        lines += [f"_{omitted} older plan(s) omitted to fit the comment._", ""]
    for plan in plans:
        lines += _previous_plan(plan)
    return "\n".join([*lines, "</details>"]) + "\n"


def _previous_plan(plan: PreviousPlan) -> list[str]:
    name = f"Revision #{plan.number}" if plan.number else "Original Plan"
    started = f" ({format_timestamp(plan.started_at)})" if plan.started_at else ""
    lines = [f"### {name}{started}"]
    lines += [
        f"- [{MARKS[t.status]}] {t.id}: {_one_line(t.description)}{SUFFIX[t.status]}"
        for t in plan.tasks
    ]
    if plan.reason:
        lines += ["", f"**Revision Reason**: {_one_line(plan.reason)}"]
    return [*lines, ""]


def format_timestamp(iso: str) -> str:
    """2026-11-01T10:00:00.000Z -> 2026-11-01 10:00:00 UTC (what people read on the issue)."""
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S") + (" UTC" if moment.tzinfo else "")


def _revision_header(result: PassResult) -> list[str]:
    lines = [f"**Revision Reason**: {_one_line(result.revision_reason)}", ""]
    if result.previous_progress is not None:
        done, total = result.previous_progress
        lines += [f"**Previous Progress**: {done}/{total}", ""]
    return [*lines, "### New Plan:"]


def _task_line(task: TaskView) -> str:
    mark, suffix = MARKS[task.shown_status], SUFFIX[task.shown_status]
    return f"- [{mark}] **{task.id}**: {_one_line(task.description)}{suffix}"


def _progress_line(result: PassResult) -> str:
    done, total = result.progress()
    percent = round(100 * done / total) if total else 0
    return f"*Progress: {done}/{total} ({percent}%) complete*"


def _quality_lines(result: PassResult) -> list[str]:
    notes = [("Quality", result.plan_quality), ("Result quality", result.result_quality)]
    return [f"*{note.line(what)}*" for what, note in notes if note is not None]


def _one_line(text: str) -> str:
    return " ".join(text.split())
