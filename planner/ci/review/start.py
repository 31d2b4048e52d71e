"""The pass's set-up step: the review's open threads become work (planner.ci.review).

It runs once the pass has opened its history and kept it out of git (PassSetup.set_up), before
any tool starts, so a suggestion's commit goes through the same commit rules as the pass's own
work and never holds the history, wherever it is kept. Each open thread
(planner.ci.review.threads) is looked at in the branch as it was fetched:

- a ```suggestion block from a person with write access is applied exactly as written and
  committed on its own, before any model call (it is that person's approval of exactly that
  change, and of nothing else: the model's own changes still pass the approval gate);
- a comment whose lines are gone from the file is reported as outdated, and so is a suggestion
  whose lines no longer read, where the forge tracks them, as the reviewer saw them;
- every other thread becomes a task of a plan revision, "Revised #N: review by @reviewer", in
  front of whatever the plan still has to do.

Every thread taken up is recorded (records.REVIEW_THREAD) before the pass starts, so its reply
is owed whatever happens to the pass, and a thread already waiting for its task is not taken
twice.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.ci.branch.gitops import publish
from planner.ci.durability.durable import conflict_note, side_branch
from planner.ci.events.triggers import Trigger
from planner.ci.forges.threads import ReviewThread
from planner.ci.review.anchors import (
    Anchor,
    Suggestion,
    apply_suggestion,
    commented_lines,
    context_around,
    hunk_ending_at,
    locate,
    suggestion_range,
    suggestions_in,
    text_lines,
)
from planner.ci.review.records import REVIEW_THREAD, ThreadKind, unanswered
from planner.ci.review.threads import OpenThread, Permissions, open_threads
from planner.ci.run_port import IssueRunPort
from planner.engine.checkpoints import MARKER_TRAILER, record_checkpoint
from planner.memory.history import PlanningHistoryStore
from planner.memory.state import IssueState
from planner.plan.documents import (
    ActionPlan,
    GoalUnderstanding,
    Plan,
    PlannedAction,
    Subtask,
    TaskDecomposition,
)
from planner.text.inert import no_closing_keywords
from planner.text.issue import truncate_bytes
from planner.tools.files.paths import read_in_tree

log = logging.getLogger(__name__)

TASK_PREFIX = "review_"
COMMENT_BYTES = 8_000
"""Of each comment, what the history keeps (and the model reads)."""
HUNK_BYTES = 8_000
SUGGESTION_OUTDATED = (
    "a suggestion is applied only to the lines it was made on, as the reviewer saw them, and "
    "those lines have changed or moved since"
)


@dataclass
class ThreadWork:
    """One open thread as found in the branch."""

    open: OpenThread
    content: bytes | None
    """The file as the branch has it now (None: gone, or not a file planner may touch)."""
    anchor: Anchor | None
    outdated: bool
    hunk: str
    suggestion: Suggestion | None
    span: tuple[int, int] | None = None
    """The lines the suggestion replaces, exactly as the reviewer saw them (1-based)."""
    kind: ThreadKind = "task"
    task_id: str = ""
    marker: str = ""
    note: str = ""
    context: str = ""

    @property
    def thread(self) -> ReviewThread:
        return self.open.thread


def start_review(run: IssueRunPort, store: PlanningHistoryStore) -> int:
    """Take up the open threads of the pull request a review (or a bare `/planner` on it)
    asked about: suggestions applied and committed, the rest tasks of a revised plan. Returns
    how many threads were taken up."""
    pull, git = run.target.pull, run.git
    if pull is None or git is None or not takes_up_threads(run.trigger):
        return 0
    entries = store.entries()
    # a thread whose task still waits is not taken twice (its owed reply comes when it is done)
    waiting = {str(r["thread_id"]): r for r in unanswered(entries) if r.get("kind") == "task"}
    permissions = Permissions(run.forge, run.config.forge)
    found = open_threads(run.forge.review_threads(pull), permissions)
    refresh = [t for t in found if t.thread.id in waiting]
    for item in refresh:  # its task waits: it reads the thread's newest comments when it runs
        _refresh(store, waiting[item.thread.id], item)
    work = [survey(run, item) for item in found if item.thread.id not in waiting]
    if not work:
        return len(refresh)
    _number_tasks(work, IssueState.from_entries(entries))
    applied = _apply_suggestions(run, work)
    if applied:  # the other threads' lines are looked for in the tree the suggestions left
        work = [_resurvey(run, item) if item.kind == "task" else item for item in work]
    _record(run, store, work, pull.number)
    if applied:
        record_checkpoint(store, git.head(), applied[-1])
    return len(work) + len(refresh)


def takes_up_threads(trigger: Trigger) -> bool:
    """A review, or a bare `/planner` (or `/planner resume`) on the pull request's conversation
    (on GitLab also a review's summary note): its open threads are the work."""
    if trigger.command not in ("run", "resume"):
        return False
    return trigger.kind == "review" or (trigger.kind == "pr_comment" and not trigger.instruction)


# -- looking at each thread ----------------------------------------------------------------------


def survey(run: IssueRunPort, item: OpenThread) -> ThreadWork:
    thread = item.thread
    git = run.git
    assert git is not None
    content = workspace_file(run.workspace, thread.path)
    current = text_lines(content)
    original = text_lines(git.read_at(thread.original_commit, thread.path))
    before = commented_lines(thread, original)
    on_lines = thread.side == "new" and (thread.line or thread.original_line) is not None
    anchor = locate(thread, current, before) if on_lines and current is not None else None
    hunk = thread.diff_hunk
    if not hunk and thread.original_line:
        hunk = hunk_ending_at(
            git.diff_of(thread.original_commit, thread.path), thread.original_line
        )
    found = suggestions_in(item.latest.body)
    suggestion = found[0] if len(found) == 1 else None
    if suggestion is not None and run.forge.platform != "gitlab" and suggestion.above is not None:
        suggestion = None  # `-A+B` is GitLab's: on GitHub the block is no suggestion
    span = _suggestion_span(run, thread, suggestion, current, original) if anchor else None
    work = ThreadWork(
        open=item,
        content=content,
        anchor=anchor,
        outdated=on_lines and anchor is None,
        hunk=truncate_bytes(hunk, HUNK_BYTES),
        suggestion=suggestion if span is not None else None,
        span=span,
    )
    work.context = context_around(current, anchor) if current and anchor else ""
    if suggestion is not None and span is None:
        work.outdated = True  # its lines moved or changed since: applied nowhere else
        work.note = SUGGESTION_OUTDATED
    work.kind = "outdated" if work.outdated else "suggestion" if work.suggestion else "task"
    return work


def _suggestion_span(
    run: IssueRunPort,
    thread: ReviewThread,
    suggestion: Suggestion | None,
    current: list[str] | None,
    original: list[str] | None,
) -> tuple[int, int] | None:
    if suggestion is None or current is None:
        return None
    gitlab = run.forge.platform == "gitlab"
    return suggestion_range(thread, suggestion, current, original, gitlab)


def _resurvey(run: IssueRunPort, item: ThreadWork) -> ThreadWork:
    again = survey(run, item.open)
    again.suggestion, again.kind = None, "outdated" if again.outdated else "task"
    again.task_id = item.task_id if again.kind == "task" else ""
    return again


def workspace_file(root: Path, path: str) -> bytes | None:
    """The file at `path` in the checkout; None when it is missing or lies outside it (a
    link, `..`, `.git`): a path from a review comment is untrusted."""
    parts = Path(path).parts
    if not path or Path(path).is_absolute() or ".." in parts or ".git" in parts:
        return None
    return read_in_tree(root, path)


def _number_tasks(work: list[ThreadWork], state: IssueState) -> None:
    existing = state.plan.task_decomposition.subtasks if state.plan else []
    numbers = [
        int(task.id[len(TASK_PREFIX) :])
        for task in existing
        if task.id.startswith(TASK_PREFIX) and task.id[len(TASK_PREFIX) :].isdigit()
    ]
    next_number = max(numbers, default=0) + 1
    for item in work:
        if item.kind in ("task", "suggestion"):
            item.task_id = f"{TASK_PREFIX}{next_number}"
            next_number += 1


# -- suggestions ---------------------------------------------------------------------------------


def _apply_suggestions(run: IssueRunPort, work: list[ThreadWork]) -> list[str]:
    """Commit each suggestion on its own; publish them. Returns the markers of those applied."""
    applied = []
    suggestions = [item for item in work if item.kind == "suggestion" and item.span]
    # from the bottom of each file up: a suggestion applied never moves another's lines
    for item in sorted(suggestions, key=lambda item: (item.thread.path, -_first(item))):
        if item.kind == "suggestion":
            if _apply(run, item):
                applied.append(item.marker)
            else:
                item.kind = "not_applied"
    if not applied:
        return []
    git = run.git
    assert git is not None
    published = publish(git, run.identity(), side_branch(run))
    if published.how == "conflict":
        note = conflict_note(run, published)
        for item in work:
            if item.marker:
                item.kind, item.note = "not_applied", note
        return []
    return applied


def _first(item: ThreadWork) -> int:
    return item.span[0] if item.span else 0


def _apply(run: IssueRunPort, item: ThreadWork) -> bool:
    """Write the suggestion and commit it through the run's commit rules. The history is kept
    out of git by then (the pass's set-up), so the rules judge this file alone: when they
    refuse it, nothing of it is committed and the file is put back."""
    assert item.span is not None and item.suggestion is not None and run.git is not None
    first, last = item.span
    content = workspace_file(run.workspace, item.thread.path)  # as other suggestions left it
    current = text_lines(content) or []
    seen = (text_lines(item.content) or [])[first - 1 : last]
    if content is None or current[first - 1 : last] != seen:
        item.note = f"another suggestion changed the lines it replaces ({first}-{last})"
        return False
    changed = apply_suggestion(content, first, last, item.suggestion)
    if changed is None:
        item.note = (
            f"the lines it replaces ({first}-{last}) are not all in {item.thread.path} as it is now"
        )
        return False
    path = run.workspace / item.thread.path
    path.write_bytes(changed)
    item.marker = f"{run.run_id}.{item.task_id}"
    commit = run.git.commit_all(_suggestion_message(run, item), run.identity())
    refused = [r.describe() for r in run.git.refused if r.path == item.thread.path]
    if commit is None or refused:
        path.write_bytes(content)  # nothing of it stays in the tree
        item.note = "; ".join(refused) or "the file already reads as suggested"
        item.marker = ""
        return False
    return True


def _suggestion_message(run: IssueRunPort, item: ThreadWork) -> str:
    reviewer = item.open.reviewer
    title = f"planner: apply @{reviewer}'s suggestion to {item.thread.path}"
    lines = [no_closing_keywords(title), ""]
    lines += [f"Applied as written from the review thread {item.thread.url}".rstrip(), ""]
    lines.append(f"{MARKER_TRAILER}: {item.marker}")
    actor = run.trigger.actor
    if actor.login == reviewer and actor.email and not actor.is_bot:
        lines.append(f"Co-authored-by: {actor.login} <{actor.email}>")
    return run.forge.redact("\n".join(lines)) + "\n"


# -- the revision and the records ----------------------------------------------------------------


def _record(
    run: IssueRunPort, store: PlanningHistoryStore, work: list[ThreadWork], pull: int
) -> None:
    tasks = [item for item in work if item.task_id and item.kind in ("task", "suggestion")]
    if tasks:
        _revise(run, store, tasks, pull)
    head = run.git.head() if run.git is not None else ""
    for item in work:
        store.append(REVIEW_THREAD, **_thread_fields(item, pull, head))
    for item in tasks:
        if item.kind == "suggestion":
            summary = f"applied @{item.open.reviewer}'s suggestion as written"
            store.append("task", task_id=item.task_id, status="completed", summary=summary)
    reviewers = ", ".join(sorted({f"@{item.open.reviewer}" for item in work}))
    store.append("human_input", text=f"review by {reviewers}: {len(work)} open thread(s)")


def _revise(
    run: IssueRunPort, store: PlanningHistoryStore, tasks: list[ThreadWork], pull: int
) -> None:
    before = IssueState.from_entries(store.entries())
    subtasks = [_subtask(item) for item in tasks]
    actions = [_action(item) for item in tasks]
    reviewers = ", ".join(sorted({f"@{item.open.reviewer}" for item in tasks}))
    reason = f"review by {reviewers}"
    plan = _with_tasks(before.plan, subtasks, actions, run.forge.pull_reference(pull))
    if before.plan is None:
        store.save_plan(plan.model_dump())
        return
    changes = [
        {"type": "add_task", "details": f"{item.task_id}: review thread on {item.thread.path}"}
        for item in tasks
    ]
    store.save_revision(
        plan.model_dump(), {"plan_revision": {"reason": reason, "changes": changes}}
    )
    for task_id, status in before.task_status.items():
        if status == "failed" and plan.subtask(task_id) is not None:  # not redone unasked
            summary = before.task_summary.get(task_id, "")
            store.append("task", task_id=task_id, status="failed", summary=summary)


def _with_tasks(
    plan: Plan | None, subtasks: list[Subtask], actions: list[PlannedAction], pull: str
) -> Plan:
    ids = [task.id for task in subtasks]
    if plan is None:
        return Plan(
            goal_understanding=GoalUnderstanding(main_objective=f"Address the review of {pull}"),
            task_decomposition=TaskDecomposition(
                reasoning="One task per open review thread.", subtasks=subtasks
            ),
            action_plan=ActionPlan(execution_order=ids, actions=actions),
        )
    revised = plan.model_copy(deep=True)
    revised.task_decomposition.subtasks = [*subtasks, *revised.task_decomposition.subtasks]
    revised.action_plan.execution_order = [*ids, *revised.action_plan.execution_order]
    revised.action_plan.actions = [*actions, *revised.action_plan.actions]
    return revised


def _subtask(item: ThreadWork) -> Subtask:
    reviewer = item.open.reviewer
    if item.kind == "suggestion":
        description = f"Apply @{reviewer}'s suggestion to {item.thread.path} {where(item)}"
    else:
        description = (
            f"Make the change @{reviewer}'s review comment on {item.thread.path} {where(item)} "
            "asks for"
        )
    return Subtask(
        id=item.task_id,
        description=description,
        estimated_complexity="low",
        required_tools=["edit_file"],
    )


def _action(item: ThreadWork) -> PlannedAction:
    return PlannedAction(
        task_id=item.task_id,
        tool="edit_file",
        purpose=f"change {item.thread.path} as the review comment asks",
        expected_outcome="the review comment is addressed, or the reason it should not be",
    )


def where(item: ThreadWork) -> str:
    """`line 3`, `lines 3-5`, `(lines the change removed)` or `(the whole file)`."""
    anchor = item.anchor
    if anchor is not None:
        return (
            f"line {anchor.start}"
            if anchor.start == anchor.end
            else (f"lines {anchor.start}-{anchor.end}")
        )
    if item.thread.side == "old":
        return "(lines the change removed)"
    line = item.thread.original_line
    return f"(line {line} when it was made)" if line else "(the whole file)"


def _thread_fields(item: ThreadWork, pull: int, head: str) -> dict[str, Any]:
    thread, anchor = item.thread, item.anchor
    return {
        "task_id": item.task_id,
        "thread_id": thread.id,
        "pull": pull,
        "kind": item.kind,
        "path": thread.path,
        "side": thread.side,
        "start": anchor.start if anchor else None,
        "end": anchor.end if anchor else None,
        "moved": bool(anchor and anchor.moved),
        "original_line": thread.original_line,
        "reviewer": item.open.reviewer,
        "latest_comment": item.open.latest.id,
        "comments": comment_fields(item.open),
        "hunk": item.hunk,
        "context": item.context,
        "url": thread.url,
        "marker": item.marker,
        "note": item.note,
        "head": head,
    }


def comment_fields(item: OpenThread) -> list[dict[str, Any]]:
    return [
        {
            "author": comment.author,
            "body": truncate_bytes(comment.body, COMMENT_BYTES),
            "created_at": comment.created_at,
            "own": comment.trusted,
        }
        for comment in item.comments
    ]


def _refresh(store: PlanningHistoryStore, record: dict[str, Any], item: OpenThread) -> None:
    """A thread whose task still waits got a new comment: its task reads the thread as it
    is now."""
    if record.get("latest_comment") == item.latest.id:
        return
    fields = {k: v for k, v in record.items() if k not in ("type", "timestamp", "repository")}
    fields = {k: v for k, v in fields.items() if k not in ("issue_id", "run_id")}
    fields.update(
        latest_comment=item.latest.id, comments=comment_fields(item), reviewer=item.reviewer
    )
    store.append(REVIEW_THREAD, **fields)
