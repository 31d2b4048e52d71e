"""Retention of the local planning history (planning-process.md §11.1, "completed tasks'
history is deleted after 90 days, configurable"), covering everything planner writes there.

At the start of a pass, every other issue's history file whose work was completed (its last
run ended in a completion that says done) and which has no entry newer than
`planning.history.retention_days` is deleted, and with it what belongs to that issue: its
payloads (`payloads/<file>/`), its approval plans (`plans/<id>/`, out of `plans/index.json`),
the planning sessions it recorded (`planning-sessions/<id>.json`, `logs/<id>/`) and its
`plans/cleared-<issue>` mark. What no history file owns goes by age alone: plans that ended
(completed or aborted), planning sessions that ended (approved, cancelled, failed) and their
logs, payload folders without a history file that no plan still open refers to, and
`plans/events.ndjson` lines older than the retention. Unfinished work, a file that cannot be
read, a session that waits for people, what a plan still open refers to, and the issue of the
pass itself are never touched.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from planner.memory.questions import ends_piece_of_work
from planner.storage.payloads import DIGEST, PAYLOADS_DIR

log = logging.getLogger(__name__)

TAIL_BYTES = 1_000_000
"""How much of a file's end is read: the entries that decide are the last ones."""
PLANS_DIR = "plans"
SESSIONS_DIR = "planning-sessions"
LOGS_DIR = "logs"
ENDED_PLANS = frozenset({"completed", "aborted"})
ENDED_SESSIONS = frozenset({"approved", "cancelled", "failed"})


@dataclass
class Owned:
    """What an issue's history file names as its own."""

    issue_ids: set[str] = field(default_factory=set)
    sessions: set[str] = field(default_factory=set)
    plans: set[str] = field(default_factory=set)

    def add(self, other: Owned) -> None:
        self.issue_ids |= other.issue_ids
        self.sessions |= other.sessions
        self.plans |= other.plans


def prune_history(directory: Path, days: float, now: datetime, keep: Path) -> list[str]:
    """Delete the history of work completed more than `days` ago, and what it owned, and what
    nothing owns that ended before then; the names removed, relative to `directory`."""
    if days <= 0 or not directory.is_dir():
        return []
    cutoff = now - timedelta(days=days)
    removed: list[str] = []
    gone, living = Owned(), Owned()
    for path in sorted(directory.glob("*.jsonl")):
        if path.resolve() != keep.resolve() and _completed_before(path, cutoff):
            gone.add(_owned(path))
            path.unlink(missing_ok=True)
            removed.append(path.name)
            removed += _remove(directory, directory / PAYLOADS_DIR / path.stem)
        else:
            living.add(_owned(path))
    removed += _prune_plans(directory, gone, living, cutoff)
    removed += _prune_sessions(directory, gone, living, cutoff)
    removed += _prune_orphan_payloads(directory, cutoff)
    _prune_events(directory / PLANS_DIR / "events.ndjson", cutoff)
    if removed:
        log.info("history of work completed over %g days ago deleted: %s", days, removed)
    return removed


# -- what a history file owns --------------------------------------------------------------------


def _owned(path: Path) -> Owned:
    """Issue ids (an issue's number, or a terminal session's id), planning sessions and
    approval plans named by the file's entries."""
    owned = Owned(issue_ids=_issue_ids(_last_entries(path)))
    for entry in _entries(path, (b'"planning_session"', b'"plan_id"', b'"approval_plan"')):
        if entry.get("type") == "planning_session":
            session = entry.get("session")
            if isinstance(session, dict) and isinstance(session.get("session_id"), str):
                owned.sessions.add(session["session_id"])
        plan_id = _plan_id(entry)
        if plan_id:
            owned.plans.add(plan_id)
    return owned


def _plan_id(entry: dict[str, Any]) -> str:
    record = entry.get("record")
    plan = record.get("plan") if isinstance(record, dict) else None
    found = plan.get("id") if isinstance(plan, dict) else entry.get("plan_id")
    return found if isinstance(found, str) else ""


def _issue_ids(entries: list[dict[str, Any]]) -> set[str]:
    return {str(e["issue_id"]) for e in entries if isinstance(e.get("issue_id"), (str, int))}


def _entries(path: Path, marks: tuple[bytes, ...]) -> Iterator[dict[str, Any]]:
    """The entries on lines holding one of `marks` (no other line is parsed)."""
    try:
        with path.open("rb") as handle:
            for raw in handle:
                entry = _entry(raw) if any(mark in raw for mark in marks) else None
                if entry is not None:
                    yield entry
    except OSError:
        return


# -- plans, sessions, payloads, events -----------------------------------------------------------


def _prune_plans(directory: Path, gone: Owned, living: Owned, cutoff: datetime) -> list[str]:
    root = directory / PLANS_DIR
    removed: list[str] = []
    for plan_dir in sorted(p for p in root.glob("plan-*") if p.is_dir() and not p.is_symlink()):
        record = _json(plan_dir / "plan.json")
        plan = record.get("plan") if isinstance(record, dict) else None
        state = record.get("state") if isinstance(record, dict) else None
        issue = str(plan.get("issue", "")) if isinstance(plan, dict) else ""
        status = state.get("status") if isinstance(state, dict) else None
        ended = status in ENDED_PLANS
        owned = plan_dir.name in gone.plans or (ended and issue in gone.issue_ids)
        orphan = ended and plan_dir.name not in living.plans and _older(plan_dir, cutoff)
        if owned or orphan:
            removed += _remove(directory, plan_dir)
    for issue in gone.issue_ids:
        removed += _remove(directory, root / f"cleared-{issue}")
    if removed:
        _drop_from_index(root / "index.json", {Path(name).name for name in removed})
    return removed


