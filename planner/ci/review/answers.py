"""After the pass: one reply in every review thread taken up, and resolved threads
(planner.ci.review).

A thread gets its final reply once its task is settled: what changed and in which commit, or
why nothing changed (the model's reason, the lines are gone, the suggestion could not be
applied). While its task still waits (an approval, the budget, a failed run) the thread is
told so once, and again only when what it waits for changes. A thread is resolved only when
its change is committed on the branch and the tests show nothing that passed before failing
now; nothing else is ever resolved. Every reply goes through the one sanitiser planner posts
with (planner.text.inert.neutralize): the model's summaries, test names and commands the
repository's output gives, notes, all of it inert.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from planner.ci.branch.gitops import marked_commits
from planner.ci.forges.base import MARKER_PREFIX, PullRequestData
from planner.ci.forges.threads import ReviewThread
from planner.ci.review.anchors import touches
from planner.ci.review.records import REVIEW_REPLY, replied_in_run, told_waiting, unanswered
from planner.ci.run_port import IssueRunPort
from planner.core.errors import PlannerError
from planner.core.tool_names import WRITE_TOOLS, path_argument
from planner.engine.checkpoints import CHECKPOINT
from planner.memory.history import PlanningHistoryStore
from planner.memory.state import IssueState
from planner.outcome.evidence import VerificationNote, listed
from planner.outcome.result import PassResult
from planner.text.inert import neutralize

log = logging.getLogger(__name__)

REVIEW_REPLY_MARKER = f"{MARKER_PREFIX}review-reply -->"
SUMMARY_CHARS = 1_500
WAITING = {
    "needs_human": "it waits for a person (the tracking comment on {issue} says what for)",
    "in_progress": "the run stopped before it ({reason}); `{phrase} resume` on {issue} goes on",
    "failed": "the run failed before it ({reason})",
    "completed": "the plan finished without it",
}


@dataclass(frozen=True)
class Reply:
    text: str
    final: bool
    commit: str = ""
    resolve: bool = False
    waiting: str = ""
    """What a reply that is not final says the task waits for (the pass's status)."""


@dataclass(frozen=True)
class Tests:
    passing: bool
    text: str


def answer_threads(run: IssueRunPort, result: PassResult, store: PlanningHistoryStore) -> int:
    """Reply in every thread whose record waits for an answer; a failure to post is noted in
    the tracking comment and the reply is owed to the next run. Returns the replies posted."""
    entries = store.entries()
    records = unanswered(entries)
    if not records or run.git is None:
        return 0
    state = IssueState.from_entries(entries)
    commits = marked_commits(run.git)
    tests = tests_verdict(result.verification)
    posted = resolved = 0
    for record in records:
        reply = compose(run, record, state, entries, commits, tests, result)
        thread_id = str(record["thread_id"])
        if reply is None or replied_in_run(entries, thread_id, store.run_id):
            continue
        if not reply.final and told_waiting(entries, thread_id) == reply.waiting:
            continue  # the thread was told so already: nothing changed since
        done = _post(run, record, reply)
        if done is None:
            continue
        posted += 1
        resolved += done
        store.append(
            REVIEW_REPLY,
            task_id=record.get("task_id", ""),
            thread_id=record["thread_id"],
            final=reply.final,
            commit=reply.commit,
            resolved=bool(done),
            waiting=reply.waiting,
        )
    if posted:
        run.view.notes.append(
            f"Answered {posted} review thread(s) on "
            f"{run.forge.pull_reference(int(records[0]['pull']))}; resolved {resolved}."
        )
    return posted


def _post(run: IssueRunPort, record: dict[str, Any], reply: Reply) -> bool | None:
    """Post the reply (and resolve); None when it could not be posted, else whether the
    thread was resolved."""
    pull = PullRequestData(number=int(record["pull"]))
    thread = ReviewThread(id=str(record["thread_id"]), path=str(record.get("path", "")))
    try:
        text = neutralize(reply.text)  # whatever it quotes, nothing in it links or loads
        run.forge.reply_to_thread(pull, thread, f"{REVIEW_REPLY_MARKER}\n{text}")
    except PlannerError as exc:
        log.warning("could not reply in review thread %s: %s", thread.id, exc)
        run.view.notes.append(f"Could not reply in a review thread on {thread.path}: {exc}")
        return None
    if not reply.resolve:
        return False
    try:
        run.forge.resolve_thread(pull, thread)
    except PlannerError as exc:
        log.warning("could not resolve review thread %s: %s", thread.id, exc)
        run.view.notes.append(f"Could not resolve the review thread on {thread.path}: {exc}")
        return False
    return True


def compose(
    run: IssueRunPort,
    record: dict[str, Any],
    state: IssueState,
    entries: list[dict[str, Any]],
    commits: dict[str, str],
    tests: Tests,
    result: PassResult,
) -> Reply | None:
    kind, task_id = record.get("kind"), str(record.get("task_id") or "")
    if kind == "outdated":
        return Reply(outdated_text(record), final=True)
    if kind == "not_applied":
        note = str(record.get("note") or "it could not be applied")
        return Reply(f"The suggestion was not applied: {note}. Nothing changed.", final=True)
    summary = _summary(state, task_id)
    if kind == "suggestion":
        commit = commits.get(str(record.get("marker") or ""), "")
        if not commit:
            return Reply("The suggestion's commit is not on the branch any more.", final=True)
        text = f"Applied the suggestion as written in {commit}. {tests.text}"
        return Reply(text, final=True, commit=commit, resolve=tests.passing)
    if state.plan is None or state.plan.subtask(task_id) is None:
        return Reply("The plan was made anew without this comment's task.", final=True)
    status = state.task_status.get(task_id, "pending")
    if status == "failed":
        return Reply(f"Nothing changed: {summary}", final=True)
    if status != "completed":
        return _waiting(run, result)
    commit = commits.get(task_marker(entries, task_id), "") or _last_change(run, record, state)
    if not commit and run.git is not None and _lines_changed(run, record):
        # done by another task of the review (the model found the change already there)
        commit = run.git.last_change(str(record.get("head") or ""), [str(record["path"])])
    if not commit:
        return Reply(f"No change made: {summary}", final=True)
    text = f"Changed in {commit}: {summary}\n\n{tests.text}"
    return Reply(text, final=True, commit=commit, resolve=tests.passing)


def _last_change(run: IssueRunPort, record: dict[str, Any], state: IssueState) -> str:
    """The commit holding a task's change when no checkpoint of its own does: a task a run
    left unfinished is committed with that run's work, and a later run finishes it."""
    written = set()
    for action in state.actions_by_task.get(str(record.get("task_id")), []):
        call = action.get("execution", {}).get("function_call", {})
        path = path_argument(call.get("arguments") or {})
        if action.get("ok") and call.get("name") in WRITE_TOOLS and path:
            written.add(path)
    if run.git is None:
        return ""
    return run.git.last_change(str(record.get("head") or ""), sorted(written))


def _lines_changed(run: IssueRunPort, record: dict[str, Any]) -> bool:
    """Commits since the thread was taken up changed its lines (or added lines among them)."""
    start, end = record.get("start"), record.get("end")
    if run.git is None or not isinstance(start, int) or not isinstance(end, int):
        return False
    diff = run.git.changes_since(str(record.get("head") or ""), str(record.get("path", "")))
    return touches(diff, start, end)


def _summary(state: IssueState, task_id: str) -> str:
    text = " ".join(state.task_summary.get(task_id, "").split()) or "(no summary)"
    if len(text) > SUMMARY_CHARS:
        text = text[:SUMMARY_CHARS] + "…"
    return text


def _waiting(run: IssueRunPort, result: PassResult) -> Reply:
    issue = run.forge.issue_reference(run.number)
    reason = " ".join(result.stop_reason.split())[:300] or "no reason given"
    why = WAITING.get(result.status, WAITING["failed"]).format(
        issue=issue, reason=reason, phrase=run.config.forge.trigger_phrase
    )
    return Reply(f"Not done yet: {why}.", final=False, waiting=result.status)


def task_marker(entries: list[dict[str, Any]], task_id: str) -> str:
    """The marker of the checkpoint made right after the task was last completed: the commit
    carrying that marker holds the task's change (none carries it when it changed nothing)."""
    completed = None
    for index, entry in enumerate(entries):
        if entry.get("type") == "task" and entry.get("task_id") == task_id:
            completed = index if entry.get("status") == "completed" else None
    if completed is None:
        return ""
    for entry in entries[completed + 1 :]:
        if entry.get("type") == CHECKPOINT:
            return str(entry.get("marker") or "")
    return ""


def outdated_text(record: dict[str, Any]) -> str:
    line = record.get("original_line")
    where = f" (line {line} of {record.get('path')})" if line else ""
    if record.get("note"):
        return (
            f"The suggestion was not applied: {record['note']}{where}. Nothing changed. "
            "Suggest again on the current lines to ask again."
        )
    return (
        f"The lines this comment was made on{where} have changed since, and planner could not "
        "find them in the current version, so it did not act on it. Comment on the current "
        "lines to ask again."
    )


def tests_verdict(note: VerificationNote | None) -> Tests:
    """Whether the tests pass as far as this change goes, in words for the thread."""
    latest = note.latest if note is not None else None
    if note is None or latest is None or not latest.ran:
        why = latest.reason if latest is not None and latest.reason else "no test command"
        return Tests(False, f"The tests did not run ({why}), so the thread stays open.")
    counts = f"`{note.command}`: {latest.counts()}"
    if note.new_failures or note.issue_failures:
        failing = listed([*note.new_failures, *note.issue_failures])
        return Tests(False, f"Tests fail ({failing}; {counts}), so the thread stays open.")
    return Tests(True, f"No test that passed before fails ({counts}), so the thread is resolved.")
