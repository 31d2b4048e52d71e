"""PlanTool's persistence under the history directory (plan-tool.md "Persistence", "Telemetry").

plans/<plan_id>/plan.json       the plan, its state, specs, approvals and results
plans/<plan_id>/approval.json   the approval history (every approve and reject)
plans/<plan_id>/preview/*.diff  the unified diff of each spec as previewed
plans/index.json                recent plans, newest last
plans/events.ndjson             telemetry: one timestamped JSON line per event (not `.jsonl`:
                                the history backends take every `*.jsonl` for an issue's history)
payloads/<issue>/<sha256>.jsonl a spec's long text (a whole file to write), stored once: the
                                plan's saved copies hold its hash (planner.storage.payloads)

Files are replaced atomically (write a temporary file, then rename), so a crash leaves the
previous copy whole. Once a person has been asked, every save of the plan is also appended to the
issue's JSONL history as an `approval_plan` entry, the copy every history backend carries: a plan
whose files did not travel with the history (or were damaged) is read back from its newest entry.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from planner.approval.models import Approval, PlanRecord, PlanRef, ToolInvocation
from planner.storage.payloads import MIN_CHARS, PayloadStore

log = logging.getLogger("planner.approval")
INDEX_LIMIT = 500


class Journal(Protocol):
    """The issue's JSONL history (PlanningHistoryStore)."""

    @property
    def filepath(self) -> Path: ...

    def append(self, entry_type: str, **fields: Any) -> dict[str, Any]: ...

    def entries(self) -> list[dict[str, Any]]: ...


ENTRY = "approval_plan"


