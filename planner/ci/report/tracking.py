"""The tracking comment: one per issue, written by code (never by the model), edited in place.

It shows the state of the current run, why it stopped when a person is needed, the plan as a
checklist (planner.outcome.result.render_checklist) and, folded under it, as a Mermaid graph
(planner.ci.report.plan_graph), links to branch / pull request / CI run, usage and cost by call kind
(planner.ci.report.costs), and a log of earlier runs. It stays under GitHub's 65,536-character body
limit by dropping the oldest run-log lines first, then shortening messages — never the current
checklist.

Text that came from the model is neutralised before it is shown: HTML is escaped (no hidden
markup, no fake markers, no tracking images), Markdown links and images are inert text (no
forge image proxy fetches a URL the model wrote) and @mentions do not notify anyone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal
from urllib.parse import urlsplit

from planner.ci.forges.base import TRACKING_MARKER
from planner.ci.report.plan_graph import graph_section
from planner.outcome.evidence import VerificationNote
from planner.outcome.result import PassResult, TaskView, render_checklist
from planner.text.inert import MENTION, neutralize

MAX_COMMENT_CHARS = 65_536
CHECKLIST_CHARS = 50_000
"""The checklist with its folded plan history; older plans go first, the current one never."""
RUNS_START = "<!-- planner:runs -->"
RUNS_END = "<!-- /planner:runs -->"
CUT_NOTE = "\n\n…(cut to fit the comment size limit)"
MESSAGE_LIMIT = 2_000

TrackingState = Literal["working", "completed", "in_progress", "needs_human", "failed", "stopped"]

TITLES: dict[str, str] = {
    "working": "⏳ Working",
    "completed": "✅ Done",
    "in_progress": "⏸️ Paused",
    "needs_human": "🙋 Needs your input",
    "failed": "❌ Failed",
    "stopped": "⏹️ Stopped",
}
BARE_AMPERSAND = re.compile(r"&(?!(?:amp|lt|gt);)")
PROCEED_AFTER = "<!-- planner:proceed-after {moment} -->"
"""Machine-readable: when the scheduled sweep (planner.ci.handlers.sweep) should start this
issue's next run. Only read from the trusted tracking comment; the run itself decides from the
history."""
PROCEED_AFTER_LINE = re.compile(r"<!-- planner:proceed-after (?P<moment>[^ ]*) -->")


@dataclass
class TrackingView:
    """Everything the tracking comment shows; built by the run (planner.ci.issue_run)."""

    state: TrackingState
    actor: str = ""
    event: str = ""
    result: PassResult | None = None
    reason: str = ""
    """Why the run stopped, when not the pass's own stop reason (e.g. a push failure)."""
    notes: list[str] = field(default_factory=list)
    branch: str = ""
    branch_url: str = ""
    pull_label: str = ""
    pull_url: str = ""
    run_url: str = ""
    phrase: str = "/planner"
    earlier_runs: list[str] = field(default_factory=list)
    approval: str = ""
    """The approval request (planner.approval.render: model text already made inert)."""
    usage: str = ""
    """The usage footer (planner.ci.report.costs): calls, tokens and cost by call kind, with the
    budget left; without it the pass's own counts are shown."""
    proceed_after: str = ""
    """When a run waiting without a pass result (a planning session) goes on without an answer
    (ISO 8601); a pass's own is PassResult.proceed_after."""


def safe_result(result: PassResult) -> PassResult:
    """A copy whose model-written texts are neutralised (for checklists we publish)."""
    history = [
        plan.model_copy(
            update={"reason": neutralize(plan.reason), "tasks": _safe_tasks(plan.tasks)}
        )
        for plan in result.plan_history
    ]
    return result.model_copy(
        update={
            "goal": neutralize(result.goal),
            "revision_reason": neutralize(result.revision_reason),
            "tasks": _safe_tasks(result.tasks),
            "plan_history": history,
            "messages": [neutralize(m) for m in result.messages],
            "questions": [neutralize(q) for q in result.questions],
        }
    )


def _safe_tasks(tasks: list[TaskView]) -> list[TaskView]:
    return [t.model_copy(update={"description": neutralize(t.description)}) for t in tasks]


def render_tracking(view: TrackingView, limit: int = MAX_COMMENT_CHARS) -> str:
    """The whole comment body, at most `limit` characters."""
    runs, omitted = list(view.earlier_runs), 0
    message_limit = MESSAGE_LIMIT
    while True:
        body = _compose(view, runs, omitted, message_limit)
        if len(body) <= limit:
            return body
        if runs:
            runs, omitted = runs[1:], omitted + 1
        elif message_limit > 200:
            message_limit //= 4
        else:
            return body[: limit - len(CUT_NOTE)] + CUT_NOTE


