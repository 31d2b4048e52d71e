"""PlanTool: the single source of truth for plans of action specs (plan-tool.md "API").

Lifecycle: proposed → pending_review → approved → scheduled → executing → completed | aborted.
Validation failures keep a plan in pending_review; a person's rejection returns it to proposed;
an aborted plan executes again from its remaining specs only. Every call that changes state is
saved at once and leaves a telemetry event.
"""

from __future__ import annotations

import builtins
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from planner.approval.models import (
    ActionSpec,
    ActionSpecExt,
    Actor,
    Approval,
    DiffSummary,
    ExecutionResult,
    FileOpOutcome,
    MessageRef,
    Plan,
    PlanPreview,
    PlanRecord,
    PlanRef,
    PlanState,
    PlanStatus,
    SpecSelection,
    ValidationReport,
)
from planner.approval.preview import counts, preview_body, unified
from planner.approval.store import PlanStore, atomic_write
from planner.approval.validation import SpecRules, preflight, validate
from planner.core.interfaces import ToolResult
from planner.storage.payloads import MIN_CHARS
from planner.tools.files.paths import read_in_tree

RUNNABLE: tuple[PlanStatus, ...] = ("approved", "scheduled", "aborted", "executing")
"""States execute() takes: approved, or stopped before every approved spec ran."""
RISK_WEIGHT = {"low": 0.1, "medium": 0.5, "high": 1.0}
Executor = Callable[[ActionSpecExt], ToolResult]

STORED_DIFF_CHARS = 100_000
"""A change's diff kept in plans/<id>/preview/ holds at most this much (a large file replaced
would hold its old and new text); the cut says so and where the whole new text is stored."""


class PlanToolError(Exception):
    """An operation that the plan's state or arguments do not allow; nothing was changed."""


