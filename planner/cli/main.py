"""The `planner` command: run one pass locally, show an issue's history, or run the demo."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from planner import __version__
from planner.ci.forges.issue_file import load_issue_file
from planner.cli import plan_tool
from planner.cli.describe import describe
from planner.cli.eval import add_eval_command
from planner.cli.lease import add_lease_command
from planner.cli.plan import add_plan_command, run_plan
from planner.config import DEFAULT_CONFIG_PATH, PlannerConfig, load_config
from planner.core.errors import PlannerError, UserInputError
from planner.memory.history import PlanningHistoryStore
from planner.model.llm import require_api_key, served_model
from planner.run.runner import PassSetup, history_directory, repository_name, run_pass
from planner.text.redaction import RedactingFilter, redact, register_environment_secrets

FLAG_KEYS = {
    "model": "llm.model",
    "base_url": "llm.base_url",
    "max_actions": "budget.max_actions",
    "max_model_calls": "budget.max_model_calls",
    "max_tokens": "budget.max_total_tokens",
    "max_seconds": "budget.max_wall_seconds",
    "history_dir": "planning.history.directory",
}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="planner: %(levelname)s: %(message)s",
        stream=sys.stderr,
    )
    for handler in logging.getLogger().handlers:
        handler.addFilter(RedactingFilter())
    register_environment_secrets(os.environ)
    try:
        return int(args.handler(args))
    except PlannerError as exc:
        print(f"planner: error: {redact(str(exc))}", file=sys.stderr)
        return exc.exit_code


def build_parser() -> argparse.ArgumentParser:
    """Every command and option (docs/cli.md is generated from it: scripts/gen_docs.py)."""
    parser = argparse.ArgumentParser(prog="planner", description=__doc__)
    parser.add_argument("--version", action="version", version=f"planner {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    run = commands.add_parser("run", help="run one planning pass on a local git working tree")
    _common(run)
    source = run.add_mutually_exclusive_group(required=True)
    source.add_argument("--issue-file", type=Path, help="JSON, YAML or Markdown issue")
    source.add_argument(
        "--issue",
        type=int,
        help="issue N of the local forge (REPO/.planner/issues/N.md): branch, commit, "
        "tracking comment and pull request kept as files",
    )
    run.add_argument("--issue-id", help="issue number (default: from the file)")
    run.add_argument(
        "--instruction", default="", help="instruction for this run, as after /planner"
    )
    run.add_argument("--json", action="store_true", help="print the pass result as JSON")
    for flag, key in FLAG_KEYS.items():
        run.add_argument(f"--{flag.replace('_', '-')}", dest=flag, help=f"sets {key}")
    run.set_defaults(handler=_run)
    history = commands.add_parser("history", help="print an issue's planning history")
    _common(history)
    history.add_argument("--issue", required=True, help="issue number")
    history.add_argument(
        "--history-dir", dest="history_dir", help="sets planning.history.directory"
    )
    history.add_argument("--json", action="store_true", help="print raw JSONL entries")
    history.set_defaults(handler=_history)
    add_plan_command(commands, _common, FLAG_KEYS, _plan)
    demo = commands.add_parser("demo", help="run a demo pass on a temporary repository")
    demo.add_argument("--keep", action="store_true", help="keep the temporary repository")
    demo.set_defaults(handler=_demo)
    plan_tool.add_parser(commands)
    add_eval_command(commands)
    action = commands.add_parser(
        "action",
        help="handle one CI event as the GitHub Action or GitLab component does (INPUT_* "
        "variables): run planner on the runner itself, after the workflow's setup steps",
    )
    action.set_defaults(handler=_action)
    add_lease_command(commands)
    return parser


def _action(args: argparse.Namespace) -> int:
    """The container's entry point, from an installed planner (docs/verification.md)."""
    from planner.ci.action import main as action_main

    return action_main()


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo", type=Path, default=Path("."), help="repository working tree")
    parser.add_argument(
        "--config", type=Path, help=f"config file (default: REPO/{DEFAULT_CONFIG_PATH})"
    )
    parser.add_argument("--repository", help="owner/name (default: from the origin remote)")


def _config(args: argparse.Namespace) -> PlannerConfig:
    overrides = {
        key: getattr(args, flag)
        for flag, key in FLAG_KEYS.items()
        if getattr(args, flag, None) not in (None, "")
    }
    path = args.config or args.repo / DEFAULT_CONFIG_PATH
    return load_config(
        path,
        env=os.environ,
        overrides=overrides,
        required_file=args.config is not None,
        served_model=served_model,
    )


def _run(args: argparse.Namespace) -> int:
    config = _config(args)
    require_api_key(config.llm)  # before any branch, comment or history is written
    if not args.repo.is_dir():
        raise UserInputError(f"--repo {args.repo} is not a directory")
    if args.issue is not None:
        return _run_local_forge(args, config)
    repository = args.repository or repository_name(args.repo)
    issue = load_issue_file(args.issue_file, repository, args.issue_id)
    if args.instruction:
        issue = issue.model_copy(update={"instruction": args.instruction})
    setup = PassSetup(config=config, workspace=args.repo, config_path=args.config)
    result = run_pass(setup, issue)
    print(result.model_dump_json(indent=2) if args.json else describe(result))
    return 1 if result.status == "failed" else 0


def _run_local_forge(args: argparse.Namespace, config: PlannerConfig) -> int:
    from planner.ci.job import run_for_event

    event = {"issue": args.issue, "instruction": args.instruction, "actor": "local"}
    outcome = run_for_event(
        "local", workspace=args.repo, config=config, env=os.environ, event=event
    )
    if args.json:
        print(outcome.model_dump_json(indent=2))
    else:
        print(f"Status: {outcome.status} ({outcome.reason})")
        for label, value in (
            ("Branch", outcome.branch),
            ("Pull request", outcome.pr_url),
            ("Tracking comment", outcome.comment_url),
            ("History", outcome.history_path),
        ):
            if value:
                print(f"{label}: {value}")
        print(f"Model calls: {outcome.model_calls}, tokens: {outcome.tokens_used}")
    return outcome.exit_code


def _history(args: argparse.Namespace) -> int:
    overrides = {"planning.history.directory": args.history_dir} if args.history_dir else {}
    path = args.config or args.repo / DEFAULT_CONFIG_PATH
    config = load_config(
        path, env=os.environ, overrides=overrides, required_file=args.config is not None
    )
    repository = args.repository or repository_name(args.repo)
    directory = history_directory(config, args.repo)
    store = PlanningHistoryStore(directory, repository, args.issue)
    entries = store.entries()
    if not entries:
        print(f"no history for {repository}#{args.issue} in {directory}")
        return 0
    for entry in entries:
        print(json.dumps(entry, ensure_ascii=False) if args.json else format_entry(entry))
    for warning in store.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def format_entry(entry: dict[str, Any]) -> str:
    stamp = str(entry.get("timestamp", ""))[:19].replace("T", " ")
    kind = str(entry.get("type"))
    details = {
        k: v
        for k, v in entry.items()
        if k not in ("type", "timestamp", "repository", "issue_id", "run_id")
    }
    text = json.dumps(details, ensure_ascii=False)
    return f"{stamp}  {kind:<18} {text if len(text) <= 300 else text[:300] + '…'}"


def _demo(args: argparse.Namespace) -> int:
    from planner.cli.demo import run_demo

    return run_demo(keep=args.keep)


def _plan(args: argparse.Namespace) -> int:
    return run_plan(args, _config(args))
