"""Where sessions live: the seed's layout under the history directory, written atomically.

    <history dir>/planning-sessions/planning-<uuid>.json
    <history dir>/logs/planning-<uuid>/{discovery,design,review}.log

The history directory travels between CI runs (cache, artifacts), so sessions do too. A save
is retried up to 3 times and then reported (SessionSaveError). `conversation_history` keeps the
newest 100 messages; older ones move to the phase logs and one summary message stands for them.
Sessions of an issue are also recorded in the issue's JSONL history (`planning_session` entries
whose conversation keeps what people wrote and the summaries they judged), which every history
backend carries file by file, so an issue finds its session (and the reasons of rejections) even
where only JSONL files were restored.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from planner.core.errors import PlannerError, UserInputError
from planner.interactive.model import (
    PHASES,
    ConversationMessage,
    Phase,
    PlanningSession,
    now_iso,
)
from planner.memory.history import PlanningHistoryStore
from planner.memory.recorded import recorded

log = logging.getLogger(__name__)

SESSIONS_DIR = "planning-sessions"
LOGS_DIR = "logs"
SESSION_ID = re.compile(r"planning-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
KEEP_MESSAGES = 100
SAVE_RETRIES = 3
ENTRY_TYPE = "planning_session"


class SessionSaveError(PlannerError):
    """The session could not be written after every retry."""


class SessionStore:
    """Sessions and their logs under one history directory."""

    def __init__(self, directory: Path, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.directory = directory
        self.sleep = sleep

    # -- paths

    def path(self, session_id: str) -> Path:
        return self.directory / SESSIONS_DIR / f"{checked_id(session_id)}.json"

    def log_path(self, session_id: str, phase: Phase) -> Path:
        return self.directory / LOGS_DIR / checked_id(session_id) / f"{phase}.log"

    # -- sessions

    def save(self, session: PlanningSession) -> Path:
        """Write the session atomically (temporary file + rename), retrying up to 3 times."""
        self._prepare(session)
        data = session.model_dump_json(indent=2).encode("utf-8")
        target = self.path(session.session_id)
        for attempt in range(SAVE_RETRIES + 1):
            try:
                write_atomically(target, data)
                return target
            except OSError as exc:
                problem = exc
                log.warning("saving %s failed (attempt %d): %s", target, attempt + 1, exc)
                if attempt < SAVE_RETRIES:
                    self.sleep(0.2 * (attempt + 1))
        raise SessionSaveError(
            f"could not save planning session {session.session_id} to {target} "
            f"after {SAVE_RETRIES} retries: {problem}"
        )

    def load(self, session_id: str) -> PlanningSession:
        path = self.path(session_id)
        if not path.is_file():
            raise UserInputError(f"no planning session {session_id} in {path.parent}")
        return parse_session(path.read_text(encoding="utf-8"), str(path))

    def exists(self, session_id: str) -> bool:
        return self.path(session_id).is_file()

    def recent(self, limit: int = 10) -> list[PlanningSession]:
        """Sessions newest first (by updated_at); unreadable files are skipped with a warning."""
        found = []
        for path in sorted((self.directory / SESSIONS_DIR).glob("planning-*.json")):
            try:
                found.append(parse_session(path.read_text(encoding="utf-8"), str(path)))
            except (OSError, UserInputError) as exc:
                log.warning("skipped %s: %s", path, exc)
        found.sort(key=lambda s: s.updated_at, reverse=True)
        return found[:limit]

    # -- logs

    def append_log(self, session: PlanningSession, phase: Phase, text: str) -> None:
        path = self.log_path(session.session_id, phase)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"--- {now_iso()}\n{text.rstrip()}\n")
        setattr(session, f"{phase}_log_path", self._relative(path))

    def _relative(self, path: Path) -> str:
        return path.relative_to(self.directory).as_posix()

    def _prepare(self, session: PlanningSession) -> None:
        for phase in PHASES:
            if getattr(session, f"{phase}_log_path") is None:
                relative = self._relative(self.log_path(session.session_id, phase))
                setattr(session, f"{phase}_log_path", relative)
        moved = trim_conversation(session)
        for phase, lines in moved.items():
            self.append_log(session, phase, "moved out of conversation_history:\n" + lines)


def checked_id(session_id: str) -> str:
    """A session id as planner makes them; anything else (a path, `..`) is refused."""
    if not SESSION_ID.fullmatch(session_id):
        raise UserInputError(f"{session_id!r} is not a planning session id (planning-<uuid>)")
    return session_id


def parse_session(text: str, where: str) -> PlanningSession:
    try:
        return PlanningSession.model_validate_json(text)
    except ValidationError as exc:
        raise UserInputError(
            f"{where} is not a valid planning session: {exc.errors()[:3]}"
        ) from None


def write_atomically(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def trim_conversation(session: PlanningSession) -> dict[Phase, str]:
    """Keep the newest KEEP_MESSAGES; the rest leave for the logs, summed up in one message.
    Returns the moved messages' text per phase."""
    history = session.conversation_history
    earlier = history[0] if history and history[0].phase == "summary" else None
    messages = history[1:] if earlier else history
    if len(messages) <= KEEP_MESSAGES:
        return {}
    old, kept = messages[:-KEEP_MESSAGES], messages[-KEEP_MESSAGES:]
    counts = Counter(m.phase for m in old) + _counted(earlier)
    summary = ", ".join(f"{phase}: {n}" for phase, n in sorted(counts.items()))
    note = ConversationMessage(
        role="system",
        phase="summary",
        content=f"{sum(counts.values())} earlier messages moved to the phase logs ({summary})",
        timestamp=old[-1].timestamp,
    )
    session.conversation_history = [note, *kept]
    moved: dict[Phase, list[str]] = {}
    for message in old:
        if message.phase != "summary":
            moved.setdefault(message.phase, []).append(f"[{message.role}] {message.content}")
    return {phase: "\n".join(lines) for phase, lines in moved.items()}


