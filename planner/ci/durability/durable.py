"""The issue branch as the durable copy of the work (issue 15).

- `CheckpointReporter`: the pass's ProgressReporter that also implements
  planner.core.interfaces.Checkpoint. At every task boundary it commits the working tree and
  publishes it (gitops.publish: a person's commits pushed meanwhile are rebased onto, never
  overwritten; a conflict sends planner's commits to `planner/issue-N-conflict-<run>` and ends
  the pass as needs_human).
- `reconcile_branch`: before the pass, completed tasks whose commit is not on the fetched
  branch are re-opened, and the tracking comment says so.
- `publish_pass`: the final commit and push of the pass, with the same rules.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from planner.approval.waiting import NOT_CONFIRMED, ROLLED_BACK
from planner.ci.branch.gitops import GitError, GitWorkspace, Published, on_branch, publish
from planner.ci.branch.lease import (
    Heartbeat,
    Lease,
    LeaseBusy,
    LeaseRules,
    acquire,
    lease_ref,
    release,
    restore_history,
)
from planner.ci.durability.signals import cancellation
from planner.ci.run_port import IssueRunPort
from planner.engine.checkpoints import MARKER_TRAILER, reconcile, record_checkpoint
from planner.memory.history import SKIPPED_MARK, SKIPPED_MORE, PlanningHistoryStore, expel_foreign
from planner.outcome.deadline import DEADLINE
from planner.outcome.flow import StopPass
from planner.outcome.result import PassResult
from planner.run.runner import history_directory
from planner.text.inert import no_closing_keywords

log = logging.getLogger(__name__)


class CheckpointReporter:
    """ProgressReporter + Checkpoint: the tracking comment, and a commit per finished task."""

    def __init__(self, run: IssueRunPort, reporter: Any) -> None:
        self.run = run
        self.reporter = reporter

    def update(self, snapshot: Any) -> None:
        self.reporter.update(snapshot)

    def checkpoint(self, task_id: str, marker: str) -> str:
        git = self.run.git
        if git is None:
            return ""
        try:
            git.commit_all(checkpoint_message(self.run, task_id, marker), self.run.identity())
            if git.head() == self.run.start_head:
                return git.head()  # nothing new: the branch is not created or pushed for this
            published = publish(git, self.run.identity(), side_branch(self.run))
        except GitError as exc:
            raise StopPass("failed", f"could not publish the work of {task_id}: {exc}") from None
        if published.how == "conflict":
            raise StopPass("needs_human", conflict_note(self.run, published), [])
        return git.head()


def checkpoint_message(run: IssueRunPort, task_id: str, marker: str) -> str:
    title = no_closing_keywords(" ".join(run.target.issue.title.split())[:120])
    lines = [f"planner: {title} ({run.forge.issue_reference(run.number)})", ""]
    lines += [f"Checkpoint after {task_id}.", "", f"{MARKER_TRAILER}: {marker}"]
    actor = run.trigger.actor
    if actor.email and not actor.is_bot:
        lines.append(f"Co-authored-by: {actor.login} <{actor.email}>")
    return run.forge.redact("\n".join(lines)) + "\n"


def side_branch(run: IssueRunPort) -> str:
    return f"{run.branch}-conflict-{run.run_id}"


def conflict_note(run: IssueRunPort, published: Published) -> str:
    note = (
        f"A person's commits on `{run.branch}` conflict with planner's work, so planner pushed "
        f"its commits to `{published.side_branch}` instead (nothing was overwritten). Merge "
        f"them by hand, then comment `{run.config.forge.trigger_phrase}` to continue."
    )
    if note not in run.view.notes:
        run.view.notes.append(note)
    return note


def reconcile_branch(run: IssueRunPort, store: PlanningHistoryStore) -> list[str]:
    """Re-open completed tasks whose commit is not on the branch this run fetched."""
    git = run.git
    if git is None:
        return []
    run.start_head = git.head()
    reopened = reconcile(store, lambda entry: _carried(git, entry), run.start_head)
    if reopened:
        run.view.notes.append(
            f"Re-opened {', '.join(reopened)}: the commit that carried "
            f"{'it' if len(reopened) == 1 else 'them'} is not on `{run.branch}` (the branch "
            "was deleted, or an earlier run stopped before it could push); planner does "
            f"{'it' if len(reopened) == 1 else 'them'} again."
        )
    return reopened


def _carried(git: GitWorkspace, entry: dict[str, Any]) -> bool:
    return on_branch(git, str(entry.get("commit") or ""), str(entry.get("marker") or ""))


def publish_pass(
    run: IssueRunPort, git: GitWorkspace, result: PassResult, store: PlanningHistoryStore
) -> tuple[PassResult, str]:
    """The pass's last commit and push; then the history records what the branch carries."""
    git.commit_all(run.commit_message(result), run.identity())
    head = git.head()
    if head == run.start_head:
        return result, ""
    published = publish(git, run.identity(), side_branch(run))
    if published.how == "conflict":
        note = conflict_note(run, published)
        return result.model_copy(update={"status": "needs_human", "stop_reason": note}), head
    record_checkpoint(store, git.head())
    return result, git.head()


