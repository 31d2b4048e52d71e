"""One module per kind of event; planner.ci.job's table (HANDLERS) names them in order.

A kind of event is a `Handler`: which events it takes (from the event alone), a read-only check
that may skip the event before anything is written, and what it does with the event. The job
asks the handlers that take an event in table order; a handler that passes (its `handle` returns
None) leaves the event to the next one, and the last one (issue_pass) takes every event. A new
kind of event is one module here with its `HANDLER`, and one line in the table.

Handlers never import each other; they share the run on the issue (planner.ci.issue_run).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from planner.ci.events.triggers import Skip, Sweep, Trigger
    from planner.ci.forges.base import ForgeAdapter
    from planner.ci.issue_run import IssueRun
    from planner.ci.outcome import CiOutcome
    from planner.ci.run_port import Target
    from planner.config import PlannerConfig
    from planner.core.interfaces import HistoryBackend, ToolProvider


@dataclass
class Event:
    """One event on one issue, as every handler gets it."""

    run: IssueRun
    history: HistoryBackend | None
    """The job's history backend; under the lease, restored once for all handlers."""
    model: Any
    extra_tools: tuple[ToolProvider, ...]


def _nothing_to_refuse(
    forge: ForgeAdapter, trigger: Trigger, target: Target, config: PlannerConfig
) -> Skip | None:
    return None


def _passes(event: Event) -> CiOutcome | None:
    return None


@dataclass(frozen=True)
class Handler:
    """One kind of event: which events it takes and what it does with them."""

    kind: str
    takes: Callable[[Trigger | Sweep], bool]
    """Whether the event is of this kind, from the event alone (no API call)."""
    handle: Callable[[Event], CiOutcome | None] = _passes
    """What it does; None passes the event on to the next handler that takes it."""
    refuse: Callable[[ForgeAdapter, Trigger, Target, PlannerConfig], Skip | None] = (
        _nothing_to_refuse
    )
    """Why the event starts nothing after all (read-only, before anything is written)."""
    leased: bool = True
    """Handled while holding the issue's lease; False answers at once (`/planner stop`)."""
    without_issue: Callable[[Sweep], str] | None = None
    """For an event with no issue of its own (the scheduled sweep): why the job skips it."""
