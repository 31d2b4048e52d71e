"""Assembles one pass from its parts; shared by the CLI, the demo and the CI entry points."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from planner.approval.gate import ApprovalGate
from planner.approval.setup import install_gate
from planner.approval.waiting import ApprovalWitness, AwaitingApproval
from planner.config import DEFAULT_CONFIG_PATH, McpServerConfig, PlannerConfig
from planner.core.interfaces import ProgressReporter, ToolProvider
from planner.engine.coordinator import PlanningCoordinator
from planner.engine.phase import Phase
from planner.grounding.files import git_output
from planner.grounding.task_files import TaskFiles
from planner.memory.history import PlanningHistoryStore, expel_foreign, summarize_skipped
from planner.model.llm import OpenAIModel
from planner.outcome.deadline import guarded, pass_deadline
from planner.outcome.result import PassResult
from planner.run.phases import pass_phases
from planner.run.workdiff import workspace_diff
from planner.storage.retention import prune_history
from planner.text.issue import IssueContext
from planner.tools.build import build_registry
from planner.tools.registry import ToolRegistry
from planner.verification.suite.detect import runs_programs

log = logging.getLogger(__name__)


@dataclass
class PassSetup:
    """Everything a pass needs that is not the issue itself."""

    config: PlannerConfig
    workspace: Path
    run_id: str = ""
    reporter: ProgressReporter | None = None
    extra_tools: tuple[ToolProvider, ...] = ()
    model: Any = None
    config_path: Path | None = None
    """The config file this pass was configured from; the model may read but never write it."""
    protected: tuple[Path, ...] = ()
    """Paths the workspace tools refuse to touch besides the history (e.g. `.planner/`)."""
    clock: Callable[[], datetime] | None = None
    """Current time (aware); tests inject one so clarification timeouts need no sleeping."""
    mcp_file_servers: dict[str, McpServerConfig] | None = None
    """The servers of tools.mcp_config_file as read before the issue branch was checked out
    (planner.ci.handlers.issue_pass); None reads the file when the pass starts."""
    phases: tuple[Phase, ...] = ()
    """Phases the caller adds after the registered ones (planner.run.phases), e.g. a CI job's
    checkpoint commit after each task."""
    base_commit: str | None = None
    """The commit the issue branch started from; the final quality judgement reads the diff
    against it. None: the commit checked out when the pass starts."""
    witness: ApprovalWitness | None = None
    """Confirms every approval where people give them before what it approves runs (the CI
    layer's planner.ci.gate.witness); None at the terminal."""
    set_up: tuple[Callable[[PlanningHistoryStore], object], ...] = ()
    """Steps the caller runs once the pass is set up (its history open and kept out of git)
    and before any tool starts or the approval gate watches the tree, e.g. a CI job applying
    review suggestions: what they commit goes through the same commit rules as the pass's own
    work, and never holds the history."""


def config_files(setup: PassSetup) -> tuple[Path, ...]:
    """Files that decide what a pass may do: writing them would widen the next pass's rights."""
    default = setup.workspace / DEFAULT_CONFIG_PATH
    return (default,) if setup.config_path in (None, default) else (default, setup.config_path)


def history_directory(config: PlannerConfig, workspace: Path) -> Path:
    directory = Path(config.planning.history.directory)
    return directory if directory.is_absolute() else workspace / directory


def open_store(setup: PassSetup, issue: IssueContext) -> PlanningHistoryStore:
    directory = history_directory(setup.config, setup.workspace)
    exclude_from_git(setup.workspace, directory)
    return PlanningHistoryStore(
        directory, issue.repository, issue.number, setup.run_id or new_run_id()
    )


def run_pass(setup: PassSetup, issue: IssueContext) -> PassResult:
    """Run one planning pass on `issue` in `setup.workspace`, within its budget: setup, tests
    and model requests all end at the pass's deadline (planner.outcome.deadline)."""
    with pass_deadline(setup.config.budget):
        return _run_pass(setup, issue)


def _run_pass(setup: PassSetup, issue: IssueContext) -> PassResult:
    model = guarded(setup.model or OpenAIModel(setup.config.llm))
    store = open_store(setup, issue)
    store.entries()  # read once up front: damaged lines are reported before anything runs
    prune_completed(setup, store)
    store.seal()  # before any tool starts: from now on only planner's own lines are read
    for step in setup.set_up:
        step(store)
    registry = build_registry(
        setup.config.tools,
        setup.workspace,
        (store.directory, *setup.protected),
        write_protected=config_files(setup),
        extra=setup.extra_tools,
        file_servers=setup.mcp_file_servers,
        runs_programs=runs_programs(setup.workspace, setup.config.verification),
        issue_text=f"{issue.title}\n{issue.body}",
        test_paths=setup.config.verification.test_paths,
    )
    gate: ApprovalGate | None = None
    try:
        try:
            gate = install_gate(
                setup.config,
                setup.workspace,
                store,
                registry,
                config_files(setup),
                setup.protected,
                setup.witness,
                issue_text=f"{issue.title}\n{issue.body}",
            )
            result = coordinate(setup, issue, model, store, registry, gate)
        finally:
            registry.close()  # no MCP server is left to write when the tree is looked at last
        result = settled(gate, result)
    finally:
        if gate is not None:
            gate.close()
    # Damaged history lines, failed tool servers and changes undone without asking anyone are
    # worth a person's attention even when the pass went on (the store already logged each
    # damaged line once).
    rolled_back = gate.rolled_back if gate is not None else []
    refused = expel_foreign(store.directory)  # the tools are closed: nothing appends any more
    skipped = summarize_skipped(list(dict.fromkeys([*store.warnings, *refused])))
    notes = [*skipped, *registry.problems, *rolled_back]
    return result.model_copy(update={"messages": [*result.messages, *notes]})


def coordinate(
    setup: PassSetup,
    issue: IssueContext,
    model: Any,
    store: PlanningHistoryStore,
    registry: ToolRegistry,
    gate: ApprovalGate,
) -> PassResult:
    """The pass itself: its phases around the plan → execute → complete loop."""
    diff = workspace_diff(setup.workspace, setup.base_commit)
    excluded = (store.directory, *setup.protected)
    phases = [
        *pass_phases(
            setup.config,
            gate,
            diff,
            workspace=setup.workspace,
            excluded=excluded,
            sandbox=registry.sandbox_user,
        ),
        *setup.phases,
    ]
    files = TaskFiles(setup.config, setup.workspace, excluded)
    coordinator = PlanningCoordinator(
        setup.config, model, registry, issue, store, setup.reporter, setup.clock, phases, files
    )
    return coordinator.execute_with_planning()


def settled(gate: ApprovalGate, result: PassResult) -> PassResult:
    """The last look before the caller commits, once the tools are closed (no MCP server is
    left to write): a change no judged call made that needs a person is rolled back, and the
    pass waits for that person instead of committing it."""
    try:
        gate.settle()
    except AwaitingApproval as waiting:
        update = {"status": "needs_human", "stop_reason": waiting.reason}
        return result.model_copy(update={**update, "questions": waiting.questions})
    return result


def prune_completed(setup: PassSetup, store: PlanningHistoryStore) -> None:
    """Other issues' history of work completed long ago goes (planning.history.retention_days)."""
    now = setup.clock() if setup.clock else datetime.now(UTC)
    days = setup.config.planning.history.retention_days
    prune_history(store.directory, days, now, store.filepath)


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


def exclude_from_git(workspace: Path, directory: Path) -> None:
    """Keep planner's history out of commits without touching the repository's .gitignore."""
    try:
        relative = directory.resolve().relative_to(workspace.resolve())
    except ValueError:
        return
    exclude = _git_dir(workspace) / "info" / "exclude"
    if not exclude.parent.parent.is_dir():
        return
    pattern = f"/{relative.as_posix()}/"
    existing = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
    if pattern not in existing.splitlines():
        exclude.parent.mkdir(parents=True, exist_ok=True)
        with exclude.open("a", encoding="utf-8") as handle:
            handle.write(("" if existing.endswith("\n") or not existing else "\n") + pattern + "\n")


def _git_dir(workspace: Path) -> Path:
    out = _git_output(workspace, "rev-parse", "--git-dir")
    if out is None:
        return workspace / ".git"
    path = Path(out)
    return path if path.is_absolute() else workspace / path


def repository_name(workspace: Path) -> str:
    """owner/name from the origin remote, else the directory name."""
    url = _git_output(workspace, "remote", "get-url", "origin")
    if url is None:
        return workspace.resolve().name
    tail = url.rstrip("/").removesuffix(".git").replace(":", "/").split("/")
    return "/".join(tail[-2:]) if len(tail) >= 2 and tail[-2] else workspace.resolve().name


def _git_output(workspace: Path, *args: str) -> str | None:
    """A git command's stripped stdout, or None when git fails or is missing."""
    out = git_output(workspace, *args)
    return None if out is None else out.decode("utf-8", "surrogateescape").strip()
