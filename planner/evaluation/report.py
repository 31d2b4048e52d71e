"""What `planner eval` reports: per task and in total, as JSON and as a markdown table."""

from __future__ import annotations

import json
import statistics
from typing import Any

from pydantic import BaseModel, Field

from planner.config import ModelPrice


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

    @property
    def completed_but_wrong(self) -> bool:
        """The run ended `completed` and the hidden check fails: a wrong fix reported as done."""
        return bool(self.statuses) and self.statuses[-1] == "completed" and not self.resolved


def summary(reports: list[TaskReport]) -> dict[str, Any]:
    resolved = sum(report.resolved for report in reports)
    costs = [report.cost for report in reports]
    solved = [report for report in reports if report.resolved]
    return {
        "tasks": len(reports),
        "resolved": resolved,
        "resolved_percent": round(100 * resolved / len(reports), 1) if reports else 0.0,
        "model_calls": sum(r.usage.model_calls for r in reports),
        "prompt_tokens": sum(r.usage.prompt_tokens for r in reports),
        "completion_tokens": sum(r.usage.completion_tokens for r in reports),
        "cost": None if None in costs else round(sum(c or 0.0 for c in costs), 6),
        "wall_seconds": round(sum(r.wall_seconds for r in reports), 1),
        "completed_but_wrong": sum(report.completed_but_wrong for report in reports),
        "median_calls_resolved": _median([r.usage.model_calls for r in solved]),
        "median_prompt_tokens_resolved": _median([r.usage.prompt_tokens for r in solved]),
    }


def _median(values: list[int]) -> float | None:
    return float(statistics.median(values)) if values else None


def to_json(reports: list[TaskReport]) -> str:
    tasks = [
        {**r.model_dump(), "cost": _json_cost(r.cost), "completed_but_wrong": r.completed_but_wrong}
        for r in reports
    ]
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
    medians = (
        f"median per resolved task: {_number(total['median_calls_resolved'])} calls, "
        f"{_number(total['median_prompt_tokens_resolved'])} prompt tokens"
    )
    lines.append("")
    lines.append(
        f"Ended `completed` with the check failing: {total['completed_but_wrong']}; {medians}."
    )
    return "\n".join(lines) + "\n"


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def _row(report: TaskReport) -> str:
    usage = report.usage
    passes = " → ".join(report.statuses) or "none"
    if report.completed_but_wrong:
        passes += " (wrong)"
    return (
        f"| {report.task} | {report.category} | {report.model} | "
        f"{'on' if report.planning else 'off'} | {'yes' if report.resolved else 'no'} | "
        f"{passes} | {usage.model_calls} | {usage.prompt_tokens} | {usage.completion_tokens} | "
        f"{_cost(report.cost)} | {report.wall_seconds} |"
    )


def _cost(cost: float | None) -> str:
    return "unknown" if cost is None else f"${cost:.4f}"
