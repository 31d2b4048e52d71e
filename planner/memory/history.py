"""PlanningHistoryStore: the issue's append-only JSONL memory (seed: planning-process.md §7.4.2).

One file per (repository, issue), named by a stable task UUID, so every run for an issue appends
to the same file and finding an issue's history never scans the directory. Each entry is one line
written with a single write() under an exclusive lock, then fsynced: concurrent writers never
interleave, and a process killed mid-write leaves at most one truncated line, which readers skip
and writers terminate with a newline instead of rewriting anything.

The file lives where a program a pass starts may reach it (the checkout). So once planner
trusts a file's content (`seal`: when a job has restored it, before any tool starts), the lines
of it planner wrote are kept in memory too (the ledger), in order, and they alone are read: a
line appended by anyone else is refused and reported, a line removed or changed is read as
planner wrote it, and `expel_foreign` writes the file back as planner wrote it before it is
saved for the next run. A line that cannot be read — cut off, not UTF-8, nested too deeply,
larger than MAX_LINE_BYTES — is skipped and reported, never fatal.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import uuid
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from planner.core.errors import PlannerError
from planner.memory.entries import entry_problem
from planner.text.redaction import redact_fields

log = logging.getLogger(__name__)


SKIPPED_MARK = ": skipped "
"""In every warning about a history line that was not used (planner.ci.durability.durable
finds them)."""
SKIPPED_MORE = " more skipped history lines"
FOREIGN = "a history line planner did not write"
MAX_LINE_BYTES = 16 * 1024 * 1024
"""A longer line is skipped unread: no entry planner writes comes near it."""
_LEDGERS: dict[str, list[bytes]] = {}
"""The lines planner trusts of each sealed history file (its real path), in order."""


class HistoryError(PlannerError):
    """The history file could not be written (level 4: the pass must stop)."""


TASK_NAMESPACE = uuid.UUID("6f1c1c5e-8a55-4a8e-9d53-6c1b2f0a7e11")
PLAN_TYPES = ("plan", "revision")


def task_uuid(repository: str, issue_id: str) -> str:
    """The stable identifier of an issue's history file."""
    return str(uuid.uuid5(TASK_NAMESPACE, f"{repository.lower()}#{issue_id}"))


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class PlanningHistoryStore:
    """Reads and appends one issue's planning history."""

    def __init__(self, directory: Path, repository: str, issue_id: str, run_id: str = "") -> None:
        self.directory = Path(directory)
        self.repository = repository
        self.issue_id = str(issue_id)
        self.run_id = run_id
        self.task_uuid = task_uuid(repository, self.issue_id)
        self.filepath = self.directory / f"{self.task_uuid}.jsonl"
        self.warnings: list[str] = []
        self._cache: list[dict[str, Any]] | None = None
        self.directory.mkdir(parents=True, exist_ok=True)

    # -- writing ---------------------------------------------------------------------------

    def append(self, entry_type: str, **fields: Any) -> dict[str, Any]:
        """Append one entry of any type; returns the entry as written."""
        entry = {
            "type": entry_type,
            "timestamp": utc_now(),
            "repository": self.repository,
            "issue_id": self.issue_id,
            "run_id": self.run_id,
            **redact_fields(fields),
        }
        self._append_to_file(entry)
        if self._cache is not None:
            self._cache.append(entry)
        return entry

    def save_plan(self, plan: dict[str, Any], **fields: Any) -> None:
        self.append("plan", plan=plan, **fields)

    def save_revision(self, revised_plan: dict[str, Any], reflection: dict[str, Any]) -> None:
        revision = reflection.get("plan_revision") or {}
        self.append(
            "revision",
            revision=self._revisions_of_current_plan() + 1,
            reason=revision.get("reason", ""),
            changes=revision.get("changes", []),
            updated_plan=revised_plan,
            reflection=reflection.get("reflection", {}),
        )

    def _revisions_of_current_plan(self) -> int:
        """Revisions since the latest plan entry: a new plan starts counting at #1 again."""
        count = 0
        for entry in self.entries():
            if entry.get("type") == "plan":
                count = 0
            elif entry.get("type") == "revision":
                count += 1
        return count

    def save_reflection(self, reflection: dict[str, Any]) -> None:
        self.append("reflection", evaluation=reflection)

    def _append_to_file(self, entry: dict[str, Any]) -> None:
        text = json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n"
        # Models emit lone surrogates ("\ud83d"); as JSON escapes they stay valid and readable.
        line = text.encode("utf-8", errors="backslashreplace")
        try:
            fd = os.open(self.filepath, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise HistoryError(f"cannot open history {self.filepath}: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if _ends_mid_line(fd):
                # A writer died mid-line: close that line so ours stays readable.
                os.write(fd, b"\n")
            _write_all(fd, line)
            os.fsync(fd)
            ledger = _LEDGERS.get(_key(self.filepath))
            if ledger is not None:
                ledger.append(line)
        except OSError as exc:
            raise HistoryError(
                f"cannot append to history {self.filepath}: {exc.strerror}"
            ) from None
        finally:
            os.close(fd)

    # -- trust -----------------------------------------------------------------------------

    def seal(self) -> None:
        """Trust the file as it is now, and from now on only what this process appends to it.
        Call it when nothing but planner has touched the file since planner last saved it or
        restored it (a job's start, a pass's start before any tool starts)."""
        _LEDGERS[_key(self.filepath)] = _raw_lines(self.filepath)
        self._cache = None

    # -- reading ---------------------------------------------------------------------------

    def _read_jsonl(self) -> list[dict[str, Any]]:
        return list(read_entries(self.filepath, self.warnings))

    def entries(self) -> list[dict[str, Any]]:
        """All entries, read once per store and kept current with this store's own appends."""
        if self._cache is None:
            self._cache = self._read_jsonl()
        return list(self._cache)

    def get_latest_plan(self) -> dict[str, Any] | None:
        """The newest plan or revision entry (its plan is under `plan` or `updated_plan`)."""
        return next((e for e in reversed(self._read_jsonl()) if e.get("type") in PLAN_TYPES), None)

    def has_plan(self) -> bool:
        return self.filepath.exists() and self.get_latest_plan() is not None

    def get_revision_history(self) -> list[dict[str, Any]]:
        return [e for e in self._read_jsonl() if e.get("type") == "revision"]

    def get_all_reflections(self) -> list[dict[str, Any]]:
        return [e for e in self._read_jsonl() if e.get("type") == "reflection"]

    def get_past_executions_for_issue(self, issue_id: str) -> list[dict[str, Any]]:
        """Every entry recorded for that issue of this repository, oldest first."""
        path = self.directory / f"{task_uuid(self.repository, str(issue_id))}.jsonl"
        entries = read_entries(path, self.warnings)
        return sorted(
            (e for e in entries if str(e.get("issue_id")) == str(issue_id)),
            key=lambda e: str(e.get("timestamp", "")),
        )


def latest_plan_of(entry: dict[str, Any]) -> dict[str, Any]:
    """The plan held by a plan or revision entry."""
    plan = entry.get("plan") if entry.get("type") == "plan" else entry.get("updated_plan")
    return plan if isinstance(plan, dict) else {}


def read_entries(path: Path, warnings: list[str] | None = None) -> Iterator[dict[str, Any]]:
    """Yield every readable entry; skip (and report) truncated or corrupt lines. Of a sealed
    file only the lines planner wrote are read; any other line in it is reported."""
    ledger = _LEDGERS.get(_key(path))
    if ledger is not None:
        for raw in _foreign_lines(path, ledger):
            _skipped(path, "", f"{FOREIGN} ({_type_of(raw)})", raw, warnings)
        lines: Iterable[bytes] = list(ledger)
    elif not path.exists():
        return
    else:
        lines = _raw_lines(path)
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        entry = _parse_line(raw)
        problem = None if entry is None else _problem(entry)
        if entry is not None and problem is None:
            yield entry
            continue
        what = (
            f"a history line of the wrong shape ({problem})"
            if problem
            else "an unreadable history line"
        )
        _skipped(path, str(number), what, raw, warnings)


def _skipped(path: Path, where: str, what: str, raw: bytes, warnings: list[str] | None) -> None:
    message = f"{path.name}{':' if where else ''}{where}{SKIPPED_MARK}{what} ({len(raw)} bytes)"
    if message not in _LOGGED:  # every store of the file reads it: one log line is enough
        _LOGGED.add(message)
        log.warning(message)
    if warnings is not None and message not in warnings:
        warnings.append(message)


_LOGGED: set[str] = set()


def expel_foreign(directory: Path) -> list[str]:
    """Write every sealed history file under `directory` back as planner wrote it (before it is
    saved for the next run): lines others appended go, lines planner wrote come back. What was
    refused, for people."""
    refused: list[str] = []
    root = _key(directory)
    for key, ledger in _LEDGERS.items():
        path = Path(key)
        if not key.startswith(root.rstrip("/") + "/") or not os.path.lexists(path):
            continue
        foreign = _foreign_lines(path, ledger)
        if not foreign and _raw_lines(path) == ledger:
            continue
        refused += [
            f"{path.name}{SKIPPED_MARK}{FOREIGN} ({_type_of(raw)}) ({len(raw)} bytes)"
            for raw in foreign
        ]
        _replace(path, b"".join(ledger))
    return refused


def _problem(entry: dict[str, Any]) -> str | None:
    try:
        return entry_problem(entry)
    except RecursionError:
        return "nested too deeply"


def _foreign_lines(path: Path, ledger: list[bytes]) -> list[bytes]:
    """The file's lines that are not planner's, matched in order against the ledger (read again
    only when the file changed since the last look)."""
    try:
        status = os.stat(path)
    except OSError:
        return []
    seen = (status.st_ino, status.st_size, status.st_mtime_ns, len(ledger))
    cached = _LOOKED.get(_key(path))
    if cached is not None and cached[0] == seen:
        return cached[1]
    foreign = _compare(path, ledger)
    _LOOKED[_key(path)] = (seen, foreign)
    return foreign


_LOOKED: dict[str, tuple[tuple[int, int, int, int], list[bytes]]] = {}


def _compare(path: Path, ledger: list[bytes]) -> list[bytes]:
    foreign: list[bytes] = []
    position = 0
    for raw in _raw_lines(path):
        if position < len(ledger) and raw == ledger[position]:
            position += 1
        elif raw.strip():
            foreign.append(raw)
    return foreign


def _type_of(raw: bytes) -> str:
    entry = _parse_line(raw)
    return f"type {str(entry.get('type'))[:40]!r}" if entry is not None else "unreadable"


def _raw_lines(path: Path) -> list[bytes]:
    """The file's lines as bytes (a line over MAX_LINE_BYTES as an unreadable stub);
    none when it is missing."""
    lines: list[bytes] = []
    try:
        handle = path.open("rb")
    except OSError:
        return lines
    with handle:
        while raw := handle.readline(MAX_LINE_BYTES + 1):
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while (rest := handle.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                    pass
                raw = b"\x00(a line over the size limit)\n"
            lines.append(raw)
    return lines


def _replace(path: Path, data: bytes) -> None:
    """The file's content replaced at once, keeping its owner and mode."""
    status = path.stat()
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        _write_all(fd, data)
        os.fsync(fd)
        os.fchown(fd, status.st_uid, status.st_gid)
        os.fchmod(fd, status.st_mode & 0o7777)
    finally:
        os.close(fd)
    os.replace(temporary, path)


def _key(path: Path) -> str:
    return os.path.realpath(path)


def is_entry(raw: bytes) -> bool:
    """Whether one raw line of a history file is an entry readers keep."""
    return _parse_line(raw) is not None


def _parse_line(raw: bytes) -> dict[str, Any] | None:
    if len(raw) > MAX_LINE_BYTES:
        return None
    try:
        value = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) and "type" in value else None


def _ends_mid_line(fd: int) -> bool:
    size = os.fstat(fd).st_size
    return size > 0 and os.pread(fd, 1, size - 1) != b"\n"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


SKIPPED_SHOWN = 3


def summarize_skipped(warnings: list[str], shown: int = SKIPPED_SHOWN) -> list[str]:
    """The skipped-line warnings for people: the first few, then how many more."""
    if len(warnings) <= shown:
        return list(warnings)
    return [*warnings[:shown], f"…and {len(warnings) - shown}{SKIPPED_MORE}"]
