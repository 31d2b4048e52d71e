"""What `planner eval` reports: per task and in total, as JSON and as a markdown table."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from planner.engine.config import ModelPrice


class Usage(BaseModel):
    """Model requests and tokens, summed over a task's passes (from its history)."""

    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, prompt: int, completion: int) -> None:
        self.model_calls += 1
        self.prompt_tokens += prompt
        self.completion_tokens += completion

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def cost(self, price: ModelPrice | None) -> float | None:
        """USD, or None (reported as `unknown`) when the model has no price."""
        if price is None:
            return None
        return round(
            (
                self.prompt_tokens * price.prompt_per_million
                + self.completion_tokens * price.completion_per_million
            )
            / 1e6,
            6,
        )


class TaskReport(BaseModel):
    """One task's run: resolution comes from the check, never from the model."""

    task: str
    category: str
    model: str
    planning: bool
    resolved: bool
    statuses: list[str] = Field(default_factory=list)
    """The status of each pass, then `task_budget` or `error` when the harness stopped it."""
    asked_question: bool = False
    usage: Usage = Field(default_factory=Usage)
    cost: float | None = None
    wall_seconds: float = 0.0
    stop_reason: str = ""
    """Why the last pass stopped (its reason, or the error that ended it)."""
    actions: list[str] = Field(default_factory=list)
    """The tool calls of every pass in order (failed ones with their error)."""
    check_output: str = ""


def summary(reports: list[TaskReport]) -> dict[str, Any]:
    resolved = sum(report.resolved for report in reports)
    costs = [report.cost for report in reports]
    return {
        "tasks": len(reports),
        "resolved": resolved,
        "resolved_percent": round(100 * resolved / len(reports), 1) if reports else 0.0,
        "model_calls": sum(r.usage.model_calls for r in reports),
        "prompt_tokens": sum(r.usage.prompt_tokens for r in reports),
        "completion_tokens": sum(r.usage.completion_tokens for r in reports),
        "cost": None if None in costs else round(sum(c or 0.0 for c in costs), 6),
        "wall_seconds": round(sum(r.wall_seconds for r in reports), 1),
    }


def to_json(reports: list[TaskReport]) -> str:
    tasks = [{**r.model_dump(), "cost": _json_cost(r.cost)} for r in reports]
    total = summary(reports)
    document = {"summary": {**total, "cost": _json_cost(total["cost"])}, "tasks": tasks}
    return json.dumps(document, indent=2)


def _json_cost(cost: float | None) -> float | str:
    return "unknown" if cost is None else cost


def to_markdown(reports: list[TaskReport]) -> str:
    lines = [
        "| task | category | model | planning | resolved | passes | calls | prompt tokens "
        "| completion tokens | cost | seconds |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [_row(report) for report in reports]
    total = summary(reports)
    lines.append(
        f"| **total** | | | | **{total['resolved']}/{total['tasks']} "
        f"({total['resolved_percent']}%)** | | {total['model_calls']} | "
        f"{total['prompt_tokens']} | {total['completion_tokens']} | {_cost(total['cost'])} | "
        f"{total['wall_seconds']} |"
    )
    return "\n".join(lines) + "\n"


def _row(report: TaskReport) -> str:
    usage = report.usage
    passes = " → ".join(report.statuses) or "none"
    return (
        f"| {report.task} | {report.category} | {report.model} | "
        f"{'on' if report.planning else 'off'} | {'yes' if report.resolved else 'no'} | "
        f"{passes} | {usage.model_calls} | {usage.prompt_tokens} | {usage.completion_tokens} | "
        f"{_cost(report.cost)} | {report.wall_seconds} |"
    )


def _cost(cost: float | None) -> str:
    return "unknown" if cost is None else f"${cost:.4f}"
