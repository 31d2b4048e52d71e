"""How specs waiting for approval look: markdown for the issue, a plain table for the terminal."""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence

from planner.approval.models import ActionSpecExt, PlanRecord
from planner.approval.preview import PREVIEW_CHARS, is_cut
from planner.approval.tool import PlanTool
from planner.text.inert import inert_links
from planner.text.issue import show_invisible

INVISIBLE_NOTE = (
    "⚠️ **Invisible characters:** this change holds characters that do not show (zero-width, "
    "text-direction controls). They are written out below as `[U+XXXX]`; the file gets the "
    "characters themselves."
)
RISK_MARK = {"low": "low", "medium": "medium", "high": "⚠️ high"}


def approval_request(tool: PlanTool, waiting: Sequence[ActionSpecExt]) -> str:
    """The tracking comment's section: what waits, its preview and how to answer."""
    lines = [
        "### ⏸️ Approval needed",
        "",
        "These changes were **not** made. Review each preview, then reply:",
        "",
        "| id | change | path or command | risk | preview |",
        "|---|---|---|---|---|",
    ]
    lines += [_row(spec) for spec in waiting]
    lines.append("")
    for spec in waiting:
        lines += _details(tool, spec)
    ids = ",".join(spec.id for spec in waiting) or "a1"
    first = waiting[0].id if waiting else "a1"
    lines += [
        f"- `/planner approve all` or `/planner approve {ids}` runs exactly these previews;",
        f"- `/planner reject {first} <why>` hands your reason back to the model instead.",
    ]
    return "\n".join(lines) + "\n"


def _row(spec: ActionSpecExt) -> str:
    target = spec.path or (spec.content or "")[:80]
    notes = "; ".join(n for n in spec.notes if n.startswith("high risk"))
    summary = spec.preflight.diff_summary or spec.kind
    return (
        f"| {spec.id} | {spec.kind} | `{_cell(target)}` | {RISK_MARK[spec.risk]} | "
        f"{_cell(summary)}{' — ' + _cell(notes) if notes else ''} |"
    )


def _details(tool: PlanTool, spec: ActionSpecExt) -> list[str]:
    effect = spec.preflight.effect_diff
    body = tool.preview_body(spec)
    if not body.strip():
        return []
    lines = [f"<details><summary>{spec.id}: {_cell(spec.description)}</summary>", ""]
    if effect:
        lines += [_effect_note(spec), ""]
    shown = body[:PREVIEW_CHARS]
    escaped = show_invisible(shown)
    if escaped != shown:
        lines += [INVISIBLE_NOTE, ""]
    fence = _fence(escaped)
    language = "diff" if spec.path or effect else "sh"
    lines += [f"{fence}{language}", escaped.rstrip("\n"), fence]
    if is_cut(body):
        lines += ["", _cut_note(tool, spec, len(body) - PREVIEW_CHARS, len(body))]
    return [*lines, "</details>", ""]


def _effect_note(spec: ActionSpecExt) -> str:
    command = _cell(spec.content or "")
    return (
        f"`{command}` ran, and this is what it changed in the working tree. The change was "
        "**rolled back**. Approving runs it again and keeps its effect only if it is exactly "
        "this one; otherwise you are asked again."
    )


def _cut_note(tool: PlanTool, spec: ActionSpecExt, hidden: int, total: int) -> str:
    """A cut preview says so, how much it hides and where the whole text is; such a spec is
    never approved in bulk (planner.approval.gate.ApprovalGate._needs_person)."""
    plan = _plan_of(tool, spec.id)
    stored = f"`{tool.stored_preview(plan, spec)}`" if plan else "its plan's preview folder"
    return (
        f"⚠️ **Preview cut:** {hidden:,} of {total:,} characters are not shown above. The whole "
        f"text is stored in the planning history as {stored}; approve only what you have read."
    )


def _plan_of(tool: PlanTool, spec_id: str) -> str:
    for record in tool.records(("pending_review", "proposed")):
        if record.state.spec(spec_id) is not None:
            return record.plan.id
    return ""


def _fence(body: str) -> str:
    """A backtick fence longer than any run inside the (model-written) body, so it can't close."""
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    return "`" * max(3, longest + 1)


def _cell(text: str) -> str:
    """Model-written text made inert for a table cell or summary: no markup, no @mentions."""
    flat = " ".join(show_invisible(text).split())
    flat = flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    flat = re.sub(r"@(?=\w)", "@\u200b", inert_links(flat))
    return flat.replace("|", "\\|").replace("`", "'")[:160]


# -- terminal -----------------------------------------------------------------------------------


def plan_table(records: Sequence[PlanRecord], colour: bool | None = None) -> str:
    rows = [("plan", "status", "specs", "risk", "title")]
    for record in records:
        worst = max((s.risk for s in record.state.action_specs), key=_rank, default="low")
        rows.append(
            (
                record.plan.id,
                record.state.status,
                str(len(record.state.action_specs)),
                worst,
                record.plan.title[:60],
            )
        )
    return _table(rows, _colour(colour))


def spec_table(record: PlanRecord, colour: bool | None = None) -> str:
    rows = [("id", "kind", "risk", "outcome", "path or command", "preview")]
    for spec in record.state.action_specs:
        target = spec.path or (spec.content or "")[:50]
        rows.append(
            (spec.id, spec.kind, spec.risk, spec.outcome, target, spec.preflight.diff_summary)
        )
    return _table(rows, _colour(colour))


def _table(rows: Sequence[tuple[str, ...]], colour: bool) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for index, row in enumerate(rows):
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=True)]
        line = "  ".join(cells).rstrip()
        if colour and index and "high" in row:
            line = f"\033[31m{line}\033[0m"
        lines.append(line)
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


def _colour(wanted: bool | None) -> bool:
    return sys.stdout.isatty() if wanted is None else wanted


def _rank(risk: str) -> int:
    return {"low": 0, "medium": 1, "high": 2}[risk]
