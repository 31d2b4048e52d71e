"""Work reaches the branch before the history says it is done.

After every task (CheckpointPhase, the first registered phase) the pass asks its reporter
(when it implements interfaces.Checkpoint) to commit and push; a `checkpoint` entry then
records the commit that carries the finished tasks.
On resume the CI layer compares those entries with the branch it actually fetched
(`unconfirmed_tasks`): a task finished since checkpoints were kept whose commit is not on the
branch (the job was killed before the push, a person deleted the branch) is re-opened with a
`task` entry, so the next pass does it again instead of reporting it done.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from planner.core.interfaces import Checkpoint, TreeCheck
from planner.engine.phase import Phase
from planner.memory.history import PlanningHistoryStore
from planner.memory.state import IssueState

if TYPE_CHECKING:
    from planner.engine.context import PassContext

log = logging.getLogger(__name__)

CHECKPOINT = "checkpoint"
RECONCILED = "reconciled"
MARKER_TRAILER = "Planner-Checkpoint"
"""The commit trailer naming the checkpoint; it survives a rebase, the commit id does not."""
REOPENED = "re-opened: its commit is not on the branch"


class CheckpointPhase(Phase):
    """Registered first, so a task's work is on the branch before any other phase reacts.
    `tree` (the approval gate) settles the working tree before the commit: nothing no judged
    call accounts for is committed without the gate's risk table, and a rebase is no stray.
    `hold` keeps whatever the tools left running from changing the tree between that judgement
    and the commit (planner.tools.sandbox.leftovers.held)."""

    name = "checkpoint"

    def __init__(
        self,
        tree: TreeCheck | None = None,
        hold: Callable[[], AbstractContextManager[object]] = contextlib.nullcontext,
    ) -> None:
        self.tree = tree
        self.hold = hold

    def after_task(self, run: PassContext, task_id: str, status: str, summary: str) -> None:
        with self.hold():
            if self.tree is not None:
                self.tree.settle()
            after_task(run.reporter, run.store, task_id)
            if self.tree is not None:
                self.tree.accept()


def after_task(reporter: object, store: PlanningHistoryStore, task_id: str) -> None:
    """The pass's one call at a task boundary: publish the work, then record which commit."""
    if not isinstance(reporter, Checkpoint):
        return
    count = sum(1 for entry in store.entries() if entry.get("type") == CHECKPOINT)
    marker = f"{store.run_id or 'run'}.{count + 1}"
    commit = reporter.checkpoint(task_id, marker)
    if commit:
        record_checkpoint(store, commit, marker)


def record_checkpoint(store: PlanningHistoryStore, commit: str, marker: str = "") -> None:
    """`commit` carries every task completed so far in the current plan."""
    tasks = completed_tasks(store.entries())
    store.append(CHECKPOINT, commit=commit, marker=marker, tasks=tasks)


def completed_tasks(entries: Sequence[dict[str, Any]]) -> list[str]:
    state = IssueState.from_entries(entries)
    return sorted(task for task, status in state.task_status.items() if status == "completed")


def unconfirmed_tasks(
    entries: Sequence[dict[str, Any]], on_branch: Callable[[dict[str, Any]], bool]
) -> list[str]:
    """Completed tasks that no checkpoint on the branch covers.

    Only tasks completed after the first `reconciled` entry count: older histories were
    written before checkpoints existed and are trusted as they are.
    """
    first = next((i for i, e in enumerate(entries) if e.get("type") == RECONCILED), None)
    if first is None:
        return []
    covered: set[str] = set()
    for entry in entries:
        if entry.get("type") == CHECKPOINT and on_branch(entry):
            covered.update(str(task) for task in entry.get("tasks") or [])
    watched = {
        str(entry.get("task_id"))
        for entry in entries[first:]
        if entry.get("type") == "task" and entry.get("status") == "completed"
    }
    return [task for task in completed_tasks(entries) if task in watched - covered]


def reconcile(
    store: PlanningHistoryStore, on_branch: Callable[[dict[str, Any]], bool], head: str
) -> list[str]:
    """Re-open the unconfirmed tasks; record that this run compared history and branch."""
    reopened = unconfirmed_tasks(store.entries(), on_branch)
    for task in reopened:
        log.warning("task %s %s", task, REOPENED)
        store.append("task", task_id=task, status="pending", summary=REOPENED)
    store.append(RECONCILED, head=head, reopened=reopened)
    return reopened
