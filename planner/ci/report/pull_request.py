"""The pull (merge) request a pass opens or updates: its title, its body and when it is a draft.

Everything in it that the model wrote is made safe as in the tracking comment
(planner.ci.report.tracking.safe_result), and the body stays within GitHub's limit."""

from __future__ import annotations

from planner.ci.forges.base import PullRequestData
from planner.ci.report.tracking import (
    CHECKLIST_CHARS,
    capped_items,
    final_judgement_lines,
    safe_result,
    verification_lines,
)
from planner.outcome.result import PassResult, render_checklist
from planner.text.inert import no_closing_keywords

PULL_MARKER = "<!-- planner:pull-request -->"
OUTCOME_CHARS = 1_000
OUTCOMES_CHARS = 10_000
"""The outcomes beside the checklist (CHECKLIST_CHARS) keep the body under PULL_BODY_CHARS."""
UNPROVEN_TITLE = "[unproven] "
"""Title prefix of a pull request whose tests pass while none of them tests the issue."""
TESTS_FAILING_TITLE = "[tests failing] "
"""Title prefix of a pull request whose tests regressed or whose issue test fails (GitHub
cannot turn an open pull request back into a draft through REST, so the title says it)."""
PULL_BODY_CHARS = 65_000
"""GitHub refuses a pull request body over 65,536 characters; redaction may lengthen it a bit."""


def pull_title(result: PassResult, issue_title: str, number: int, reference: str) -> str:
    """What the title says before a person reads the body, then the issue's title."""
    title = no_closing_keywords(" ".join(issue_title.split())[:200])
    title = title or f"Issue {number}"
    return f"{title_prefix(result)}{title} ({reference})"


def pull_body(result: PassResult, reference: str, comment_url: str) -> str:
    """Outcomes and checklist, within GitHub's body limit whatever the model wrote."""
    safe = safe_result(result)
    outcomes = safe.summary.key_outcomes if safe.summary else []
    lines = [PULL_MARKER, f"Closes {reference}", ""]
    lines += outcome_lines(outcomes)
    lines += ["", render_checklist(safe, CHECKLIST_CHARS).strip(), ""]
    lines += [*verification_lines(result.verification), ""] if result.verification else []
    lines += [*final_judgement_lines(result), ""] if result.result_quality else []
    if comment_url:
        lines.append(f"Progress and history: [tracking comment]({comment_url})")
    lines.append("_Planned and implemented by planner; review before merging._")
    body = "\n".join(lines)
    return body if len(body) <= PULL_BODY_CHARS else body[: PULL_BODY_CHARS - 40] + "\n…(cut)"


def closed_pull_note(reference: str, closed: PullRequestData, branch: str) -> str:
    by = f" by @{closed.closed_by}" if closed.closed_by else ""
    return (
        f"{reference} was closed{by} without merging, so planner did not reopen it or open "
        f"another: this run's commits are on `{branch}`. Reopen {reference} to review them, "
        f"or delete the branch `{branch}` to have planner redo the work in a new one."
    )


def title_prefix(result: PassResult) -> str:
    """What the title says before a person reads the body: tests failing, or nothing proving
    the fix."""
    note = result.verification
    if note is None:
        return ""
    if note.unfinished:
        return TESTS_FAILING_TITLE
    return UNPROVEN_TITLE if note.unproven else ""


def tests_regressed(result: PassResult) -> bool:
    """Tests that passed at the baseline fail now, or the issue's own test does (the fix is
    unproven): a draft, whatever forge.draft_pr says."""
    note = result.verification
    return note is not None and (note.unfinished or bool(note.unproven))


def outcome_lines(outcomes: list[str]) -> list[str]:
    """The model's key outcomes as list items: each one line, all together OUTCOMES_CHARS."""
    return capped_items(outcomes, OUTCOME_CHARS, OUTCOMES_CHARS, "outcomes")