def history_notes(run: IssueRunPort, history: Any) -> None:
    """Problems with the stored history (an unreadable archive, an artifact from a fork) get a
    line in the tracking comment; what could be read was kept."""
    for problem in getattr(history, "problems", []):
        note = f"History: {problem}"
        if note not in run.view.notes:
            run.view.notes.append(note)


# -- the issue's lease ---------------------------------------------------------------------------


def lease_rules(run: IssueRunPort, wait: float | None = None) -> LeaseRules:
    """`wait`: how long a live holder is waited for (default: forge.lease_wait_seconds, else
    the wall budget plus a minute); a stop command waits not at all."""
    budget, forge = run.config.budget, run.config.forge
    waited = forge.lease_wait_seconds or budget.max_wall_seconds + 60
    return LeaseRules(
        seconds=forge.lease_seconds,
        wait=waited if wait is None else wait,
        identity=run.identity(),
        cancelled=cancellation,
    )


def take_lease(run: IssueRunPort, wait: float | None = None) -> Lease | None:
    """Wait for and take the issue's lease (planner.ci.branch.lease); say when a dead run's
    expired."""
    git = GitWorkspace(run.workspace, run.forge.git_remote())
    try:
        lease = acquire(git, run.number, run.run_id, lease_rules(run, wait))
    except LeaseBusy:
        raise
    except GitError as exc:  # a forge that refuses the ref must not stop every run
        log.warning("the issue's lease could not be used: %s", exc)
        run.view.notes.append(
            f"The issue's lease (`{lease_ref(run.number)}`) could not be used, so this run did "
            f"not wait for other runs on the issue: {exc}"
        )
        return None
    if lease is not None and lease.taken_over is not None:
        run.view.notes.append(
            f"The previous run ({lease.taken_over.holder}) stopped without finishing (its "
            "lease on this issue expired); what it recorded is kept."
        )
    return lease


def lease_heartbeat(
    run: IssueRunPort, lease: Lease | None
) -> contextlib.AbstractContextManager[Any]:
    """Renew the lease while the event is handled; a lease lost to another run ends the pass
    at its next step (two runs must not write one issue)."""
    if lease is None:
        return contextlib.nullcontext()
    git = GitWorkspace(run.workspace, run.forge.git_remote())

    def lost() -> None:
        run.view.notes.append(
            "Another run took this issue's lease over (this run could not renew it in time), "
            "so this run stopped; the other run continues."
        )
        DEADLINE.expire("another run took over this issue")

    return Heartbeat(git, lease, lease_rules(run), lost)


def restore_from_lease(run: IssueRunPort, lease: Lease | None, store: PlanningHistoryStore) -> None:
    """The lease's copy of the history when it is longer than the cache's or artifact's."""
    if lease is not None:
        git = run.git or GitWorkspace(run.workspace, run.forge.git_remote())
        restore_history(git, lease, store.filepath)
    store.seal()  # restored from storage planner wrote, before any tool of this run starts


def free_lease(run: IssueRunPort, lease: Lease | None) -> None:
    """Free the lease with this run's history in it; a failure is logged (it expires)."""
    if lease is None:
        return
    directory = history_directory(run.config, run.workspace)
    expel_foreign(directory)  # the next run trusts what the lease carries
    history = PlanningHistoryStore(directory, run.forge.repository, str(run.number)).filepath
    try:
        release(GitWorkspace(run.workspace, run.forge.git_remote()), lease, history, run.identity())
    except GitError as exc:
        log.warning("could not free the issue's lease (it expires by itself): %s", exc)


def skipped_history_notes(run: IssueRunPort, result: PassResult) -> None:
    """History lines the pass skipped (cut off, or of the wrong shape) get a line in the
    tracking comment whatever the status: nothing was rewritten, the rest was used. So do
    changes rolled back where nobody could be asked (planning off): the status may say
    completed, and the work on the branch lacks them."""
    for message in result.messages:
        if SKIPPED_MARK in message or SKIPPED_MORE in message:
            run.view.notes.append(f"History: {message}")
        elif message.startswith((ROLLED_BACK, NOT_CONFIRMED)):
            run.view.notes.append(message)