def earlier_runs(body: str) -> list[str]:
    """The run-log lines of an existing tracking comment, made inert (they are shown again)."""
    start, end = body.find(RUNS_START), body.find(RUNS_END)
    if start < 0 or end < start:
        return []
    section = body[start + len(RUNS_START) : end]
    return [_inert(line) for line in section.splitlines() if line.startswith("- ")]


def _inert(line: str) -> str:
    """neutralize() for a line that is copied run after run: what is escaped stays as it is."""
    escaped = BARE_AMPERSAND.sub("&amp;", line).replace("<", "&lt;").replace(">", "&gt;")
    return MENTION.sub("@\u200b", escaped)


def run_line(view: TrackingView, now: datetime | None = None) -> str:
    """One line for the run log describing the run `view` ends."""
    stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    parts = [stamp, f"{view.event} by @\u200b{view.actor}" if view.actor else view.event]
    parts.append(TITLES[view.state])
    if view.result is not None:
        usage = view.result.usage
        parts.append(f"{usage.model_calls} model calls, {usage.total_tokens:,} tokens")
    if view.run_url:
        parts.append(f"[CI run]({view.run_url})")
    return "- " + " · ".join(part for part in parts if part)


# -- composing --------------------------------------------------------------------------------


def _compose(view: TrackingView, runs: list[str], omitted: int, message_limit: int) -> str:
    result = safe_result(view.result) if view.result is not None else None
    sections = [
        f"{TRACKING_MARKER}\n### 🤖 planner · {TITLES[view.state]}",
        _started(view),
        _why(view, result, message_limit),
        render_checklist(result, CHECKLIST_CHARS).strip() if result and result.tasks else "",
        "\n".join(verification_lines(result.verification if result else None)),
        graph_section(view.result),  # escapes the model's text for Mermaid itself
        view.approval.strip(),
        _links(view),
        view.usage or _usage(result),
        _next_step(view),
        _proceed_after(view, result),
        _run_log(runs, omitted),
    ]
    return "\n\n".join(section for section in sections if section) + "\n"


def _started(view: TrackingView) -> str:
    who = f" for @{view.actor}" if view.actor else ""
    if view.state == "working":
        return f"Working on this issue{who} ({view.event}). This comment updates as the plan runs."
    if view.state == "stopped":
        return f"Stopped{who}; nothing runs until someone comments `{view.phrase} resume`."
    return ""


def _why(view: TrackingView, result: PassResult | None, message_limit: int) -> str:
    if view.state in ("working", "completed") and not view.reason:
        return ""
    reason = view.reason or (result.stop_reason if result else "")
    lines = [f"**Why:** {one_line(neutralize(reason), message_limit)}"] if reason else []
    if result is not None and view.state != "working":
        lines += [f"> {one_line(m, message_limit)}" for m in result.messages if m.strip()]
        lines += [f"- ❓ {one_line(q, message_limit)}" for q in result.questions]
    return "\n".join(lines)


def _links(view: TrackingView) -> str:
    links = []
    if view.branch:
        branch = f"`{view.branch}`"
        links.append(
            f"Branch [{branch}]({view.branch_url})" if view.branch_url else f"Branch {branch}"
        )
    if view.pull_url:
        links.append(f"Pull request [{view.pull_label or 'link'}]({view.pull_url})")
    if view.run_url:
        links.append(f"[CI run]({view.run_url})")
    own = _own_host(view)
    notes = [f"_{neutralize(note, own)}_" for note in view.notes]
    return "\n\n".join([" · ".join(links), *notes]).strip()


def _own_host(view: TrackingView) -> str:
    """The forge's host, from a link planner made itself ("" when it made none)."""
    for url in (view.run_url, view.branch_url, view.pull_url):
        host = urlsplit(url).hostname if url else None
        if host:
            return host
    return ""


def _usage(result: PassResult | None) -> str:
    if result is None or not result.usage.model_calls:
        return ""
    usage = result.usage
    return (
        f"Model calls: {usage.model_calls} · tokens: {usage.total_tokens:,} "
        f"({usage.prompt_tokens:,} prompt + {usage.completion_tokens:,} completion) · "
        f"actions: {result.actions}"
    )


def _next_step(view: TrackingView) -> str:
    phrase = f"`{view.phrase}"
    steps = {
        "in_progress": f"Comment {phrase} resume` to continue where this run stopped.",
        "needs_human": f"Answer with {phrase} <your answer>` to continue.",
        "failed": f"Fix the cause above, then comment {phrase} resume` to retry.",
    }
    return steps.get(view.state, "")


