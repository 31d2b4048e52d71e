"""The review's history entries: which thread each review task answers, and each reply.

review_thread  a thread taken up: its task (or why it has none), where its lines are, what
               the model may read of it; a newer entry for the same thread replaces it
review_reply   a reply posted in the thread; `final` when the thread's task is settled
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from planner.memory.entries import EntryBase, register_entry_model

REVIEW_THREAD = "review_thread"
REVIEW_REPLY = "review_reply"
ThreadKind = Literal["task", "suggestion", "outdated", "not_applied"]
"""task: the model acts on it; suggestion: applied as written; outdated: its lines are gone;
not_applied: a suggestion that could not be applied (the reason is in `note`)."""


class CommentShape(BaseModel):
    """One comment of a recorded thread."""

    model_config = ConfigDict(extra="allow", strict=True)

    author: str = ""
    body: str = ""
    created_at: str = ""
    own: bool = False


class ReviewThreadEntry(EntryBase):
    task_id: str = ""
    thread_id: str
    pull: int
    kind: str = "task"
    path: str = ""
    side: str = "new"
    start: int | None = None
    end: int | None = None
    moved: bool = False
    original_line: int | None = None
    reviewer: str = ""
    latest_comment: str = ""
    comments: list[CommentShape] = Field(default_factory=list)
    hunk: str = ""
    context: str = ""
    url: str = ""
    marker: str = ""
    note: str = ""
    head: str = ""
    """The branch's head when the thread was taken up: the task's change comes after it."""


class ReviewReplyEntry(EntryBase):
    task_id: str = ""
    thread_id: str
    final: bool = False
    commit: str = ""
    resolved: bool = False
    waiting: str = ""
    """A reply that is not final: what the task waited for (the pass's status)."""


register_entry_model(REVIEW_THREAD, ReviewThreadEntry)
register_entry_model(REVIEW_REPLY, ReviewReplyEntry)


def thread_records(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The latest review_thread entry of every thread, by thread id, oldest thread first."""
    found: dict[str, dict[str, Any]] = {}
    for entry in entries:
        if entry.get("type") == REVIEW_THREAD:
            found.pop(str(entry["thread_id"]), None)
            found[str(entry["thread_id"])] = entry
    return found


def settled(entries: list[dict[str, Any]]) -> set[str]:
    """Threads whose latest record has had its final reply."""
    done: set[str] = set()
    for entry in entries:
        if entry.get("type") == REVIEW_THREAD:
            done.discard(str(entry["thread_id"]))
        elif entry.get("type") == REVIEW_REPLY and entry.get("final"):
            done.add(str(entry["thread_id"]))
    return done


def unanswered(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records of threads still waiting for their final reply."""
    done = settled(entries)
    return [record for key, record in thread_records(entries).items() if key not in done]


def replied_in_run(entries: list[dict[str, Any]], thread_id: str, run_id: str) -> bool:
    return any(
        e.get("type") == REVIEW_REPLY and e.get("thread_id") == thread_id and e["run_id"] == run_id
        for e in entries
    )


def told_waiting(entries: list[dict[str, Any]], thread_id: str) -> str | None:
    """What the thread's last reply since its latest record said the task waits for; None
    when it got none since (a new record, a new comment, is news worth a reply)."""
    told: str | None = None
    for entry in entries:
        if entry.get("thread_id") != thread_id:
            continue
        if entry.get("type") == REVIEW_THREAD:
            told = None
        elif entry.get("type") == REVIEW_REPLY:
            told = None if entry.get("final") else str(entry.get("waiting") or "")
    return told


def record_for_task(entries: list[dict[str, Any]], task_id: str) -> dict[str, Any] | None:
    """The latest record of the thread a review task answers."""
    found = [r for r in thread_records(entries).values() if r.get("task_id") == task_id]
    return found[-1] if found else None
