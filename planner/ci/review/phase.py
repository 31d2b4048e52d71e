"""ReviewPhase: a review task's prompt carries its thread (planner.ci.review).

The CI job adds it to every pass it runs (PassSetup.phases); it reads only the history, so a
review task resumed by a later run (after an approval, past a budget) still gets its thread.
The thread is untrusted data, fenced like the issue's own text.
"""

from __future__ import annotations

from typing import Any

from planner.ci.review.records import record_for_task
from planner.engine.context import PassContext
from planner.engine.phase import Phase, Request
from planner.text.issue import fence_untrusted, sanitize_untrusted
from planner.text.prompts import render

AUTHOR_CHARS = 100


class ReviewPhase(Phase):
    name = "review"

    def addendum(self, run: PassContext, request: Request) -> str:
        if request != "execute":
            return ""
        entries = run.store.entries()
        task_id = current_task(entries)
        record = record_for_task(entries, task_id) if task_id else None
        if record is None or record.get("kind") != "task":
            return ""
        return render("review_thread.md.j2", **thread_view(record))


def current_task(entries: list[dict[str, Any]]) -> str:
    """The task the pass is working on: the latest one marked in progress."""
    for entry in reversed(entries):
        if entry.get("type") == "task":
            return str(entry.get("task_id")) if entry.get("status") == "in_progress" else ""
    return ""


def thread_view(record: dict[str, Any]) -> dict[str, Any]:
    """The record as the prompt shows it, every text from the review sanitised."""
    return {
        "task_id": record.get("task_id", ""),
        "path": sanitize_untrusted(str(record.get("path", "")), 1_000),
        "where": lines_now(record),
        "comments": [
            {
                "author": sanitize_untrusted(str(c.get("author", "")), AUTHOR_CHARS),
                "own": bool(c.get("own")),
                "body": sanitize_untrusted(str(c.get("body", ""))),
            }
            for c in record.get("comments") or []
        ],
        "hunk": fence_untrusted(str(record.get("hunk") or "")),
        "context": fence_untrusted(str(record.get("context") or "")),
    }


def lines_now(record: dict[str, Any]) -> str:
    """Where the commented lines are, in words for the model."""
    start, end = record.get("start"), record.get("end")
    if start is None:
        if record.get("side") == "old":
            return "(on lines the change removed)"
        return "(on the whole file)"
    span = f"line {start}" if start == end else f"lines {start}-{end}"
    if record.get("moved"):
        return f"({span} now: the lines moved since the comment was made)"
    return f"({span})"
