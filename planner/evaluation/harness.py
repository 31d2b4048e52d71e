"""`planner eval`: run tasks pass after pass and check what was produced.

Each task gets a fresh repository, checked out on the issue's branch. Passes run one after
another, as comments would trigger them, each followed by a commit of what it changed (as the
CI layer commits), until the run completes, fails, waits for a person (a clarification task's
answer then comes as the comment that starts the next pass, once), or the task's budget (passes,
seconds) is spent. Then the check runs in a clone of the issue's branch with the task's hidden
check files laid over it: the model's own claim decides nothing. Like the CI layer, evaluation
drives passes through planner.run; it does not go through the CI layer.
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.config import PlannerConfig
from planner.core.errors import PlannerError
from planner.evaluation.report import TaskReport, Usage
from planner.evaluation.scripted import scripted_server
from planner.evaluation.suite import Task, branch_tree, commit_all, materialize, run_check
from planner.outcome.result import PassResult
from planner.run.runner import PassSetup, history_directory, run_pass
from planner.text.issue import Comment, IssueContext

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
    download: bool = True
    """A real-repository task's package may be downloaded when it is not cached."""


def run_task(task: Task, options: EvalOptions) -> TaskReport:
    started = time.monotonic()
    with (
        tempfile.TemporaryDirectory(prefix=f"eval-{task.name}-") as scratch,
        _model(task, options) as config,
    ):
        workspace = materialize(
            task, Path(scratch) / "repo", branch=_branch(config), download=options.download
        )
        statuses, stop_reason = _passes(task, workspace, config, options, started)
        tree = branch_tree(workspace, _branch(config), Path(scratch) / "result")
        check = run_check(task, tree)
        usage, actions = _usage(workspace, config)
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
        actions=actions,
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
    with scripted_server(options.scripted or "", task, options.download) as server:
        llm = options.config.llm.model_copy(
            update={"base_url": server.base_url, "model": f"scripted-{options.scripted}"}
        )
        if llm.api_key is None:
            llm = llm.model_validate({**llm.model_dump(), "api_key": "scripted"})
        yield options.config.model_copy(update={"llm": llm})


def _issue(task: Task, answered: bool, starts_pass: bool) -> IssueContext:
    """The issue as a pass sees it; once answered, the answer is a comment on it, and the
    instruction of the pass it started."""
    answer = task.answer if answered else ""
    comments = [Comment(author="maintainer", body=answer, id="answer")] if answer else []
    return IssueContext(
        repository=f"eval/{task.name}",
        number=str(ISSUE_NUMBER),
        title=task.title,
        body=task.body,
        author="maintainer",
        comments=comments,
        instruction=answer if starts_pass else "",
    )


def _passes(
    task: Task, workspace: Path, config: PlannerConfig, options: EvalOptions, started: float
) -> tuple[list[str], str]:
    """The status of each pass, and why the last one stopped (or the harness's error)."""
    statuses: list[str] = []
    answered = False
    reason = ""
    while len(statuses) < options.max_passes:
        left = options.max_task_seconds - (time.monotonic() - started)
        if left <= 0:
            return [*statuses, "task_budget"], reason
        issue = _issue(task, answered, answered and statuses[-1] == "needs_human")
        try:
            result = _one_pass(workspace, _with_wall_budget(config, left), issue)
        except PlannerError as exc:
            return [*statuses, "error"], str(exc)
        statuses.append(result.status)
        reason = result.stop_reason
        if result.status == "needs_human" and task.answer and not answered:
            answered = True
        elif result.status not in NEEDS_ANOTHER_PASS:
            break
    return statuses, reason


def _one_pass(workspace: Path, config: PlannerConfig, issue: IssueContext) -> PassResult:
    result = run_pass(PassSetup(config=config, workspace=workspace), issue)
    commit_all(workspace, f"planner: {result.status}")
    return result


def _with_wall_budget(config: PlannerConfig, seconds: float) -> PlannerConfig:
    budget = config.budget.model_copy(
        update={"max_wall_seconds": min(config.budget.max_wall_seconds, seconds)}
    )
    return config.model_copy(update={"budget": budget})


def _branch(config: PlannerConfig) -> str:
    return f"{config.forge.branch_prefix}{ISSUE_NUMBER}"


def _usage(workspace: Path, config: PlannerConfig) -> tuple[Usage, list[str]]:
    """Model usage and the actions taken (tool and outcome), from the issue's history."""
    usage, actions = Usage(), []
    for path in history_directory(config, workspace).glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = _entry(line)
            if entry.get("type") == "model_call":
                usage.add(
                    int(entry.get("prompt_tokens", 0)), int(entry.get("completion_tokens", 0))
                )
            elif entry.get("type") == "action":
                actions.append(_action(entry))
    return usage, actions


def _action(entry: dict[str, Any]) -> str:
    name = entry.get("execution", {}).get("function_call", {}).get("name", "?")
    return str(name) if entry.get("ok") else f"{name} (failed: {str(entry.get('error'))[:80]})"


def _entry(line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}
