"""Everything replanning writes: history entries (§10) and notifications for the issue (§11)."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel

from planner.memory.history import PlanningHistoryStore
from planner.outcome.result import Notification, NotificationKind
from planner.replanning.execution.executor import ReplanChange
from planner.replanning.execution.notices import assumptions_notice, revision_notice
from planner.replanning.limits.controls import Verdict
from planner.replanning.prompting.decision import Phase, ReplanDecision

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]
RAW_CHARS = 2_000


@dataclass
class DecisionContext:
    """Where and why a decision is taken."""

    phase: Phase
    trigger: str
    facts: dict[str, Any] = field(default_factory=dict)
    can_retry: bool = False
    answered: bool = False
    started: float = field(default_factory=time.monotonic)


def new_id() -> str:
    return uuid.uuid4().hex[:12]


class ReplanRecorder:
    def __init__(self, store: PlanningHistoryStore, clock: Clock, mode: str) -> None:
        self.store = store
        self.clock = clock
        self.mode = mode
        self.notifications: list[Notification] = []

    def now(self) -> str:
        moment = self.clock().astimezone(UTC)
        return moment.isoformat(timespec="seconds").replace("+00:00", "Z")

    # -- history ---------------------------------------------------------------------------

    def decision(
        self,
        context: DecisionContext,
        decision: ReplanDecision | None,
        verdict: Verdict,
        **fields: Any,
    ) -> dict[str, Any]:
        """The §10.1 record of one decision (complete once its replan, if any, has run)."""
        record: dict[str, Any] = {
            "replan_id": new_id(),
            "result": "success" if verdict.executes else "skipped",
            "phase": context.phase,
            "trigger": context.trigger,
            "llm_decision": decision.model_dump(mode="json") if decision else None,
            "confidence": decision.confidence if decision else None,
            "executed": verdict.executes,
            "override_reason": verdict.override_reason,
            "outcome": verdict.outcome,
            "warning": verdict.warning,
            "level": verdict.level.number if verdict.level else None,
            "replan_type": decision.replan_type if decision else None,
            "limit_key": verdict.limit_key,
            "signature": verdict.signature,
            "mode": self.mode,
            "decided_at": self.now(),
            "duration_ms": round((time.monotonic() - context.started) * 1000, 2),
        }
        return self.store.append("replan_decision", **(record | fields))

    def unparseable(self, context: DecisionContext, raw: str) -> None:
        log.warning("replan decision at %s unparseable; continuing without a replan", context.phase)
        verdict = Verdict(
            "continue",
            "unparseable",
            override_reason="the decision could not be parsed; no replan",
        )
        self.decision(context, None, verdict, raw=raw[:RAW_CHARS], result="skipped")

    def started(
        self,
        context: DecisionContext,
        decision: ReplanDecision,
        verdict: Verdict,
        plan_before: dict[str, Any],
        counted: bool,
    ) -> str:
        """Written before a replan runs, so it counts (and can be finished) even if the pass
        stops half-way through it."""
        replan_id = new_id()
        self.store.append(
            "replan_started",
            replan_id=replan_id,
            phase=context.phase,
            trigger=context.trigger,
            level=verdict.level.number if verdict.level else None,
            limit_key=verdict.limit_key if counted else None,
            signature=verdict.signature if counted else "",
            counted=counted,
            llm_decision=decision.model_dump(mode="json"),
            plan_before=plan_before,
        )
        return replan_id

    def revision(self, change: ReplanChange, number: int) -> None:
        self.store.append(
            "revision",
            revision=number,
            reason=change.reason,
            changes=[c.model_dump() if isinstance(c, BaseModel) else c for c in change.changes],
            updated_plan=change.plan.model_dump(mode="json"),
            carry_progress=change.level.carry_progress,
            review_phases=change.level.review_phases,
            level=change.level.number,
            source="replanning",
        )
        if change.repairs:
            self.store.append("plan_repaired", repairs=change.repairs, revision=number)

    # -- notifications -----------------------------------------------------------------------

    def notify(self, kind: NotificationKind, body: str, key: str | None = None) -> None:
        notification = Notification(
            id=f"{key or new_id()}-{kind}", kind=kind, body=body, timestamp=self.now()
        )
        self.store.append("notification", id=notification.id, kind=kind, body=body)
        self.notifications.append(notification)

    def notify_decision(
        self,
        kind: NotificationKind,
        context: DecisionContext,
        decision: ReplanDecision,
        verdict: Verdict,
        key: str | None = None,
    ) -> None:
        self.notify(kind, revision_notice(context.phase, decision, verdict, self.now()), key)

    def notify_assumed(self, decision: ReplanDecision, verdict: Verdict) -> None:
        reason = f"I would ask the people on the issue, but {verdict.override_reason}"
        body = assumptions_notice(reason, decision.assumptions_to_make, self.now())
        self.notify("assumptions", body)
