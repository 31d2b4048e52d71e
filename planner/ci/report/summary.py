"""The job summary: status, the plan's checklist, usage and cost, links and history problems.

Written to $GITHUB_STEP_SUMMARY (markdown on the run's page) or printed to a GitLab job's log.
The checklist is derived from the issue's history file, the same source the tracking comment's
checklist comes from; model-written text is neutralised as in the comment.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from planner.ci.outcome import CiOutcome
from planner.ci.report.costs import cost_report, last_run_id, render_usage_section
from planner.ci.report.tracking import CHECKLIST_CHARS, safe_result, verification_lines
from planner.config import BudgetConfig, ModelPrice
from planner.memory.history import PlanningHistoryStore
from planner.outcome.evidence import verification_note
from planner.outcome.result import PassStatus, render_checklist
from planner.run.history_view import history_plan
from planner.text.inert import neutralize

TITLES = {
    "completed": "✅ completed",
    "in_progress": "⏸️ in progress (comment /planner to continue)",
    "needs_human": "🙋 needs your input",
    "stopped": "⏹️ stopped",
    "skipped": "⏭️ skipped",
    "failed": "❌ failed",
}

PASS_STATUS: dict[str, PassStatus] = {
    "completed": "completed",
    "needs_human": "needs_human",
    "failed": "failed",
}


@dataclass
class SummaryFacts:
    """What the summary shows besides the outcome itself."""

    issue_url: str = ""
    model: str = ""
    profile: str = ""
    """The profile in effect (`profile`, as auto picked it)."""
    profile_settings: list[str] = field(default_factory=list)
    """What the profile set (`planning.decompose false`, ...), where no source set the key."""
    history_backend: str = ""
    history: PlanningHistoryStore | None = None
    workspace: Path | None = None
    problems: list[str] = field(default_factory=list)
    prices: Mapping[str, ModelPrice] = field(default_factory=dict)
    """llm.prices: the usage section shows money for the models it knows."""
    budget: BudgetConfig = field(default_factory=BudgetConfig)
    """The pass's budget, for what is left of it."""


def render_summary(outcome: CiOutcome, facts: SummaryFacts) -> str:
    number = f" · issue #{outcome.issue_number}" if outcome.issue_number else ""
    lines = [f"### planner: {TITLES.get(outcome.status, outcome.status)}{number}", ""]
    if outcome.reason:
        lines += [neutralize(outcome.reason), ""]
    lines += _facts_table(outcome, facts)
    tests = _test_lines(facts.history)
    if tests:
        lines += ["", *tests]
    usage = usage_section(facts, outcome)
    if usage:
        lines += ["", *usage]
    checklist = checklist_from_history(facts.history, outcome)
    if checklist:
        lines += ["", checklist.strip()]
    if facts.problems:
        lines += ["", "**Problems reading the history**", ""]
        lines += [f"- {neutralize(problem)}" for problem in facts.problems]
    return "\n".join(lines) + "\n"


def _test_lines(history: PlanningHistoryStore | None) -> list[str]:
    """The tests' result as the history records it ([] when verification never ran)."""
    if history is None or not history.filepath.is_file():
        return []
    return verification_lines(verification_note(history.entries()))


def _facts_table(outcome: CiOutcome, facts: SummaryFacts) -> list[str]:
    rows = [
        ("Issue", _link(f"#{outcome.issue_number}", facts.issue_url)),
        ("Pull request", _link(_pull_label(outcome.pr_url), outcome.pr_url)),
        ("Tracking comment", _link("comment", outcome.comment_url)),
        ("Branch", f"`{outcome.branch}`" if outcome.branch else ""),
        ("Commit", f"`{outcome.commit[:12]}`" if outcome.commit else ""),
        ("Usage", _usage(outcome, facts)),
        ("Profile", _profile(facts)),
        ("History", _history(outcome, facts)),
    ]
    kept = [(name, value) for name, value in rows if value]
    if not kept:
        return []
    return ["| | |", "| --- | --- |", *[f"| {name} | {value} |" for name, value in kept]]


def usage_section(facts: SummaryFacts, outcome: CiOutcome) -> list[str]:
    """Calls, tokens and cost by call kind: this run's pass and the issue so far."""
    history = facts.history
    if outcome.status == "skipped" or history is None or not history.filepath.is_file():
        return []
    entries = history.entries()
    report = cost_report(entries, last_run_id(entries), facts.prices, facts.budget)
    return render_usage_section(report)


def _pull_label(url: str) -> str:
    """#7 for a GitHub pull request, !7 for a GitLab merge request."""
    number = url.rstrip("/").rsplit("/", 1)[-1]
    return f"!{number}" if "/merge_requests/" in url else f"#{number}"


def _link(text: str, url: str) -> str:
    return f"[{text}]({url})" if url else ""


def _usage(outcome: CiOutcome, facts: SummaryFacts) -> str:
    if not outcome.model_calls:
        return ""
    calls = f"{outcome.model_calls} model call(s), {outcome.tokens_used} tokens"
    named = ", ".join(filter(None, [facts.model, facts.profile and f"profile {facts.profile}"]))
    return f"{calls} ({named})" if named else calls


def _profile(facts: SummaryFacts) -> str:
    """What the profile in effect changed, key by key ("" for standard)."""
    if not facts.profile_settings:
        return ""
    return f"{facts.profile} set " + ", ".join(f"`{item}`" for item in facts.profile_settings)


def _history(outcome: CiOutcome, facts: SummaryFacts) -> str:
    history_file = facts.history.filepath if facts.history else None
    path = relative_history_path(history_file, facts.workspace)
    if not path:
        return ""
    return f"`{path}` ({facts.history_backend})" if facts.history_backend else f"`{path}`"


def relative_history_path(history_file: Path | None, workspace: Path | None) -> str:
    """The history file relative to the workspace when inside it; '' when there is none."""
    if history_file is None or not history_file.is_file():
        return ""
    if workspace is not None and history_file.resolve().is_relative_to(workspace.resolve()):
        return history_file.resolve().relative_to(workspace.resolve()).as_posix()
    return str(history_file)


def open_history(
    directory: Path, repository: str, issue: int | None
) -> PlanningHistoryStore | None:
    """The issue's history (None when there is no history directory)."""
    if issue is None or not directory.is_dir():
        return None
    return PlanningHistoryStore(directory, repository, str(issue))


def checklist_from_history(history: PlanningHistoryStore | None, outcome: CiOutcome) -> str:
    """The plan's checklist as the history records it ('' without a plan): the tracking
    comment's view (planner.run.history_view), so a task whose change waits is not ticked."""
    if history is None:
        return ""
    result = history_plan(history, PASS_STATUS.get(outcome.status, "in_progress"))
    if result is None:
        return ""
    return render_checklist(safe_result(result), CHECKLIST_CHARS)