def _drop_from_index(index: Path, plan_ids: set[str]) -> None:
    listed = _json(index)
    if not isinstance(listed, list):
        return
    kept = [ref for ref in listed if not (isinstance(ref, dict) and ref.get("id") in plan_ids)]
    if len(kept) != len(listed):
        _replace(index, json.dumps(kept, indent=2))


def _prune_sessions(directory: Path, gone: Owned, living: Owned, cutoff: datetime) -> list[str]:
    """Sessions the pruned histories recorded or ran a pass for; ended ones nobody touched
    since the cutoff that no history that stays names; logs whose session is gone."""
    removed: list[str] = []
    owned = gone.sessions | gone.issue_ids
    named = living.sessions | living.issue_ids
    for path in sorted((directory / SESSIONS_DIR).glob("planning-*.json")):
        session = _json(path)
        status = session.get("status") if isinstance(session, dict) else None
        stamp = _timestamp(session) if isinstance(session, dict) else None
        old = status in ENDED_SESSIONS and stamp is not None and stamp < cutoff
        if path.stem in owned or (old and path.stem not in named):
            removed += _remove(directory, path)
    for logs in sorted((directory / LOGS_DIR).glob("planning-*")):
        orphan = not (directory / SESSIONS_DIR / f"{logs.name}.json").exists()
        if logs.name in owned or (orphan and _older(logs, cutoff)):
            removed += _remove(directory, logs)
    return removed


def _prune_orphan_payloads(directory: Path, cutoff: datetime) -> list[str]:
    """Payload folders without a history file (the terminal's `local`, a history deleted by
    hand) that nothing changed since the cutoff, unless a plan that has not ended refers to one
    of their payloads: a pending plan must never lose the text it would write."""
    removed: list[str] = []
    needed = _payloads_of_live_plans(directory)
    for folder in sorted((directory / PAYLOADS_DIR).glob("*")):
        if (directory / f"{folder.name}.jsonl").exists() or not _older(folder, cutoff):
            continue
        if not any(path.stem in needed for path in folder.glob("*.jsonl")):
            removed += _remove(directory, folder)
    return removed


def _payloads_of_live_plans(directory: Path) -> set[str]:
    """The hashes of the payloads each plan that has not ended (or cannot be read) refers to."""
    needed: set[str] = set()
    for plan_json in (directory / PLANS_DIR).glob("plan-*/plan.json"):
        record = _json(plan_json)
        state = record.get("state") if isinstance(record, dict) else None
        status = state.get("status") if isinstance(state, dict) else None
        if status not in ENDED_PLANS:
            needed |= _hashes(record)
    return needed


def _hashes(value: Any) -> set[str]:
    """Every SHA-256 a saved plan holds (content_sha256, argument_sha256's values, ...)."""
    if isinstance(value, str):
        return {value} if DIGEST.fullmatch(value) else set()
    if isinstance(value, dict):
        return {found for item in value.values() for found in _hashes(item)}
    if isinstance(value, list):
        return {found for item in value for found in _hashes(item)}
    return set()


def _prune_events(path: Path, cutoff: datetime) -> None:
    """Telemetry lines older than the retention go; unreadable lines stay."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    except (OSError, UnicodeDecodeError):
        return
    kept = [line for line in lines if not _before(_entry(line.encode()), cutoff)]
    if len(kept) != len(lines):
        _replace(path, "".join(kept))


def _before(entry: dict[str, Any] | None, cutoff: datetime) -> bool:
    stamp = _timestamp(entry) if entry is not None else None
    return stamp is not None and stamp < cutoff


# -- completed issues ----------------------------------------------------------------------------


def _completed_before(path: Path, cutoff: datetime) -> bool:
    entries = _last_entries(path)
    marks = [e for e in entries if e.get("type") in ("run_start", "completion")]
    if not entries or not marks or not ends_piece_of_work(marks[-1]):
        return False
    stamp = _timestamp(entries[-1])
    return stamp is not None and stamp < cutoff


def _last_entries(path: Path) -> list[dict[str, Any]]:
    try:
        with path.open("rb") as handle:
            handle.seek(max(path.stat().st_size - TAIL_BYTES, 0))
            lines = handle.read().splitlines()
    except OSError:
        return []
    return [entry for entry in map(_entry, lines) if entry is not None]


def _entry(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):  # a cut-off first line of the tail, or a damaged one
        return None
    return value if isinstance(value, dict) else None


def _timestamp(entry: dict[str, Any]) -> datetime | None:
    raw = entry.get("timestamp") or entry.get("updated_at") or ""
    try:
        stamp = datetime.fromisoformat(str(raw).replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


# -- files ---------------------------------------------------------------------------------------


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None


def _older(path: Path, cutoff: datetime) -> bool:
    """Nothing in `path` (a file, or a folder and what it holds) changed since the cutoff."""
    try:
        times = [path.lstat().st_mtime]
        if path.is_dir() and not path.is_symlink():
            times += [p.lstat().st_mtime for p in path.rglob("*")]
    except OSError:
        return False
    return datetime.fromtimestamp(max(times), UTC) < cutoff


def _remove(directory: Path, path: Path) -> list[str]:
    """Delete a file or a folder (a link is removed, never followed); its name, if it was."""
    if not path.exists() and not path.is_symlink():
        return []
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    except OSError as exc:
        log.warning("could not delete %s: %s", path, exc)
        return []
    return [path.relative_to(directory).as_posix()]


def _replace(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.retention")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except OSError as exc:
        log.warning("could not rewrite %s: %s", path, exc)
        temporary.unlink(missing_ok=True)
