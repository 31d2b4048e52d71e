"""Building the gate of one pass (or a PlanTool for the CLI) from config and the pass's tools."""

from __future__ import annotations

import functools
import os
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path

from planner.approval.effects import EffectGuard
from planner.approval.fileops import CallTool, SpecExecutor
from planner.approval.gate import ApprovalGate, person_needed
from planner.approval.store import Journal, PlanStore
from planner.approval.tool import PlanTool
from planner.approval.validation import SpecRules
from planner.approval.waiting import ApprovalWitness
from planner.config import PlannerConfig
from planner.memory.history import PlanningHistoryStore
from planner.tools.commands.effects import TreeWatcher
from planner.tools.commands.run_command import allowed_argv
from planner.tools.files.paths import PathPolicy, read_in_tree
from planner.tools.registry import ToolRegistry
from planner.tools.sandbox.safe_env import git_argv, git_environment


def command_checker(config: PlannerConfig) -> Callable[[str], bool]:
    """The tools' allow-list rule for a spec's command text."""
    prefixes = config.tools.command_prefixes

    def allowed(command: str) -> bool:
        try:
            return allowed_argv(shlex.split(command), prefixes)
        except ValueError:
            return False

    return allowed


def build_plan_tool(
    config: PlannerConfig,
    workspace: Path,
    history_dir: Path,
    issue: str,
    call_tool: CallTool,
    config_paths: tuple[Path, ...] = (),
    journal: Journal | None = None,
    protected: tuple[Path, ...] = (),
) -> PlanTool:
    planner_state = (history_dir, workspace / ".planner", *protected)
    policy = PathPolicy.create(
        workspace,
        protected=planner_state,
        write_protected=config_paths,
        allow_workflow_edits=config.tools.allow_workflow_edits,
    )
    rules = SpecRules(
        policy=policy,
        config=config.approval,
        command_allowed=command_checker(config),
        config_paths=config_paths,
        runs_commands=bool(config.tools.command_prefixes),
    )
    store = PlanStore(history_dir, journal)
    effects = EffectGuard(
        TreeWatcher(workspace, skip=planner_state),
        rules,
        lambda risk: person_needed(config.approval, risk),
    )
    return PlanTool(store, rules, SpecExecutor(policy, call_tool, effects), issue=issue)


def build_gate(tool: PlanTool, config: PlannerConfig, issue_ref: str) -> ApprovalGate:
    root = tool.rules.policy.root

    def read_file(path: str) -> bytes | None:
        """The file's bytes, opened one folder at a time without following links."""
        try:
            resolved = tool.rules.policy.resolve(path)
        except Exception:  # a refused path reads as missing; the spec's validation says why
            return None
        if not (root / path).exists():
            return None
        return read_in_tree(root, resolved.relative_to(root))

    gate = ApprovalGate(tool, config.approval, read_file, issue_ref)
    gate.test_paths = tuple(config.verification.test_paths)
    gate.base_text = functools.partial(committed_text, root)
    gate.staged = staged_contents(tool)
    return gate


def committed_text(root: Path, path: str) -> str | None:
    """`path` as the work tree's HEAD commit has it: the repository's version before this
    pass (None: not committed, not text, or no git). `cat-file blob` runs no textconv filter,
    and git_argv neutralises what a tool may have written into the repository's config."""
    if not path or path.startswith("-"):
        return None
    argv = git_argv("cat-file", "blob", f"HEAD:{path}", repository=root)
    try:
        done = subprocess.run(
            argv, cwd=root, env=git_environment(os.environ), capture_output=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    try:
        return done.stdout.decode("utf-8")
    except UnicodeDecodeError:
        return None


def staged_contents(tool: PlanTool) -> dict[str, str]:
    """What earlier passes staged and nobody has answered yet (plan mode): reads of those
    files see the staged content, as they did in the pass that staged it."""
    staged: dict[str, str] = {}
    for record in tool.records(("proposed", "pending_review")):
        if "staged" not in record.plan.tags:
            continue
        for spec in record.state.action_specs:
            if spec.kind in {"create", "write"} and spec.outcome == "pending":
                staged[spec.path] = spec.content or ""
    return staged


def install_gate(
    config: PlannerConfig,
    workspace: Path,
    store: PlanningHistoryStore,
    registry: ToolRegistry,
    config_paths: tuple[Path, ...],
    protected: tuple[Path, ...] = (),
    witness: ApprovalWitness | None = None,
    issue_text: str = "",
) -> ApprovalGate:
    """The gate in front of `registry`: from now on every tool call passes through it.
    `witness` confirms approvals before what they approve runs (None: at the terminal);
    `issue_text` (untrusted) tells which definitions a deletion may empty."""
    tool = build_plan_tool(
        config,
        workspace,
        store.directory,
        store.issue_id,
        registry.dispatch,
        config_paths,
        journal=store,
        protected=protected,
    )
    gate = build_gate(tool, config, f"{store.repository}#{store.issue_id}")
    gate.can_wait = config.planning.enabled
    gate.witness = witness
    gate.issue_text = issue_text
    registry.guard = gate.guard
    gate.accept()  # the checkout as the pass starts: later changes are judged from here
    return gate