def _counted(summary: ConversationMessage | None) -> Counter[str]:
    """The per-phase counts an earlier summary message already stands for."""
    if summary is None:
        return Counter()
    found = re.findall(r"(\w+): (\d+)", summary.content.partition("(")[2])
    return Counter({phase: int(n) for phase, n in found})


# -- the issue's binding -----------------------------------------------------------------------


def record_for_issue(
    history: PlanningHistoryStore, session: PlanningSession, **extra: Any
) -> dict[str, Any]:
    """A snapshot of the session (with what people said) in the issue's JSONL history."""
    snapshot = session.model_dump(mode="json", exclude={"conversation_history"})
    kept = [m for m in session.conversation_history if _travels(m)]
    snapshot["conversation_history"] = [m.model_dump(mode="json") for m in kept]
    return history.append(ENTRY_TYPE, session=snapshot, **extra)


def _travels(message: ConversationMessage) -> bool:
    """What the next design prompt needs: people's words and the summaries they judged."""
    summary = message.role == "assistant" and message.phase == "review"
    return message.author is not None or summary


def latest_for_issue(
    history: PlanningHistoryStore, store: SessionStore
) -> tuple[PlanningSession, dict[str, Any]] | None:
    """The issue's newest session and its last entry, newest copy of file and entry."""
    entries = [e for e in history.entries() if e.get("type") == ENTRY_TYPE]
    if not entries:
        return None
    entry = entries[-1]
    try:
        recorded = PlanningSession.model_validate(entry.get("session"))
    except ValidationError:
        log.warning("the issue's last planning_session entry is unreadable; ignored")
        return None
    if store.exists(recorded.session_id):
        on_disk = store.load(recorded.session_id)
        if on_disk.updated_at >= recorded.updated_at:
            return on_disk, entry
    return recorded, entry


def issue_sessions(entries: list[dict[str, Any]]) -> list[PlanningSession]:
    """The issue's sessions as last recorded, oldest first (unreadable entries skipped)."""
    latest: dict[str, PlanningSession] = {}
    for session in recorded(entries, ENTRY_TYPE, "session", PlanningSession):
        latest.pop(session.session_id, None)  # re-inserted: ordered by last record
        latest[session.session_id] = session
    return list(latest.values())


def dump_for_log(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)
