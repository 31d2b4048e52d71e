"""`planner plan-tool list|show ID|approve ID [--select a1,a3]|execute ID` on a local tree.

The same PlanTool the pass uses, on the history directory of REPO: a person reviews and
approves specs at the terminal, then executes them (or lets the next `planner run` do it).
What `execute` wrote is committed to the issue's branch when the working tree is on it, as the
pass would have done, and the next `planner run` reports the outcome to the pass.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from planner.approval.models import PlanRecord, SpecSelection
from planner.approval.render import plan_table, spec_table
from planner.approval.setup import build_plan_tool
from planner.approval.tool import PlanTool, PlanToolError
from planner.ci.branch.gitops import GitError, GitWorkspace, Identity
from planner.config import DEFAULT_CONFIG_PATH, PlannerConfig, load_config
from planner.core.errors import UserInputError
from planner.run.runner import history_directory
from planner.tools.build import build_registry


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = commands.add_parser("plan-tool", help="review, approve and execute action specs")
    parser.add_argument("--repo", type=Path, default=Path("."), help="repository working tree")
    parser.add_argument(
        "--config", type=Path, help=f"config file (default: REPO/{DEFAULT_CONFIG_PATH})"
    )
    parser.add_argument("--issue", default="", help="only this issue's plans")
    parser.add_argument("--approver", default=os.environ.get("USER", "local"), help="who approves")
    parser.add_argument("operation", choices=["list", "show", "approve", "execute"])
    parser.add_argument("plan_id", nargs="?", help="the plan (show, approve, execute)")
    parser.add_argument("--select", default="", help="approve only these spec ids: a1,a3")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.operation != "list" and not args.plan_id:
        raise UserInputError(f"plan-tool {args.operation} needs a plan id (see plan-tool list)")
    config_path = args.config or args.repo / DEFAULT_CONFIG_PATH
    config = load_config(config_path, env=os.environ, required_file=args.config is not None)
    directory = history_directory(config, args.repo)
    registry = build_registry(config.tools, args.repo, (directory,), write_protected=(config_path,))
    try:
        tool = build_plan_tool(
            config, args.repo, directory, args.issue, registry.call, (config_path,)
        )
        code = _operate(tool, args)
        if args.operation == "execute":
            print(commit_executed(config, args.repo, tool.get_plan(args.plan_id)))
        return code
    except PlanToolError as exc:
        raise UserInputError(str(exc)) from None
    finally:
        registry.close()


def _operate(tool: PlanTool, args: argparse.Namespace) -> int:
    if args.operation == "list":
        records = tool.records()
        print(plan_table(records) if records else "no plans")
        return 0
    if args.operation == "approve":
        ids = [i.strip() for i in args.select.split(",") if i.strip()]
        selection = SpecSelection(all=not ids, ids=ids)
        tool.approve(args.plan_id, args.approver, selection)
    if args.operation == "execute":
        result = tool.execute(args.plan_id)
        for outcome in result.results:
            print(f"{outcome.spec_id}: {'ok' if outcome.ok else 'FAILED'} {outcome.detail[:200]}")
    record = tool.get_plan(args.plan_id)
    print(f"{record.plan.id}  {record.state.status}  {record.plan.title}")
    print(spec_table(record))
    for spec in record.state.action_specs:
        for note in spec.notes:
            print(f"  {spec.id}: {note}")
    return 0 if args.operation != "execute" or record.state.status == "completed" else 1


def commit_executed(config: PlannerConfig, repo: Path, record: PlanRecord) -> str:
    """Commit the files the plan's specs wrote onto the issue's branch, so the next run starts
    from a clean tree with the change on the branch; a line saying what happened."""
    written = [s for s in record.state.action_specs if s.path and s.outcome == "succeeded"]
    if not written:
        return "nothing to commit"
    paths = sorted({spec.path for spec in written})
    branch = f"{config.forge.branch_prefix}{record.plan.issue}"
    git = GitWorkspace(repo, None)
    try:
        current = git._git("rev-parse", "--abbrev-ref", "HEAD").stdout.strip()
        if current != branch:
            return f"not committed: the working tree is on {current!r}, not {branch!r}"
        git._git("add", "-A", "--", *paths)
        message = f"planner: {record.plan.title} ({', '.join(s.id for s in written)})\n"
        git._git(
            "commit",
            "--no-verify",
            "-q",
            "-F",
            "-",
            "--",
            *paths,
            stdin=message,
            identity=_identity(config),
        )
    except GitError as exc:
        return f"not committed: {exc}"
    return f"committed {', '.join(paths)} to {branch}"


def _identity(config: PlannerConfig) -> Identity:
    """The identity of a local run's commits (planner.ci.issue_run)."""
    forge = config.forge
    return Identity(forge.commit_name or "planner", forge.commit_email or "planner@localhost")