def _proceed_after(view: TrackingView, result: PassResult | None) -> str:
    """The hidden marker the sweep reads, and the same promise in words."""
    moment = parse_moment(view.proceed_after or (result.proceed_after if result else ""))
    if view.state != "needs_human" or moment is None:
        return ""
    stamp = moment.strftime("%Y-%m-%d %H:%M UTC")
    marker = PROCEED_AFTER.format(moment=moment.strftime("%Y-%m-%dT%H:%M:%SZ"))
    words = (
        f"_Without an answer, planner goes on without it (on its stated assumptions, or skipping "
        f"the open questions) at the first scheduled sweep after {stamp}, or at the next run on "
        f"this issue._"
    )
    return f"{marker}\n{words}"


def parse_moment(text: str) -> datetime | None:
    """An ISO 8601 time as UTC; None when it is empty or not a time."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


def proceed_after_of(body: str) -> datetime | None:
    """The sweep marker of a tracking comment: None when it has none; ValueError when the
    marker is there but its time cannot be read."""
    found = PROCEED_AFTER_LINE.search(body)
    if found is None:
        return None
    moment = parse_moment(found["moment"])
    if moment is None:
        raise ValueError(f"unreadable proceed-after time {found['moment'][:40]!r}")
    return moment


def _run_log(runs: list[str], omitted: int) -> str:
    if not runs and not omitted:
        return ""
    lines = [f"_{omitted} earlier runs not shown._"] if omitted else []
    body = "\n".join([RUNS_START, *lines, *runs, RUNS_END])
    return f"<details><summary>Run log</summary>\n\n{body}\n\n</details>"


REGRESSION_WARNING = (
    "⚠️ **Tests that passed before this change fail now: this is not a finished fix.** "
    "The pull request stays a draft until they pass."
)
ADDED_TESTS_WARNING = (
    "⚠️ **Tests this change added fail: this is not a finished fix.** "
    "The pull request stays a draft until they pass or are removed."
)
UNPROVEN_WARNING = (
    "⚠️ **The issue's test, written from the issue before the change, fails: the fix is "
    "unproven.** The pull request stays a draft until a person looks at it."
)
NOTHING_PROVES = (
    "⚠️ **The tests pass, but none of them tests what the issue reports.** The pull request "
    "stays a draft until a person looks at it:"
)
TEST_LINE_CHARS = 2_000


def verification_lines(note: VerificationNote | None) -> list[str]:
    """What the tests said (PR body, tracking comment, job summary); [] when verification
    never ran. Test names come from the repository's output: made inert like model text."""
    if note is None:
        return []
    lines = [_regression_warning(note)] if note.regressed else []
    lines += [UNPROVEN_WARNING] if note.issue_failures and not note.regressed else []
    if note.unproven and not note.unfinished:
        lines.append(f"{NOTHING_PROVES} {one_line(neutralize(note.unproven), TEST_LINE_CHARS)}.")
    lines += [
        one_line(neutralize(line), TEST_LINE_CHARS) for line in [note.line(), *note.details()]
    ]
    return lines


def _regression_warning(note: VerificationNote) -> str:
    """Which tests fail now decides what to say: a test the change added did not pass before."""
    return REGRESSION_WARNING if note.broken else ADDED_TESTS_WARNING


JUDGEMENT_ITEM_CHARS = 1_000
JUDGEMENT_CHARS = 5_000


def final_judgement_lines(result: PassResult) -> list[str]:
    """The quality judge's final word for the pull request body (planner.refinement): the score,
    and its issues and suggestions, so advice on finished work is not silently dropped."""
    note = result.result_quality
    if note is None:
        return []
    verdict = "acceptable" if note.acceptable else "not acceptable"
    lines = ["### Final quality judgement", "", f"{note.line('Result quality')} · {verdict}"]
    for title, items in (
        ("Open issues:", note.issues),
        ("Suggestions (not acted on):", note.suggestions),
    ):
        if items:
            lines += ["", title, *capped_items(items, JUDGEMENT_ITEM_CHARS, JUDGEMENT_CHARS)]
    return lines


def capped_items(items: list[str], item_chars: int, total_chars: int, noun: str = "") -> list[str]:
    """Model-written items as inert list lines: each on one line of at most `item_chars`, all
    together at most `total_chars` (the rest counted in a last line)."""
    lines: list[str] = []
    used = 0
    for index, item in enumerate(items):
        line = f"- {one_line(neutralize(item), item_chars)}"
        used += len(line) + 1
        if used > total_chars:
            return [*lines, f"- …and {len(items) - index} more{' ' + noun if noun else ''}"]
        lines.append(line)
    return lines


def one_line(text: str, limit: int) -> str:
    """`text` on one line, at most `limit` characters (an ellipsis marks a cut)."""
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"
