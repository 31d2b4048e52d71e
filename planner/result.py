"""The typed outcome of a pass, and the markdown checklist people see on the issue."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from planner.documents import CompletionSummary, Plan

PassStatus = Literal["completed", "in_progress", "needs_human", "failed"]
TaskStatus = Literal["pending", "in_progress", "completed", "failed"]


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
    usage: Usage = Field(default_factory=Usage)
    actions: int = 0
    messages: list[str] = Field(default_factory=list)
    questions: list[str] = Field(default_factory=list)
    summary: CompletionSummary | None = None
    history_path: str = ""

    @property
    def completed(self) -> bool:
        return self.status == "completed"

    def progress(self) -> tuple[int, int]:
        done = sum(1 for task in self.tasks if task.status == "completed")
        return done, len(self.tasks)


MARKS = {"completed": "x", "failed": " ", "pending": " ", "in_progress": " "}
SUFFIX = {"failed": " ❌ failed", "in_progress": " ⏳ in progress", "pending": "", "completed": ""}


def render_checklist(result: PassResult) -> str:
    """The plan as a markdown checklist (replanning.md §11.4.2 and §11.4.5)."""
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
    if result.revision:
        lines.append(f"*Plan Revisions: {result.revision} times*")
    return "\n".join(lines) + "\n"


def _revision_header(result: PassResult) -> list[str]:
    lines = [f"**Revision Reason**: {_one_line(result.revision_reason)}", ""]
    if result.previous_progress is not None:
        done, total = result.previous_progress
        lines += [f"**Previous Progress**: {done}/{total}", ""]
    return [*lines, "### New Plan:"]


def _task_line(task: TaskView) -> str:
    mark, suffix = MARKS[task.status], SUFFIX[task.status]
    return f"- [{mark}] **{task.id}**: {_one_line(task.description)}{suffix}"


def _progress_line(result: PassResult) -> str:
    done, total = result.progress()
    percent = round(100 * done / total) if total else 0
    return f"*Progress: {done}/{total} ({percent}%) complete*"


def _one_line(text: str) -> str:
    return " ".join(text.split())
