"""The issue's own test as the history holds it: the one placed for each run, the one kept in
the change, and its failing run on the code before the change (the reproduction a task's
prompt starts from)."""

from __future__ import annotations

from typing import Any

from planner.outcome.evidence import ISSUE_TEST, REPRODUCTION, VERIFICATION
from planner.text.issue import IssueContext, sanitize_untrusted
from planner.text.prompts import render
from planner.verification.reproduction.existing import SOURCE_BYTES, bounded_tail
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


def reproduction(entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The latest `issue_reproduction` entry: which tests failing before the change reproduce
    the issue (None before one was recorded)."""
    return next((entry for entry in reversed(entries) if entry.get("type") == REPRODUCTION), None)


def reproducing_tests(entries: list[dict[str, Any]]) -> list[str]:
    """The node ids of the repository's tests that reproduce the issue ([] when none do)."""
    entry = reproduction(entries)
    if entry is None or entry.get("status") != "found":
        return []
    return [test for test, _, _ in _used(entry)]


def _used(entry: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(node id, source, failing output) of each reproducing test the entry holds, read
    defensively: a damaged item is skipped, every text bounded again."""
    checked = entry.get("checked")
    found: list[tuple[str, str, str]] = []
    for item in checked if isinstance(checked, list) else []:
        if not (isinstance(item, dict) and item.get("used") is True):
            continue
        test = item.get("test")
        if not isinstance(test, str) or "::" not in test or test.startswith("-"):
            continue
        source = sanitize_untrusted(str(item.get("source") or ""), SOURCE_BYTES)
        found.append((test, source, bounded_tail(str(item.get("tail") or ""))))
    return found


def reproduction_before(entries: list[dict[str, Any]]) -> tuple[str, str] | None:
    """Before any change was tested: the reproducing tests' source (each under a comment
    naming it, at most REPRODUCTION_LINES lines) and their failing output (None: there are
    none, or a run after a change was recorded)."""
    entry = reproduction(entries)
    runs = [e for e in entries if e.get("type") == VERIFICATION]
    if entry is None or any(e.get("stage") not in ("baseline", "issue") for e in runs):
        return None
    used = _used(entry) if entry.get("status") == "found" else []
    if not used:
        return None
    parts = [
        f"# {test}: a test of the repository, failing before the change\n{source}"
        for test, source, _ in used
    ]
    lines = "\n\n".join(parts).splitlines()
    content = "\n".join(lines[:REPRODUCTION_LINES])
    if len(lines) > REPRODUCTION_LINES:
        content += f"\n# … {len(lines) - REPRODUCTION_LINES} more lines"
    tail = "\n\n".join(tail for _, _, tail in used)[-REPRODUCTION_TAIL:]
    return content, tail


def reproduction_failing(entries: list[dict[str, Any]]) -> str:
    """The task prompt's reproduction when the issue's own test is not there: the
    repository's tests that fail the way the issue reports, and how ("" when none do)."""
    before = reproduction_before(entries)
    if before is None:
        return ""
    content, tail = before
    return render(
        "reproduction_failing.md.j2",
        tests=sanitize_untrusted(", ".join(reproducing_tests(entries)[:5]), 2_000),
        content=content,
        tail=tail,
    )
