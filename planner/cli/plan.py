"""`planner plan`: an interactive planning session in the terminal (ADR-021 §4).

    planner plan "Add login" --repo PATH      a new session
    planner plan --resume planning-<uuid>     continue one
    planner plan --resume                     list recent sessions and pick one
    planner plan --status planning-<uuid>     where a session stands, its pass, the plan now
                                              (ADR-021 `status --session`); without ID, recent ones

Sessions live under the repository's history directory, like those of issues. Once approved,
"execute now? [y/N]" runs one pass on the enhanced instruction (the issue of that pass is the
session), or prints the command that would.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any, TextIO

from planner.config import PlannerConfig
from planner.core.errors import UserInputError
from planner.interactive.model import DecisionPoint, PlanningSession, new_session
from planner.interactive.operations import PlanningOperations
from planner.interactive.storage import ENTRY_TYPE as SESSION_ENTRY
from planner.interactive.storage import SessionStore
from planner.interactive.terminal import Console, EndOfInput, TerminalSession
from planner.memory.history import PlanningHistoryStore, read_entries
from planner.model.llm import require_api_key
from planner.outcome.result import PASS_STATUSES, render_checklist
from planner.run.history_view import history_plan
from planner.run.runner import (
    PassSetup,
    exclude_from_git,
    history_directory,
    new_run_id,
    repository_name,
    run_pass,
)
from planner.text.issue import IssueContext

RECENT = 10


def add_plan_command(commands: Any, common: Any, flags: dict[str, str], handler: Any) -> None:
    plan = commands.add_parser("plan", help="plan interactively: questions, design, review")
    common(plan)
    plan.add_argument("instruction", nargs="?", default="", help="what to build")
    plan.add_argument(
        "--resume",
        nargs="?",
        const="",
        default=None,
        metavar="ID",
        help="continue session ID; without ID, list recent sessions to pick from",
    )
    plan.add_argument(
        "--execute", action="store_true", help="once approved, run the pass without asking"
    )
    plan.add_argument(
        "--status",
        nargs="?",
        const="",
        default=None,
        metavar="ID",
        help="show where session ID stands, the pass it was handed to, and the latest state and "
        "plan of its issue; without ID, list",
    )
    for flag in ("model", "base_url", "history_dir"):
        plan.add_argument(f"--{flag.replace('_', '-')}", dest=flag, help=f"sets {flags[flag]}")
    plan.set_defaults(handler=handler)


def run_plan(
    args: argparse.Namespace,
    config: PlannerConfig,
    *,
    model: Any = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
) -> int:
    if not args.repo.is_dir():
        raise UserInputError(f"--repo {args.repo} is not a directory")
    console = Console(stdin or sys.stdin, stdout or sys.stdout)
    directory = history_directory(config, args.repo)
    store = SessionStore(directory)
    if getattr(args, "status", None) is not None:
        return show_status(args, store, console)
    if model is None:
        require_api_key(config.llm)  # before a session file is written
    exclude_from_git(args.repo, directory)
    session = _session(args, store, console)
    if session is None:
        return 0
    repository = args.repository or repository_name(args.repo)
    if model is None:
        from planner.model.llm import OpenAIModel

        model = OpenAIModel(config.llm)
    terminal = TerminalSession(
        operations=PlanningOperations(model, store, repository),
        store=store,
        console=console,
        execute=lambda instruction: _execute(args, config, model, session, instruction, console),
        later_command=_later(args, session),
    )
    return terminal.run(session, execute_now=True if args.execute else None)


def _session(
    args: argparse.Namespace, store: SessionStore, console: Console
) -> PlanningSession | None:
    if args.resume:
        return store.load(args.resume)
    if args.resume == "":
        return _pick(store, console)
    if not args.instruction.strip():
        raise UserInputError('give an instruction (planner plan "what to build") or --resume')
    session = new_session(args.instruction.strip())
    store.save(session)
    return session


def show_status(args: argparse.Namespace, store: SessionStore, console: Console) -> int:
    """`--status [ID]`: the session's state and the pass it was handed to (nothing written)."""
    if not args.status:
        return 0 if _list_recent(store, console) else 1
    session = store.load(args.status)
    for line in status_lines(session):
        console.say(line)
    if session.planner_session_id:
        for line in _pass_lines(args, store, session):
            console.say(line)
    return 0


def status_lines(session: PlanningSession) -> list[str]:
    answered = sum(1 for q in session.questions if q.answer is not None)
    skipped = sum(1 for q in session.questions if not q.open and q.answer is None)
    decided = [d for d in session.decisions if d.selected_option_id]
    return [
        f"Session {session.session_id}: {session.status.value}",
        f"Request: {' '.join(session.instruction.split())[:200]}",
        f"Questions: {len(session.questions)} ({answered} answered, {skipped} skipped)",
        *[f"Decision {d.id} {d.topic}: {_chosen(d)}" for d in decided],
        f"Rejections: {session.reject_count}/3",
        *([f"Error: {session.error_message}"] if session.error_message else []),
        f"Created {session.created_at}, updated {session.updated_at}",
    ]


