"""`planner eval`: run tasks through the whole local-forge flow and check what was produced.

Each task gets a fresh repository with the issue as `.planner/issues/1.md`. Passes run one
after another, as comments would trigger them, until the run completes, fails, waits for a
person (a clarification task's answer is posted once as a comment, then the runs go on), or the
task's budget (passes, seconds) is spent. Then the check runs in a clone of the issue's branch
with the task's hidden check files laid over it: the model's own claim decides nothing.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.ci.job import CiOutcome, run_for_event
from planner.engine.config import PlannerConfig
from planner.engine.errors import PlannerError
from planner.evaluation.report import TaskReport, Usage
from planner.evaluation.scripted import scripted_server
from planner.evaluation.suite import Task, branch_tree, materialize, run_check
from planner.run.runner import history_directory

log = logging.getLogger(__name__)
ISSUE_NUMBER = 1
NEEDS_ANOTHER_PASS = ("in_progress",)


@dataclass(frozen=True)
class EvalOptions:
    """How each task is run."""

    config: PlannerConfig
    """The pass configuration (model, tool calling, per-pass budget); planning.enabled is
    already set for --no-planning."""
    scripted: str | None = None
    """A scripted stand-in model (reference | nonsense) instead of config.llm."""
    max_passes: int = 4
    """Passes per task."""
    max_task_seconds: float = 1800.0
    """Wall-clock seconds per task (each pass gets what is left)."""
    env: Mapping[str, str] | None = None
    """Environment of the passes (None: the process environment)."""


def run_task(task: Task, options: EvalOptions) -> TaskReport:
    started = time.monotonic()
    with (
        tempfile.TemporaryDirectory(prefix=f"eval-{task.name}-") as scratch,
        _model(task, options) as config,
    ):
        workspace = materialize(task, Path(scratch) / "repo")
        _write_issue(task, workspace)
        statuses, stop_reason = _passes(task, workspace, config, options, started)
        tree = branch_tree(workspace, _branch(config), Path(scratch) / "result")
        check = run_check(task, tree)
        usage = _usage(workspace, config)
    return TaskReport(
        task=task.name,
        category=task.category,
        model=config.llm.model,
        planning=config.planning.enabled,
        resolved=check.passed,
        statuses=statuses,
        asked_question="needs_human" in statuses,
        usage=usage,
        cost=usage.cost(config.llm.prices.get(config.llm.model)),
        wall_seconds=round(time.monotonic() - started, 1),
        stop_reason=stop_reason,
        check_output=check.output[-1500:],
    )


def run_suite(
    tasks: list[Task], options: EvalOptions, on_task: Callable[[TaskReport], None] | None = None
) -> list[TaskReport]:
    reports = []
    for task in tasks:
        report = run_task(task, options)
        log.info("eval %s: resolved=%s %s", task.name, report.resolved, report.statuses)
        if on_task is not None:
            on_task(report)
        reports.append(report)
    return reports


def _model(task: Task, options: EvalOptions) -> AbstractContextManager[PlannerConfig]:
    if options.scripted is None:
        return nullcontext(options.config)
    return _scripted(task, options)


@contextmanager
def _scripted(task: Task, options: EvalOptions) -> Iterator[PlannerConfig]:
    with scripted_server(options.scripted or "", task) as server:
        llm = options.config.llm.model_copy(
            update={"base_url": server.base_url, "model": f"scripted-{options.scripted}"}
        )
        if llm.api_key is None:
            llm = llm.model_validate({**llm.model_dump(), "api_key": "scripted"})
        yield options.config.model_copy(update={"llm": llm})


def _write_issue(task: Task, workspace: Path) -> None:
    issues = workspace / ".planner" / "issues"
    issues.mkdir(parents=True)
    (issues / f"{ISSUE_NUMBER}.md").write_text(f"# {task.title}\n\n{task.body}", encoding="utf-8")


def _answer(task: Task, workspace: Path) -> None:
    comments = workspace / ".planner" / "issues" / str(ISSUE_NUMBER) / "comments"
    comments.mkdir(parents=True, exist_ok=True)
    (comments / "answer.md").write_text(task.answer, encoding="utf-8")


def _passes(
    task: Task, workspace: Path, config: PlannerConfig, options: EvalOptions, started: float
) -> tuple[list[str], str]:
    """The status of each pass, and why the last one stopped (or the harness's error)."""
    statuses: list[str] = []
    answered = False
    instruction = reason = ""
    while len(statuses) < options.max_passes:
        left = options.max_task_seconds - (time.monotonic() - started)
        if left <= 0:
            return [*statuses, "task_budget"], reason
        try:
            budget = _with_wall_budget(config, left)
            outcome = _one_pass(workspace, budget, options, instruction)
        except PlannerError as exc:
            return [*statuses, "error"], str(exc)
        statuses.append(outcome.status)
        reason = outcome.reason
        instruction = ""
        if outcome.status == "needs_human" and task.answer and not answered:
            _answer(task, workspace)
            answered = True
            instruction = task.answer  # the answering comment triggers the next pass
        elif outcome.status not in NEEDS_ANOTHER_PASS:
            break
    return statuses, reason


def _one_pass(
    workspace: Path, config: PlannerConfig, options: EvalOptions, instruction: str
) -> CiOutcome:
    event = {"issue": ISSUE_NUMBER, "instruction": instruction, "actor": "local"}
    env = os.environ if options.env is None else options.env
    return run_for_event("local", workspace=workspace, config=config, env=env, event=event)


def _with_wall_budget(config: PlannerConfig, seconds: float) -> PlannerConfig:
    budget = config.budget.model_copy(
        update={"max_wall_seconds": min(config.budget.max_wall_seconds, seconds)}
    )
    return config.model_copy(update={"budget": budget})


def _branch(config: PlannerConfig) -> str:
    return f"{config.forge.branch_prefix}{ISSUE_NUMBER}"


def _usage(workspace: Path, config: PlannerConfig) -> Usage:
    usage = Usage()
    for path in history_directory(config, workspace).glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = _entry(line)
            if entry.get("type") == "model_call":
                usage.add(
                    int(entry.get("prompt_tokens", 0)), int(entry.get("completion_tokens", 0))
                )
    return usage


def _entry(line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