class PlanStore:
    def __init__(self, history_directory: Path, journal: Journal | None = None) -> None:
        self.root = Path(history_directory) / "plans"
        self.journal = journal
        owner = journal.filepath.stem if journal is not None else "local"
        self.payloads = PayloadStore(Path(history_directory), owner)
        self._journal_copies: dict[str, PlanRecord] | None = None
        self._index: list[PlanRef] | None = None

    def load(self, plan_id: str) -> PlanRecord | None:
        """The newer of the plan's file and its newest history entry."""
        copies = [self._from_file(plan_id), self._journaled().get(plan_id)]
        found = [copy for copy in copies if copy is not None]
        if not found:
            return None
        return self._with_payloads(max(found, key=lambda record: record.revision))

    def _from_file(self, plan_id: str) -> PlanRecord | None:
        if not _is_plan_id(plan_id):  # a typed id like ../x names no plan (and no file)
            return None
        path = self._plan_dir(plan_id) / "plan.json"
        if not path.is_file():
            return None
        try:
            return PlanRecord.model_validate_json(path.read_bytes())
        except ValueError as exc:
            log.warning("plan %s: %s is unreadable (%s); it is left as it is", plan_id, path, exc)
            return None

    def _journaled(self) -> dict[str, PlanRecord]:
        """The newest readable copy of each plan in the JSONL history (read once; this store's
        own saves keep it current)."""
        if self._journal_copies is None:
            self._journal_copies = self._read_journal()
        return self._journal_copies

    def _read_journal(self) -> dict[str, PlanRecord]:
        newest: dict[str, PlanRecord] = {}
        for entry in self.journal.entries() if self.journal is not None else []:
            if entry.get("type") != ENTRY:
                continue
            try:
                record = PlanRecord.model_validate(entry.get("record"))
            except ValueError:
                log.warning("an approval_plan history entry is malformed; it is skipped")
                continue
            newest[record.plan.id] = record
        return newest

    def journaled_refs(self) -> list[PlanRef]:
        return [_ref(record, "") for record in self._journaled().values()]

    def save(self, record: PlanRecord, updated_at: str) -> None:
        record.revision += 1
        # Only plans a person was (or will be) asked about must outlive this run: the staged
        # changes of plan mode, asked about once the work is done, and what waits for an answer.
        # A spec approved and run in the same call leaves its files (and the action entry) but
        # no copy in the history.
        stored = self._without_payloads(record)
        if self.journal is not None and _outlives_run(record):
            self.journal.append(ENTRY, record=stored.model_dump(mode="json"))
            self._journaled()[record.plan.id] = record.model_copy(deep=True)
        directory = self._plan_dir(record.plan.id)
        atomic_write(directory / "plan.json", stored.model_dump_json(indent=2))
        approvals = [a.model_dump() for a in record.state.approvals]
        if approvals or not (directory / "approval.json").exists():
            atomic_write(directory / "approval.json", json.dumps(approvals, indent=2))
        self._update_index(record, updated_at)

    def _without_payloads(self, record: PlanRecord) -> PlanRecord:
        """The copy that is saved: long texts stored once, by hash (planner.storage.payloads)."""
        stored = record.model_copy(deep=True)
        for spec in stored.state.action_specs:
            if spec.content is not None and len(spec.content) >= MIN_CHARS:
                spec.content_sha256 = self.payloads.put(spec.content)
                spec.content = None
            if spec.invocation is not None:
                self._store_long_arguments(spec.invocation)
        return stored

    def _store_long_arguments(self, invocation: ToolInvocation) -> None:
        """Every argument at least MIN_CHARS long, whatever its type (a text, or an edit_file's
        `edits` holding one), goes to the payloads; the copy keeps its hash."""
        for name, value in list(invocation.arguments.items()):
            text = value if isinstance(value, str) else _as_json(value)
            if text is None or len(text) < MIN_CHARS:
                continue
            invocation.argument_sha256[name] = self.payloads.put(text)
            if not isinstance(value, str) and name not in invocation.json_arguments:
                invocation.json_arguments.append(name)  # a loaded copy has it already
            del invocation.arguments[name]

    def _with_payloads(self, record: PlanRecord) -> PlanRecord:
        """A loaded copy with its long texts back; one that cannot be read stays missing
        (ActionSpecExt.payload_missing: such a spec is refused, never run without it)."""
        loaded = record.model_copy(deep=True)
        for spec in loaded.state.action_specs:
            if spec.content is None and spec.content_sha256:
                spec.content = self.payloads.get(spec.content_sha256)
            invocation = spec.invocation
            for name, sha256 in (invocation.argument_sha256 if invocation else {}).items():
                value = self._argument(
                    sha256, invocation is not None and name in invocation.json_arguments
                )
                if (
                    invocation is not None
                    and name not in invocation.arguments
                    and value is not None
                ):
                    invocation.arguments[name] = value
        return loaded

    def _argument(self, sha256: str, is_json: bool) -> Any:
        """A stored argument (None when it cannot be read back: the spec must not run)."""
        text = self.payloads.get(sha256)
        if text is None or not is_json:
            return text
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            return None

    def save_diff(self, plan_id: str, spec_id: str, diff: str) -> None:
        atomic_write(self._plan_dir(plan_id) / "preview" / f"{spec_id}.diff", diff)

    def approvals(self, plan_id: str) -> list[Approval]:
        record = self.load(plan_id)
        return list(record.state.approvals) if record else []

    def index(self) -> list[PlanRef]:
        """Recent plans, oldest first: index.json, completed by the JSONL history's copies."""
        if self._index is None:
            self._index = self._read_index()
        return list(self._index)

    def _read_index(self) -> list[PlanRef]:
        path = self.root / "index.json"
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            listed = [PlanRef.model_validate(item) for item in raw]
        except (OSError, ValueError, TypeError, RecursionError):  # TypeError: a hand-edited `null`
            listed = []
        known = {ref.id for ref in listed}
        return listed + [ref for ref in self.journaled_refs() if ref.id not in known]

    def event(self, event: str, **fields: Any) -> None:
        """A telemetry line in events.ndjson and a readable line in the log."""
        line = {"event": event, "timestamp": _now(), **fields}
        self.root.mkdir(parents=True, exist_ok=True)
        with (self.root / "events.ndjson").open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        details = ", ".join(f"{k}={v}" for k, v in fields.items() if k not in ("timestamp",))
        log.info("plan-tool %s: %s", event, details)

    def events(self) -> list[dict[str, Any]]:
        path = self.root / "events.ndjson"
        if not path.is_file():
            return []
        lines = path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def _update_index(self, record: PlanRecord, updated_at: str) -> None:
        new = _ref(record, updated_at)
        refs = self.index()
        old = next((ref for ref in refs if ref.id == record.plan.id), None)
        if old is not None and old.model_copy(update={"updated_at": updated_at}) == new:
            return  # the index says the same: no rewrite
        refs = [ref for ref in refs if ref.id != record.plan.id]
        refs.append(new)
        self._index = refs[-INDEX_LIMIT:]
        payload = [ref.model_dump() for ref in self._index]
        atomic_write(self.root / "index.json", json.dumps(payload, indent=2))

    def _plan_dir(self, plan_id: str) -> Path:
        if not _is_plan_id(plan_id):
            raise ValueError(f"not a plan id: {plan_id!r}")
        return self.root / plan_id


def _as_json(value: Any) -> str | None:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _outlives_run(record: PlanRecord) -> bool:
    return bool(record.state.approval_requests) or "staged" in record.plan.tags


def _is_plan_id(plan_id: str) -> bool:
    return bool(plan_id) and "/" not in plan_id and "\\" not in plan_id and plan_id[0] != "."


def _ref(record: PlanRecord, updated_at: str) -> PlanRef:
    return PlanRef(
        id=record.plan.id,
        title=record.plan.title,
        status=record.state.status,
        issue=record.plan.issue,
        specs=len(record.state.action_specs),
        updated_at=updated_at,
        max_spec=max((spec_number(s.id) for s in record.state.action_specs), default=0),
    )


def spec_number(spec_id: str) -> int:
    """N of a spec id `aN` (0 for anything else)."""
    return int(spec_id[1:]) if spec_id[1:].isdigit() else 0


def atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)  # no fsync: the durable copy is the JSONL history entry
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
