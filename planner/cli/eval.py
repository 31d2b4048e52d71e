"""`planner eval`: run an evaluation suite and report resolution, calls, tokens, cost, time."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from planner.config import PlannerConfig, load_config
from planner.evaluation.harness import EvalOptions, run_suite
from planner.evaluation.packages import fetch
from planner.evaluation.report import TaskReport, summary, to_json, to_markdown
from planner.evaluation.scripted import SCRIPTED_MODELS
from planner.evaluation.suite import SUITES, Task, load_suite
from planner.model.llm import served_model

FLAG_KEYS = {
    "model": "llm.model",
    "base_url": "llm.base_url",
    "tool_calling": "llm.tool_calling",
    "edit_format": "llm.edit_format",
    "structured_output": "llm.structured_output",
    "max_output_tokens": "llm.max_output_tokens",
    "timeout_seconds": "llm.timeout_seconds",
    "max_actions": "budget.max_actions",
    "max_model_calls": "budget.max_model_calls",
}
ALLOWED_COMMANDS = ["python -m pytest", "python3 -m pytest"]
"""What the model may run in a task repository (the checks are pytest suites)."""


def add_eval_command(commands: Any) -> None:
    parser = commands.add_parser("eval", help="run an evaluation suite and report the results")
    parser.add_argument(
        "--suite",
        default="builtin",
        help="builtin (13 small tasks), real (released packages with one bug put back in), "
        "holdout (more such packages, kept apart as a held-out half) or a suite directory",
    )
    parser.add_argument("--tasks", help="comma-separated task names (default: every task)")
    parser.add_argument(
        "--no-planning", action="store_true", help="run with planning.enabled: false"
    )
    parser.add_argument(
        "--scripted", choices=SCRIPTED_MODELS, help="a scripted stand-in model (no LLM)"
    )
    parser.add_argument("--config", type=Path, help="config file for every pass")
    parser.add_argument("--max-passes", type=int, default=4, help="passes per task")
    parser.add_argument("--task-seconds", type=float, default=1800, help="seconds per task")
    parser.add_argument("--json-out", type=Path, help="write the JSON report here")
    parser.add_argument("--markdown-out", type=Path, help="write the markdown table here")
    parser.add_argument(
        "--offline",
        action="store_true",
        help="never download a real-repository task's package: use the cache only",
    )
    parser.add_argument(
        "--fetch-only",
        action="store_true",
        help="download (and verify) the suite's packages into the cache, then stop",
    )
    for flag, key in FLAG_KEYS.items():
        parser.add_argument(f"--{flag.replace('_', '-')}", dest=flag, help=f"sets {key}")
    parser.set_defaults(handler=run_eval)


def run_eval(args: argparse.Namespace) -> int:
    suite = SUITES.get(args.suite, Path(args.suite))
    tasks = load_suite(suite, args.tasks.split(",") if args.tasks else None)
    if args.fetch_only:
        return _fetch(tasks, download=not args.offline)
    options = EvalOptions(
        config=_config(args),
        scripted=args.scripted,
        max_passes=args.max_passes,
        max_task_seconds=args.task_seconds,
        download=not args.offline,
    )
    _put_interpreter_on_path()
    done: list[TaskReport] = []

    def on_task(report: TaskReport) -> None:
        done.append(report)
        _progress(report, args)
        _write(done, args, final=False)  # a long run interrupted keeps the tasks it finished

    reports = run_suite(tasks, options, on_task=on_task)
    _write(reports, args)
    print(to_markdown(reports), end="")
    return 0


def _fetch(tasks: list[Task], download: bool) -> int:
    """Every package the tasks name, verified, into the cache (the one step that downloads)."""
    sources = dict.fromkeys(task.source for task in tasks if task.source is not None)
    for source in sources:
        archive = fetch(source, download=download)
        print(f"eval: {source.requirement()}: {archive} (sha256 verified)", file=sys.stderr)
    return 0


def _config(args: argparse.Namespace) -> PlannerConfig:
    overrides: dict[str, Any] = {
        key: getattr(args, flag) for flag, key in FLAG_KEYS.items() if getattr(args, flag)
    }
    overrides["tools.allowed_commands"] = ALLOWED_COMMANDS
    if args.no_planning:
        overrides["planning.enabled"] = False
    env = {**os.environ, "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY") or "unused"}
    return load_config(
        args.config,
        env=env,
        overrides=overrides,
        required_file=args.config is not None,
        served_model=None if args.scripted else served_model,
    )


def _put_interpreter_on_path() -> None:
    # The model's `python -m pytest` (run_command inherits this process's PATH) must find the
    # interpreter running the eval, which has pytest.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    os.environ["PATH"] = path


def _progress(report: TaskReport, args: argparse.Namespace) -> None:
    print(
        f"eval: {report.task}: {'resolved' if report.resolved else 'not resolved'} "
        f"({' → '.join(report.statuses)}{', wrong' if report.completed_but_wrong else ''}, "
        f"{report.usage.model_calls} calls, {report.usage.prompt_tokens} prompt tokens, "
        f"{report.wall_seconds:.0f}s)",
        file=sys.stderr,
        flush=True,
    )


def _write(reports: list[TaskReport], args: argparse.Namespace, final: bool = True) -> None:
    if args.json_out:
        args.json_out.write_text(to_json(reports) + "\n", encoding="utf-8")
    if args.markdown_out:
        args.markdown_out.write_text(to_markdown(reports), encoding="utf-8")
    if not final:
        return
    total = summary(reports)
    print(f"eval: resolved {total['resolved']}/{total['tasks']}", file=sys.stderr)
