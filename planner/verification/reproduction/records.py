"""The issue's own test as the history holds it: the one placed for each run, the one kept in
the change, and its failing run on the code before the change (the reproduction a task's
prompt starts from)."""

from __future__ import annotations

from typing import Any

from planner.outcome.evidence import ISSUE_TEST, VERIFICATION
from planner.text.issue import IssueContext
from planner.text.prompts import render
from planner.verification.reproduction.issue_test import IssueTest

REPRODUCTION_LINES = 60
"""Lines of the issue's test shown in a task's prompt before the first change."""
REPRODUCTION_TAIL = 1_200
"""Characters of its failing output shown with it."""


def latest_issue_test(entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The latest `issue_test` entry (None before one was recorded)."""
    return next((entry for entry in reversed(entries) if entry.get("type") == ISSUE_TEST), None)


def active_test(entries: list[dict[str, Any]]) -> IssueTest | None:
    """The issue's test while it is placed for each run (written, not yet dropped or kept)."""
    latest = latest_issue_test(entries)
    if latest is None or latest.get("status") != "active":
        return None
    try:
        return IssueTest.model_validate(latest)
    except ValueError:
        return None


def kept_test(entries: list[dict[str, Any]]) -> str:
    """The issue's test written into the change for good ("" when there is none)."""
    latest = latest_issue_test(entries)
    if latest is None or latest.get("status") != "kept":
        return ""
    return str(latest.get("path") or "")


def reactivation(entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The entry that places the kept issue's test for each run again, after a reset took
    the change it was kept into away (None: it is placed already, or none was kept)."""
    if active_test(entries) is not None or not kept_test(entries):
        return None
    latest = next(
        (e for e in reversed(entries) if e.get("type") == ISSUE_TEST and e.get("content")),
        None,
    )
    if latest is None:
        return None
    return {"status": "active", "path": latest.get("path"), "content": latest["content"]}


def failing_before(entries: list[dict[str, Any]]) -> tuple[IssueTest, dict[str, Any]] | None:
    """The active issue test and its failing run on the code before the change, while no
    run after a change was recorded (None otherwise)."""
    test = active_test(entries)
    runs = [entry for entry in entries if entry.get("type") == VERIFICATION]
    if test is None or any(entry.get("stage") not in ("baseline", "issue") for entry in runs):
        return None
    before = next((entry for entry in reversed(runs) if entry.get("stage") == "issue"), None)
    if before is None or before.get("status") != "failed":
        return None
    return test, before


def issue_test_failing(entries: list[dict[str, Any]]) -> str:
    """Before any change was tested: the issue's test and how it fails on the code as it is,
    for the task's prompt (the reproduction Agentless starts from). Shown its test failing
    only after a first edit, the 1.5B first changed what the plan said, not what the issue
    showed."""
    failing = failing_before(entries)
    if failing is None:
        return ""
    test, before = failing
    lines = test.content.splitlines()
    content = "\n".join(lines[:REPRODUCTION_LINES])
    if len(lines) > REPRODUCTION_LINES:
        content += f"\n# … {len(lines) - REPRODUCTION_LINES} more lines"
    tail = str(before.get("tail") or "")[-REPRODUCTION_TAIL:]
    return render("issue_test_failing.md.j2", path=test.path, content=content, tail=tail)


def stated(issue: IssueContext, example: str = "") -> str:
    """The text whose values the issue's test may use: the issue (its comments and the run's
    instruction included) and the repository test shown as the example."""
    comments = [comment.body for comment in issue.comments]
    return "\n".join([issue.title, issue.body, *comments, issue.instruction, example])
