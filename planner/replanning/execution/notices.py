"""Markdown for the people on the issue (replanning.md §11.2, §11.3).

Everything the model wrote is collapsed to plain lines and capped, so a decision cannot break
the comment's layout; the forge layer posts each body as its own comment.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from planner.outcome.result import format_timestamp
from planner.replanning.limits.controls import Verdict, percent
from planner.replanning.prompting.decision import PHASE_TITLES, ReplanDecision
from planner.text.issue import sanitize_untrusted

ITEM_CHARS = 500
TEXT_CHARS = 3_000
MAX_ITEMS = 15


def revision_notice(
    phase: str, decision: ReplanDecision, verdict: Verdict, timestamp: str, status: str = ""
) -> str:
    """§11.2 "Plan Revision Decided by AI": executed, or overridden by the system."""
    lines = [
        "## 🔄 Plan Revision Decided by AI",
        "",
        f"**Phase**: {PHASE_TITLES.get(phase, phase)}",
        f"**Confidence**: {percent(decision.confidence)}",
    ]
    if verdict.level is not None:
        lines.append(f"**Replan**: level {verdict.level.number}, {verdict.level.name}")
    lines.append(f"**Status**: {status or _status(verdict)}")
    lines += ["", "**Reasoning**:", _text(decision.reasoning) or "_(none given)_"]
    lines += _list("Issues Found", decision.issues_found + decision.issues_identified)
    lines += _list(
        "Recommended Actions", decision.recommended_actions + decision.additional_actions
    )
    return "\n".join([*lines, "", f"*{format_timestamp(timestamp)}*"]) + "\n"


def _status(verdict: Verdict) -> str:
    if verdict.executes:
        return "⚠️ " + verdict.warning if verdict.warning else "executed"
    return f"⛔ overridden by planner — {verdict.override_reason}"


def clarification_notice(
    questions: list[str],
    context: str,
    assumptions: list[str],
    *,
    auto_assume_minutes: float | None,
    fallback: str = "",
    asked_at: str = "",
) -> str:
    """§11.3 "Clarification Needed (AI Decision)". `asked_at` (ISO 8601) dates the promise."""
    lines = [
        "## ❓ Clarification Needed (AI Decision)",
        "",
        "I've analyzed the task and need some clarification to proceed effectively:",
        "",
        "**Questions**:",
        *[f"{n}. {_item(q)}" for n, q in enumerate(questions[:MAX_ITEMS], start=1)],
        "",
        "**Context**:",
        _text(context) or "_(none given)_",
        "",
        "**If no response**:",
    ]
    lines += _if_no_response(assumptions, auto_assume_minutes, fallback, asked_at)
    return "\n".join([*lines, "", "Please reply to this comment with your answers."]) + "\n"


def _if_no_response(
    assumptions: list[str], minutes: float | None, fallback: str, asked_at: str
) -> list[str]:
    if minutes is None:
        return ["I will wait for your answers before continuing."]
    # Promise only what happens: the scheduled sweep (planner.ci.handlers.sweep) starts the
    # issue's next run once the time has passed, unless a comment starts it earlier.
    when = f" once {minutes:g} minutes pass without an answer ({_due(asked_at, minutes)})"
    if fallback:
        return [f"{fallback}{when}."]
    if not assumptions:
        return [f"I will proceed with my best understanding of the issue{when}."]
    lines = [f"I will proceed with the following assumptions{when}:"]
    return lines + [f"- {_item(a)}" for a in assumptions[:MAX_ITEMS]]


def _due(asked_at: str, minutes: float) -> str:
    try:
        asked = datetime.fromisoformat(asked_at.replace("Z", "+00:00"))
    except ValueError:
        return "at the first scheduled sweep after that, or at planner's next run on this issue"
    due = (asked if asked.tzinfo else asked.replace(tzinfo=UTC)) + timedelta(minutes=minutes)
    stamp = due.astimezone(UTC).strftime("%H:%M UTC")
    return f"at the first scheduled sweep after {stamp}, or at planner's next run on this issue"


def assumptions_notice(reason: str, assumptions: list[str], timestamp: str) -> str:
    """Planner goes on without an answer: say what it now takes for granted."""
    lines = [
        "## ⏭️ Proceeding on Assumptions",
        "",
        f"{_item(reason)}, so I am continuing with these assumptions:",
    ]
    lines += [f"- {_item(a)}" for a in assumptions[:MAX_ITEMS]] or [
        "- (none stated: I continue with the current plan)"
    ]
    lines += ["", "Reply on the issue at any time to correct them."]
    return "\n".join([*lines, "", f"*{format_timestamp(timestamp)}*"]) + "\n"


def escalation_notice(phase: str, reason: str, questions: list[str], timestamp: str) -> str:
    """§9.4 step 3: a replan could not run and the model has no alternative."""
    lines = [
        "## 🛑 Replanning Needs a Person",
        "",
        f"**Phase**: {PHASE_TITLES.get(phase, phase)}",
        f"**Why**: {_item(reason)}",
        "",
        "The plan cannot go on as it is and I found no alternative within my limits.",
    ]
    lines += _list("Open Questions", questions)
    lines += ["", "Reply on the issue with guidance to continue (the replanning limits restart)."]
    return "\n".join([*lines, "", f"*{format_timestamp(timestamp)}*"]) + "\n"


def _list(title: str, items: list[str]) -> list[str]:
    if not items:
        return []
    shown = [f"- {_item(item)}" for item in items[:MAX_ITEMS]]
    if len(items) > MAX_ITEMS:
        shown.append(f"- … and {len(items) - MAX_ITEMS} more")
    return ["", f"**{title}**:", *shown]


def _item(text: str) -> str:
    return " ".join(sanitize_untrusted(text, ITEM_CHARS).split())


def _text(text: str) -> str:
    return sanitize_untrusted(text, TEXT_CHARS).strip()
