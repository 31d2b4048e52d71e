"""PlanTool's persistence under the history directory (plan-tool.md "Persistence", "Telemetry").

plans/<plan_id>/plan.json       the plan, its state, specs, approvals and results
plans/<plan_id>/approval.json   the approval history (every approve and reject)
plans/<plan_id>/preview/*.diff  the unified diff of each spec as previewed
plans/index.json                recent plans, newest last
plans/events.jsonl              telemetry: one JSON line per event

Files are replaced atomically (write a temporary file, then rename), so a crash leaves the
previous copy whole.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from planner.approval.models import Approval, PlanRecord, PlanRef

log = logging.getLogger("planner.approval")
INDEX_LIMIT = 500


class PlanStore:
    def __init__(self, history_directory: Path) -> None:
        self.root = Path(history_directory) / "plans"

    def load(self, plan_id: str) -> PlanRecord | None:
        path = self._plan_dir(plan_id) / "plan.json"
        if not path.is_file():
            return None
        try:
            return PlanRecord.model_validate_json(path.read_bytes())
        except ValueError as exc:
            log.warning("plan %s: %s is unreadable (%s); it is left as it is", plan_id, path, exc)
            return None

    def save(self, record: PlanRecord, updated_at: str) -> None:
        directory = self._plan_dir(record.plan.id)
        atomic_write(directory / "plan.json", record.model_dump_json(indent=2))
        approvals = [a.model_dump() for a in record.state.approvals]
        atomic_write(directory / "approval.json", json.dumps(approvals, indent=2))
        self._update_index(record, updated_at)

    def save_diff(self, plan_id: str, spec_id: str, diff: str) -> None:
        atomic_write(self._plan_dir(plan_id) / "preview" / f"{spec_id}.diff", diff)

    def approvals(self, plan_id: str) -> list[Approval]:
        record = self.load(plan_id)
        return list(record.state.approvals) if record else []

    def index(self) -> list[PlanRef]:
        path = self.root / "index.json"
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return [PlanRef.model_validate(item) for item in raw]
        except (OSError, ValueError):
            return []

    def event(self, event: str, **fields: Any) -> None:
        """A telemetry line in events.jsonl and a readable line in the log."""
        line = {"event": event, **fields}
        self.root.mkdir(parents=True, exist_ok=True)
        with (self.root / "events.jsonl").open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        details = ", ".join(f"{k}={v}" for k, v in fields.items() if k not in ("timestamp",))
        log.info("plan-tool %s: %s", event, details)

    def events(self) -> list[dict[str, Any]]:
        path = self.root / "events.jsonl"
        if not path.is_file():
            return []
        lines = path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def _update_index(self, record: PlanRecord, updated_at: str) -> None:
        refs = [ref for ref in self.index() if ref.id != record.plan.id]
        refs.append(
            PlanRef(
                id=record.plan.id,
                title=record.plan.title,
                status=record.state.status,
                issue=record.plan.issue,
                specs=len(record.state.action_specs),
                updated_at=updated_at,
            )
        )
        payload = [ref.model_dump() for ref in refs[-INDEX_LIMIT:]]
        atomic_write(self.root / "index.json", json.dumps(payload, indent=2))

    def _plan_dir(self, plan_id: str) -> Path:
        if not plan_id or "/" in plan_id or plan_id.startswith("."):
            raise ValueError(f"not a plan id: {plan_id!r}")
        return self.root / plan_id


def atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