def _chosen(decision: DecisionPoint) -> str:
    option = decision.option(decision.selected_option_id)
    return f"{option.id} {option.name}" if option else str(decision.selected_option_id)


def _pass_lines(
    args: argparse.Namespace, store: SessionStore, session: PlanningSession
) -> list[str]:
    """The pass the session was handed to, as its history ended it (the session's own history
    for a terminal session, else the history of the issue the session belongs to); then, when
    later runs went on (an approval answered, a resume), the issue's latest state and plan."""
    pass_id = str(session.planner_session_id)
    repository = args.repository or repository_name(args.repo)
    own = PlanningHistoryStore(store.directory, repository, session.session_id)
    history = own if _pass_entries(own.filepath, pass_id) else _issue_history(store, session)
    entries = list(read_entries(history.filepath)) if history is not None else []
    ran = [e for e in entries if e.get("run_id") == pass_id]
    if history is None or not ran:
        return [f"Pass {pass_id}: not in the history under {store.directory}"]
    since = entries[entries.index(ran[0]) :]  # the pass, and every run after it
    ends = [e for e in since if e.get("type") == "run_end"]
    own_ends = [e for e in ends if e.get("run_id") == pass_id]
    lines = [
        f"Pass {pass_id}: {_ended(own_ends[-1])}"
        if own_ends
        else f"Pass {pass_id}: started, no end recorded"
    ]
    if ends and ends[-1].get("run_id") != pass_id:
        lines.append(f"Now (run {ends[-1].get('run_id')}): {_ended(ends[-1])}")
    latest = str(ends[-1].get("status")) if ends else ""
    shown = history_plan(history, PASS_STATUSES.get(latest, "in_progress"))
    return lines + ([render_checklist(shown).rstrip()] if shown is not None else [])


def _ended(entry: dict[str, Any]) -> str:
    return f"{entry.get('status')} ({entry.get('stop_reason')})"


def _pass_entries(path: Path, pass_id: str) -> list[dict[str, Any]]:
    return [e for e in read_entries(path) if e.get("run_id") == pass_id]


def _issue_history(store: SessionStore, session: PlanningSession) -> PlanningHistoryStore | None:
    """An issue's session is recorded in that issue's history, and so is the pass it ran."""
    for path in sorted(store.directory.glob("*.jsonl")):
        entries = list(read_entries(path))
        held = next((e for e in entries if _records(e, session.session_id)), None)
        if held is not None:
            repository, issue = str(held.get("repository", "")), str(held.get("issue_id", ""))
            history = PlanningHistoryStore(store.directory, repository, issue)
            return history if history.filepath == path else None
    return None


def _records(entry: dict[str, Any], session_id: str) -> bool:
    held = entry.get("session")
    return (
        entry.get("type") == SESSION_ENTRY
        and isinstance(held, dict)
        and held.get("session_id") == session_id
    )


def _list_recent(store: SessionStore, console: Console) -> list[PlanningSession]:
    recent = store.recent(RECENT)
    if not recent:
        console.say(f"No planning sessions in {store.directory}.")
    for number, session in enumerate(recent, start=1):
        instruction = " ".join(session.instruction.split())[:60]
        console.say(
            f"{number}) {session.session_id}  {session.status.value:<9}  "
            f"{session.updated_at}  {instruction}"
        )
    return recent


def _pick(store: SessionStore, console: Console) -> PlanningSession | None:
    recent = _list_recent(store, console)
    if not recent:
        return None
    try:
        typed = console.ask("pick a session (number or id): ")
    except EndOfInput:
        return None
    if typed.isdigit() and 1 <= int(typed) <= len(recent):
        return recent[int(typed) - 1]
    chosen = next((s for s in recent if s.session_id == typed), None)
    if chosen is None and typed:
        return store.load(typed)
    return chosen


def _execute(
    args: argparse.Namespace,
    config: PlannerConfig,
    model: Any,
    session: PlanningSession,
    instruction: str,
    console: Console,
) -> str:
    """One pass on the enhanced instruction; the pass id it ran under."""
    run_id = new_run_id()
    issue = IssueContext(
        repository=args.repository or repository_name(args.repo),
        number=session.session_id,
        title=session.instruction.splitlines()[0][:200],
        body=session.instruction,
        instruction=instruction,
    )
    setup = PassSetup(config=config, workspace=args.repo, run_id=run_id, model=model)
    result = run_pass(setup, issue)
    from planner.cli.describe import describe

    console.say(describe(result))
    return run_id


def _later(args: argparse.Namespace, session: PlanningSession) -> str:
    repo = shlex.quote(str(Path(args.repo)))
    return f"planner plan --resume {session.session_id} --execute --repo {repo}"
