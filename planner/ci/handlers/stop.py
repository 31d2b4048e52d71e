"""`/planner stop`, and a stop that holds for the events that came before it.

A stop takes no pass: the tracking comment and the labels say the issue is stopped. While
another run works on the issue (it holds the lease), that run is asked to stop instead: the
paused label is the request, and the reply to the stop carries STOP_MARKER, so the stop holds
for every event from before it, whichever run takes the lease next (HOLDS). A `/planner cancel`
only ends work (planner.ci.handlers.interactive), so it is answered even while a stop holds.
"""

from __future__ import annotations

from planner.ci.branch.lease import LeaseBusy
from planner.ci.durability.durable import free_lease, restore_from_lease, take_lease
from planner.ci.events.triggers import Sweep, Trigger
from planner.ci.gate.request_marks import came_after, mark_at
from planner.ci.handlers import Event, Handler
from planner.ci.issue_run import IssueRun
from planner.ci.outcome import CiOutcome
from planner.core.interfaces import HistoryBackend
from planner.memory.history import PlanningHistoryStore
from planner.outcome.result import PassResult
from planner.run.history_view import history_plan
from planner.run.runner import history_directory

STOP_REQUESTED = (
    "Stop requested: the run working on this issue stops after its current step, saves its "
    "work and says so in the tracking comment. Should that run have died, the issue stays "
    "stopped all the same: no event from before this request starts work on it."
)
STOPPED_BEFORE_START = (
    "stopped on request (`/planner stop`, made after this event while another run held the "
    "issue); nothing was done"
)
STOP_MARKER = "<!-- planner:stop-requested -->"
"""On the reply to a stop that another run's lease kept from acting at once: the stop holds
for every event that came before it, whichever run takes the lease next (HOLDS)."""


def is_stop(trigger: Trigger | Sweep) -> bool:
    return isinstance(trigger, Trigger) and trigger.command == "stop"


def stop(event: Event) -> CiOutcome:
    """`/planner stop`: no pass; the comment and labels say it is stopped. While another
    run works on the issue (it holds the lease), that run is asked to stop instead."""
    run = event.run
    try:
        run.lease = take_lease(run, wait=0)
    except LeaseBusy:
        return ask_running_pass_to_stop(run)
    try:
        run.load_earlier_runs()
        run.view.result = history_snapshot(run, event.history)
        outcome = CiOutcome(status="stopped", reason=f"stopped by @{run.trigger.actor.login}")
        run.finish(outcome, "stopped")
        return outcome
    finally:
        free_lease(run, run.lease)


def ask_running_pass_to_stop(run: IssueRun) -> CiOutcome:
    """The paused label is the request: the running pass looks at the labels after every
    step, stops at the next one, saves its work and writes its final comment itself."""
    run.set_label(run.config.forge.label_paused)
    return run.reply("stopped", STOP_REQUESTED, marker=STOP_MARKER)


def is_held(trigger: Trigger | Sweep) -> bool:
    """Every event a stop may hold back: all but a cancel, which starts nothing."""
    if not isinstance(trigger, Trigger):
        return False
    words = trigger.instruction.split()
    return not (trigger.command == "run" and words[:1] == ["cancel"])


def stopped_after_event(event: Event) -> CiOutcome | None:
    """A stop asked for after this event, while another run held the issue (alive, or dead
    and its lease since taken over): it holds for this event too, so no pass starts and the
    tracking comment says the issue is stopped. None when no such stop is in force."""
    run = event.run
    if run.config.forge.label_paused not in run.forge.get_issue(run.number).labels:
        return None
    requests = [
        c for c in run.forge.list_comments(run.number) if c.trusted and STOP_MARKER in c.body
    ]
    marks = [mark_at(c, at=c.created_at) for c in requests]
    after = [m for m in marks if not came_after(run.forge, run.trigger, m)]
    if not after:
        return None
    run.load_earlier_runs()
    run.view.result = history_snapshot(run, event.history)
    outcome = CiOutcome(status="stopped", reason=STOPPED_BEFORE_START)
    run.finish(outcome, "stopped")
    return outcome


def history_snapshot(run: IssueRun, history: HistoryBackend | None) -> PassResult | None:
    directory = history_directory(run.config, run.workspace)
    if history is not None:
        history.restore(directory, str(run.number))
    store = PlanningHistoryStore(directory, run.forge.repository, str(run.number))
    restore_from_lease(run, run.lease, store)  # may be longer than the cache's copy
    return history_plan(store, "in_progress")  # as every surface shows the plan


HANDLER = Handler(kind="stop", takes=is_stop, handle=stop, leased=False)
HOLDS = Handler(kind="stopped", takes=is_held, handle=stopped_after_event)
"""A stop asked for after this event holds for every kind of event, sessions' included."""