class PlanTool:
    def __init__(
        self,
        store: PlanStore,
        rules: SpecRules,
        executor: Executor,
        issue: str = "",
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.store, self.rules, self.executor, self.issue = store, rules, executor, issue
        self.clock = clock or (lambda: datetime.now(UTC))
        self._batch: dict[str, PlanRecord] | None = None

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Operations inside save each plan they touch once, at the end (the gate's direct
        path: a spec proposed, approved and run in one call needs no intermediate files)."""
        self._batch = {}
        try:
            yield
        finally:
            touched, self._batch = self._batch, None
            for record in touched.values():
                self._save(record)

    # -- proposing and specifying -------------------------------------------------------------

    def propose(
        self,
        content: str,
        sources: Sequence[MessageRef] = (),
        rationale: str = "",
        tags: Sequence[str] = (),
        title: str = "",
    ) -> str:
        plan = Plan(
            id=f"plan-{uuid.uuid4()}",
            title=title or content.strip().splitlines()[0][:80] if content.strip() else "plan",
            content=content,
            sources=list(sources),
            rationale=rationale,
            tags=list(tags),
            created_at=self._now(),
            issue=self.issue,
        )
        self._save(PlanRecord(plan=plan))
        self.store.event("plan_proposed", plan_id=plan.id, actor="ai", reason=rationale[:200])
        return plan.id

    def set_action_specs(self, plan_id: str, specs: Sequence[ActionSpec]) -> ValidationReport:
        record = self._record(plan_id)
        self._require(record, "set_action_specs", ("proposed", "pending_review"))
        normalized = [validate(spec, self.rules) for spec in self._numbered(specs)]
        issues = [f"{s.id}: {note}" for s in normalized if not s.validated for note in s.notes]
        record.state.action_specs = normalized
        record.state.status = "pending_review"
        record.state.previews = self._preview_of(record)
        self._save(record)
        for spec in normalized:
            self.store.save_diff(plan_id, spec.id, self._diff_of(spec))
        self.store.event(
            "specs_set",
            plan_id=plan_id,
            actor="ai",
            counts=_counts(normalized),
            risk_score=record.state.previews.risk_score,
            reason="; ".join(issues)[:500],
        )
        return ValidationReport(ok=not issues, issues=issues, normalized=normalized)

    def preview(self, plan_id: str) -> PlanPreview:
        record = self._record(plan_id)
        return record.state.previews or self._preview_of(record)

    # -- approval -----------------------------------------------------------------------------

    def request_approval(self, plan_id: str, selection: SpecSelection) -> str:
        record = self._record(plan_id)
        self._require(record, "request_approval", ("pending_review",))
        self._known(record, selection)
        request_id = f"req-{uuid.uuid4().hex[:8]}"
        record.state.approval_requests.append(request_id)
        record.state.selection = selection
        self._save(record)
        self.store.event(
            "approval_requested",
            plan_id=plan_id,
            actor="system",
            request_id=request_id,
            counts=_counts(_selected(record.state, selection)),
            risk_score=self._preview_of(record).risk_score,
        )
        return request_id

    def approve(
        self,
        plan_id: str,
        approver: str,
        selection: SpecSelection,
        actor: Actor = "user",
        *,
        comment_id: str = "",
        thread: int | None = None,
    ) -> PlanState:
        """`approver` approves the selected specs; `comment_id` on `thread` is where (the forge
        comment or event planner checked), so the approval can be confirmed before it runs."""
        record = self._record(plan_id)
        self._require(record, "approve", ("pending_review",))
        chosen = _selected(record.state, self._known(record, selection))
        invalid = [s.id for s in chosen if not s.validated]
        if invalid:
            raise PlanToolError(f"{', '.join(invalid)} failed validation and cannot be approved")
        for spec in chosen:
            spec.outcome = "approved" if spec.outcome in ("pending", "approved") else spec.outcome
        record.state.approvals.append(
            Approval(
                approver=approver,
                timestamp=self._now(),
                selection=selection,
                comment_id=comment_id,
                thread=thread,
            )
        )
        record.state.selection = selection
        if not [s for s in record.state.action_specs if s.outcome == "pending" and s.needs_person]:
            record.state.status = "approved"
        self._save(record)
        self.store.event(
            "approved",
            plan_id=plan_id,
            actor=actor,
            approver=approver,
            counts=_counts(chosen),
            risk_score=self._preview_of(record).risk_score,
        )
        return record.state

    def reject(
        self, plan_id: str, approver: str, spec_ids: Sequence[str], reason: str
    ) -> PlanState:
        """A person sends specs back: they are not run, the plan returns to proposed."""
        record = self._record(plan_id)
        self._require(record, "reject", ("pending_review", "approved"))
        selection = self._known(record, SpecSelection(ids=list(spec_ids)))
        for spec in _selected(record.state, selection):
            spec.outcome, spec.reason = "rejected", reason
        record.state.approvals.append(
            Approval(
                approver=approver,
                timestamp=self._now(),
                selection=selection,
                decision="rejected",
                reason=reason,
            )
        )
        record.state.status = (
            "approved"
            if _only_decided(record.state)
            else "pending_review"  # the plan's other specs still wait for their answer
            if _unanswered(record.state)
            else "proposed"
        )
        self._save(record)
        self.store.event("rejected", plan_id=plan_id, actor="user", reason=reason[:500])
        return record.state

    def require_person(self, plan_id: str, spec_ids: Sequence[str]) -> PlanState:
        """Policy wants a person's approval for these specs before they run."""
        record = self._record(plan_id)
        for spec in _selected(record.state, self._known(record, SpecSelection(ids=list(spec_ids)))):
            spec.needs_person = True
        self._save(record)
        return record.state

    def mark_pending(self, plan_id: str, pending: bool) -> PlanState:
        record = self._record(plan_id)
        wanted: PlanStatus = "pending_review" if pending else "proposed"
        self._require(record, "mark_pending", ("proposed", "pending_review", "approved"))
        record.state.status = wanted
        self._save(record)
        return record.state

    # -- execution ----------------------------------------------------------------------------

    def execute(self, plan_id: str, reported: bool = False) -> ExecutionResult:
        """Run the approved specs not yet done, in order; preflight is recomputed first.
        `reported`: the caller hands each outcome to the pass itself (the gate's direct path).
        The plan passes through `scheduled` while preflight runs; `executing` is saved before
        the first spec runs, so a crash mid-way leaves a plan that says so."""
        record = self._record(plan_id)
        # executing: a run killed mid-way; the spec it ran is checked by preflight again
        self._require(record, "execute", RUNNABLE)
        started = self._now()
        record.state.status = "scheduled"  # saved: a run that dies here leaves it runnable
        self._save(record)
        stale = self._stale(record)
        if stale:
            return self._ask_again(record, stale, started)
        record.state.status = "executing"
        self._save(record)
        outcomes = self._run_specs(record, reported)
        return self._finish(record, outcomes, started)

    def _run_specs(self, record: PlanRecord, reported: bool) -> builtins.list[FileOpOutcome]:
        outcomes: builtins.list[FileOpOutcome] = []
        approved = [spec for spec in record.state.action_specs if spec.outcome == "approved"]
        for position, spec in enumerate(approved):
            result = self.executor(spec)
            spec.outcome = "succeeded" if result.ok else "failed"
            spec.reason = "" if result.ok else str(result.error)
            spec.reported = reported
            detail = result.content if result.ok else str(result.error)
            outcome = FileOpOutcome(
                spec_id=spec.id, ok=result.ok, detail=detail[:4_000], refused=result.refused
            )
            outcomes.append(outcome)
            if not result.ok:
                break
            if position < len(approved) - 1:  # the last one is saved by _finish
                self._save(record)
        return outcomes

    def _finish(
        self, record: PlanRecord, outcomes: builtins.list[FileOpOutcome], started: str
    ) -> ExecutionResult:
        failed = [o for o in outcomes if not o.ok]
        record.state.status = "aborted" if failed else "completed"
        record.state.results.extend(outcomes)
        self._save(record)
        result = ExecutionResult(
            overall_success=not failed,
            results=outcomes,
            started_at=started,
            finished_at=self._now(),
        )
        self.store.event(
            "executed",
            plan_id=record.plan.id,
            actor="system",
            counts={"succeeded": len(outcomes) - len(failed), "failed": len(failed)},
        )
        final = "aborted" if failed else "completed"
        reason = failed[0].detail[:300] if failed else ""
        self.store.event(final, plan_id=record.plan.id, actor="system", reason=reason)
        return result

    def _stale(self, record: PlanRecord) -> builtins.list[ActionSpecExt]:
        """Approved specs whose file changed since they were previewed."""
        stale = []
        for spec in record.state.action_specs:
            if spec.outcome != "approved" or spec.kind not in {"create", "write", "delete"}:
                continue
            if preflight(spec, self.rules.policy.root).base_sha256 != spec.preflight.base_sha256:
                stale.append(spec)
        return stale

    def _ask_again(
        self, record: PlanRecord, stale: builtins.list[ActionSpecExt], started: str
    ) -> ExecutionResult:
        for spec in stale:
            spec.preflight = preflight(spec, self.rules.policy.root)
            spec.outcome, spec.needs_person = "pending", True
            spec.reason = "the file changed after approval; approve the new preview again"
            self.store.save_diff(record.plan.id, spec.id, self._diff_of(spec))
        record.state.status = "pending_review"
        record.state.previews = self._preview_of(record)
        self._save(record)
        ids = ", ".join(s.id for s in stale)
        self.store.event(
            "approval_requested",
            plan_id=record.plan.id,
            actor="system",
            reason=f"preflight changed for {ids}",
            counts=_counts(stale),
        )
        outcomes = [FileOpOutcome(spec_id=s.id, ok=False, detail=s.reason) for s in stale]
        return ExecutionResult(
            overall_success=False, results=outcomes, started_at=started, finished_at=self._now()
        )

    # -- reading ------------------------------------------------------------------------------

    def get_state(self, plan_id: str) -> PlanState:
        return self._record(plan_id).state

    def get_plan(self, plan_id: str) -> PlanRecord:
        return self._record(plan_id)

    def get_current(self) -> PlanRef | None:
        """The issue's newest plan, unless clear_current() was called since it was proposed."""
        refs = self.list()
        if not refs or refs[-1].id == self._cleared_id():
            return None
        return refs[-1]

    def list(self) -> builtins.list[PlanRef]:
        refs = self.store.index()
        return [ref for ref in refs if not self.issue or ref.issue == self.issue]

    def hold_back(
        self, plan_id: str, again: Sequence[str], dropped: Sequence[str], why: dict[str, str]
    ) -> None:
        """Approved specs whose approval does not count: `again` wait for a person once more
        (their plan is pending review), `dropped` never run (failed with `why`, which the pass is
        told as the action's result)."""
        record = self._record(plan_id)
        for spec in record.state.action_specs:
            if spec.id in again:
                spec.outcome, spec.needs_person, spec.reason = "pending", True, why[spec.id]
            elif spec.id in dropped:
                spec.outcome, spec.reason = "failed", f"{spec.id} was not run: {why[spec.id]}"
        if again:
            record.state.status = "pending_review"
        elif not any(spec.outcome == "approved" for spec in record.state.action_specs):
            record.state.status = "completed"
        self._save(record)
        self.store.event("held_back", plan_id=plan_id, again=list(again), dropped=list(dropped))

    def mark_reported(self, plan_id: str, spec_id: str) -> None:
        """The spec's outcome reached the pass; it is not handed back twice."""
        record = self._record(plan_id)
        spec = record.state.spec(spec_id)
        if spec is not None:
            spec.reported = True
            self._save(record)

    def clear_current(self) -> None:
        current = self.get_current()
        if current is not None:
            atomic_write(self._cleared_path(), current.id)

    def records(self, statuses: Sequence[PlanStatus] = ()) -> builtins.list[PlanRecord]:
        """This issue's plans, oldest first, optionally only those in `statuses`."""
        refs = [ref for ref in self.list() if not statuses or ref.status in statuses]
        loaded = (self.store.load(ref.id) for ref in refs)
        return [r for r in loaded if r is not None and (not statuses or r.state.status in statuses)]

    def next_spec_number(self) -> int:
        return max((ref.max_spec for ref in self.list()), default=0) + 1

    # -- helpers ------------------------------------------------------------------------------

    def _record(self, plan_id: str) -> PlanRecord:
        if self._batch is not None and plan_id in self._batch:
            return self._batch[plan_id]
        record = self.store.load(plan_id)
        if record is None:
            raise PlanToolError(f"no plan {plan_id!r}")
        return record

    def _require(self, record: PlanRecord, operation: str, allowed: Sequence[str]) -> None:
        if record.state.status not in allowed:
            raise PlanToolError(
                f"{operation} is not allowed while plan {record.plan.id} is "
                f"{record.state.status} (allowed in: {', '.join(allowed)})"
            )

    def _known(self, record: PlanRecord, selection: SpecSelection) -> SpecSelection:
        ids = {spec.id for spec in record.state.action_specs}
        unknown = [i for i in selection.ids if i not in ids]
        if unknown:
            raise PlanToolError(f"plan {record.plan.id} has no spec {', '.join(unknown)}")
        return selection

    def _numbered(self, specs: Sequence[ActionSpec]) -> builtins.list[ActionSpecExt]:
        """Specs with ids: kept where they have one, else the issue's next free `aN`."""
        number = self.next_spec_number()
        numbered = []
        for spec in specs:
            if isinstance(spec, ActionSpecExt) and spec.id:
                numbered.append(spec)
                continue
            fields = spec.model_dump(exclude={"id"})
            numbered.append(ActionSpecExt(**fields, id=f"a{number}"))
            number += 1
        return numbered

    def _preview_of(self, record: PlanRecord) -> PlanPreview:
        specs = record.state.action_specs
        diffs = [self._summary(spec) for spec in specs if spec.path]
        weights = [RISK_WEIGHT[spec.risk] for spec in specs]
        return PlanPreview(
            files=sorted({spec.path for spec in specs if spec.path}),
            diffs=diffs,
            risk_score=max(weights, default=0.0),
        )

    def _summary(self, spec: ActionSpecExt) -> DiffSummary:
        added, removed = counts(self._diff_of(spec))
        return DiffSummary(
            spec_id=spec.id,
            path=spec.path,
            added=added,
            removed=removed,
            summary=spec.preflight.diff_summary,
        )

    def preview_body(self, spec: ActionSpecExt) -> str:
        """What a person's preview of `spec` shows, against the file as it is now."""
        return preview_body(spec, self._before(spec))

    def _before(self, spec: ActionSpecExt) -> bytes:
        """The file as it is now, read without following links (b"" when it is none)."""
        found = read_in_tree(self.rules.policy.root, spec.path) if spec.path else None
        return found or b""

    def _diff_of(self, spec: ActionSpecExt) -> str:
        """What preview/<spec>.diff stores: a file's diff, or a call's whole arguments and the
        diff of its rolled-back effect (what a cut preview points to)."""
        if spec.kind == "run":
            effect = spec.preflight.effect_diff
            return (spec.content or "") + "\n" + (f"\n{effect}" if effect else "")
        if not spec.path or not spec.validated:
            return ""
        if self._new_large_file(spec):
            # A new file's diff is its whole text again: point to the one stored copy.
            return (
                f"New file b/{spec.path}: its whole content ({len(spec.content or ''):,} "
                f"characters) is stored once in the planning history as {self._payload(spec)}.\n"
            )
        return self._kept_diff(spec, unified(spec, self._before(spec)))

    def _kept_diff(self, spec: ActionSpecExt, diff: str) -> str:
        """A diff up to STORED_DIFF_CHARS; a longer one (a large file replaced: its old and new
        text) is cut at a line and says how much is left out and where the new text is."""
        if len(diff) <= STORED_DIFF_CHARS:
            return diff
        kept = diff[: diff.rfind("\n", 0, STORED_DIFF_CHARS) + 1]
        where = ""
        if spec.kind in {"create", "write"} and spec.content:
            where = (
                f" The whole new text of {spec.path} ({len(spec.content):,} characters) is "
                f"stored once in the planning history as {self._payload(spec)}."
            )
        return kept + f"… diff cut: {len(diff) - len(kept):,} more characters not kept.{where}\n"

    def stored_preview(self, plan_id: str, spec: ActionSpecExt) -> str:
        """Where the planning history keeps the whole text of a spec's preview: the one stored
        copy of a new file's content (a JSON line: its `content`), else the preview's diff."""
        if self._new_large_file(spec):
            return self._payload(spec)
        return f"plans/{plan_id}/preview/{spec.id}.diff"

    def _new_large_file(self, spec: ActionSpecExt) -> bool:
        if spec.kind not in {"create", "write"} or len(spec.content or "") < MIN_CHARS:
            return False
        return not (self.rules.policy.root / spec.path).is_file()

    def _payload(self, spec: ActionSpecExt) -> str:
        stored = self.store.payloads.path(self.store.payloads.put(spec.content or ""))
        return stored.relative_to(self.store.root.parent).as_posix()

    def _save(self, record: PlanRecord) -> None:
        if self._batch is not None:
            self._batch[record.plan.id] = record
            return
        self.store.save(record, self._now())

    def _cleared_path(self) -> Path:
        return self.store.root / f"cleared-{self.issue or 'local'}"

    def _cleared_id(self) -> str | None:
        path = self._cleared_path()
        return path.read_text(encoding="utf-8").strip() if path.is_file() else None

    def _now(self) -> str:
        return self.clock().astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _selected(state: PlanState, selection: SpecSelection) -> list[ActionSpecExt]:
    return [spec for spec in state.action_specs if selection.covers(spec.id)]


def _only_decided(state: PlanState) -> bool:
    """Every spec that needed a person is answered and some were approved: run those."""
    answered = all(s.outcome != "pending" or not s.needs_person for s in state.action_specs)
    return answered and any(s.outcome == "approved" for s in state.action_specs)


def _unanswered(state: PlanState) -> bool:
    return any(s.outcome == "pending" and s.needs_person for s in state.action_specs)


def _counts(specs: Sequence[ActionSpecExt]) -> dict[str, int]:
    return {"specs": len(specs), "files": len({s.path for s in specs if s.path})}
