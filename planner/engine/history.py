"""PlanningHistoryStore: the issue's append-only JSONL memory (seed: planning-process.md §7.4.2).

One file per (repository, issue), named by a stable task UUID, so every run for an issue appends
to the same file and finding an issue's history never scans the directory. Each entry is one line
written with a single write() under an exclusive lock, then fsynced: concurrent writers never
interleave, and a process killed mid-write leaves at most one truncated line, which readers skip
and writers terminate with a newline instead of rewriting anything.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from planner.engine.entries import entry_problem
from planner.engine.errors import PlannerError
from planner.engine.redaction import redact_fields

log = logging.getLogger(__name__)


SKIPPED_MARK = ": skipped "
"""In every warning about a history line that was not used (planner.ci.durable finds them)."""
SKIPPED_MORE = " more skipped history lines"


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
        except OSError as exc:
            raise HistoryError(
                f"cannot append to history {self.filepath}: {exc.strerror}"
            ) from None
        finally:
            os.close(fd)

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
    """Yield every readable entry; skip (and report) truncated or corrupt lines."""
    if not path.exists():
        return
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            entry = _parse_line(raw)
            problem = None if entry is None else entry_problem(entry)
            if entry is not None and problem is None:
                yield entry
                continue
            what = (
                f"a history line of the wrong shape ({problem})"
                if problem
                else "an unreadable history line"
            )
            message = f"{path.name}:{number}{SKIPPED_MARK}{what} ({len(raw)} bytes)"
            log.warning(message)
            if warnings is not None:
                warnings.append(message)


def is_entry(raw: bytes) -> bool:
    """Whether one raw line of a history file is an entry readers keep."""
    return _parse_line(raw) is not None


def _parse_line(raw: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
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
