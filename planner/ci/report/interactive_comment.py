"""The issue comment of an interactive planning session: questions, decision points or the
design summary with the instruction that will be planned, and how to reply.

Everything the model or a person wrote is made inert (neutralize) before it is shown.
"""

from __future__ import annotations

from planner.ci.report.tracking import one_line
from planner.interactive.model import (
    DecisionPoint,
    PlanningSession,
    PlanningSessionStatus,
    Question,
)
from planner.interactive.operations import build_enhanced_instruction
from planner.text.inert import neutralize

S = PlanningSessionStatus
SESSION_MARKER = "<!-- planner:planning-session -->"
TITLES = {
    S.DISCOVERY: "🧭 Interactive planning · questions (discovery)",
    S.DESIGN: "🧩 Interactive planning · design decisions (design)",
    S.REVIEW: "📝 Interactive planning · review",
    S.APPROVED: "✅ Interactive planning · approved",
    S.CANCELLED: "⏹️ Interactive planning · cancelled",
    S.FAILED: "❌ Interactive planning · failed",
}
LIMIT = 60_000


def render_session(
    session: PlanningSession,
    *,
    phrase: str,
    timeout_minutes: float,
    notes: list[str] | None = None,
    mention: str = "",
) -> str:
    """The comment body for the session as it stands; `mention` is asked to act while the
    session waits for people."""
    asking = f"@{mention} planner needs your input here." if mention and session.active else ""
    sections = [
        f"{SESSION_MARKER}\n### {TITLES[session.status]}",
        asking,
        _header(session),
        *[f"> {one_line(neutralize(n), 1_000)}" for n in notes or []],
        _body(session, phrase, timeout_minutes),
    ]
    body = "\n\n".join(s for s in sections if s) + "\n"
    return body if len(body) <= LIMIT else body[: LIMIT - 20] + "\n…(cut)\n"


def render_closed_phase(
    session: PlanningSession, phase: PlanningSessionStatus, now: PlanningSessionStatus | None = None
) -> str:
    """A phase's comment once the session has moved on (to `now`): what was asked and decided,
    final."""
    view = session.model_copy(update={"status": phase})
    sections = [
        f"{SESSION_MARKER}\n### {TITLES[phase]}",
        f"_This phase is over: the session is now in **{(now or session.status).value}**._",
        _header(view),
        _body(view, "", 0, closed=True),
    ]
    body = "\n\n".join(s for s in sections if s) + "\n"
    return body if len(body) <= LIMIT else body[: LIMIT - 20] + "\n…(cut)\n"


def _header(session: PlanningSession) -> str:
    instruction = one_line(neutralize(session.instruction), 500)
    rejections = f" · rejected {session.reject_count}/3" if session.reject_count else ""
    return (
        f"Session `{session.session_id}` · status **{session.status.value}**{rejections}\n\n"
        f"**Request:** {instruction}"
    )


def _body(session: PlanningSession, phrase: str, timeout: float, closed: bool = False) -> str:
    if session.status == S.DISCOVERY:
        return _discovery(session, timeout, closed)
    if session.status == S.DESIGN:
        return _design(session, closed)
    if session.status == S.REVIEW:
        return _review(session, phrase, closed)
    if session.status == S.APPROVED:
        return _approved(session)
    if session.status == S.FAILED:
        error = one_line(neutralize(session.error_message or "unknown error"), 2_000)
        return f"**Error:** {error}\n\nStart again with `{phrase} plan <instruction>`."
    return _cancelled(session, phrase)


# -- discovery -----------------------------------------------------------------------------------


def _discovery(session: PlanningSession, timeout: float, closed: bool) -> str:
    lines = ["Before anything is planned, planner needs answers to these questions."]
    for number, question in enumerate(session.questions, start=1):
        lines += ["", *_question(number, question)]
    if closed:
        return "\n".join(lines)
    lines += [
        "",
        "**How to answer:** reply on this issue (people with write access), one answer per line: "
        "`q-1: your answer` or `1. your answer` (for a question with options, its number "
        "picks it). You may answer some questions now and the rest later; with one question "
        "left, a plain reply answers it.",
        f"Questions still open {timeout:g} minutes after the last activity are skipped at the "
        "next event.",
    ]
    return "\n".join(lines)


def _question(number: int, question: Question) -> list[str]:
    text = one_line(neutralize(question.question), 1_000)
    lines = [f"**{number}. `{question.id}`** ({question.type}) {text}"]
    if question.context:
        lines.append(f"   - _Why it matters:_ {one_line(neutralize(question.context), 1_000)}")
    for index, option in enumerate(question.options or [], start=1):
        lines.append(f"   - option {index}: {one_line(neutralize(option), 300)}")
    if question.answered_at is not None:
        answer = question.answer
        shown = one_line(neutralize(answer), 1_000) if answer is not None else "_skipped_"
        lines.append(f"   - ✅ **Answer:** {shown}")
    return lines


# -- design --------------------------------------------------------------------------------------


def _design(session: PlanningSession, closed: bool) -> str:
    lines = ["Choose one option for each decision point."]
    for decision in session.decisions:
        lines += ["", *_decision(decision)]
    if closed:
        return "\n".join(lines)
    lines += [
        "",
        "**How to decide:** reply `d-1: opt-b because …` (one decision per line; the text "
        "after the option is your rationale). You may decide some now and the rest later.",
    ]
    return "\n".join(lines)


def _decision(decision: DecisionPoint) -> list[str]:
    lines = [f"#### `{decision.id}` {one_line(neutralize(decision.topic), 300)}"]
    for option in decision.options:
        star = " ⭐ **recommended**" if option.recommendation else ""
        name = one_line(neutralize(option.name), 200)
        lines.append(
            f"- **`{option.id}` {name}**{star}: {one_line(neutralize(option.description), 1_000)}"
        )
        lines += [f"  - ➕ {one_line(neutralize(p), 300)}" for p in option.tradeoffs.pros]
        lines += [f"  - ➖ {one_line(neutralize(c), 300)}" for c in option.tradeoffs.cons]
    chosen = decision.option(decision.selected_option_id)
    if chosen is not None:
        why = one_line(neutralize(decision.rationale or "no reason given"), 1_000)
        lines.append(f"- ✅ **Decided:** `{chosen.id}` — {why}")
    return lines


# -- review --------------------------------------------------------------------------------------


def _review(session: PlanningSession, phrase: str, closed: bool) -> str:
    lines = [
        "**Design summary**",
        "",
        _quoted(session.design_summary or ""),
        "",
        "<details><summary>The instruction that will be planned and carried out</summary>",
        "",
        _fenced(build_enhanced_instruction(session)),
        "",
        "</details>",
        "",
        f"**Next:** `{phrase} approve` plans and carries it out now; "
        f"`{phrase} reject <why>` returns to the design with your feedback "
        f"({3 - session.reject_count} rejection(s) left before the session is cancelled); "
        f"`{phrase} cancel` cancels the session. A command counts alone on its line, and an "
        "approval only when it is written after this comment.",
    ]
    return "\n".join(lines[:-2] if closed else lines)


def _cancelled(session: PlanningSession, phrase: str) -> str:
    """The end, with what the session showed last (its design, decisions or questions) kept
    under it, collapsed: a cancellation must not erase what people judged."""
    lines = [
        f"Nothing more happens in this session: later passes plan from the issue as written, "
        f"not from its design. Start a new one with `{phrase} plan <instruction>`."
    ]
    last = _last_shown(session)
    if last:
        lines += ["", "<details><summary>What the session showed last</summary>", "", last]
        lines += ["", "</details>"]
    return "\n".join(lines)


def _last_shown(session: PlanningSession) -> str:
    if (session.design_summary or "").strip():
        return _review(session, "", closed=True)
    if session.decisions:
        return _design(session, closed=True)
    if session.questions:
        return _discovery(session, 0, closed=True)
    return ""


def _approved(session: PlanningSession) -> str:
    handed = f" (pass `{session.planner_session_id}`)" if session.planner_session_id else ""
    return (
        f"Approved. The instruction below was handed to planner's pass{handed}; its progress "
        "is in the tracking comment.\n\n" + _fenced(build_enhanced_instruction(session))
    )


def _quoted(text: str) -> str:
    lines = neutralize(text).replace("```", "ʼʼʼ").splitlines()
    return "\n".join(f"> {line}" for line in lines) or "> (empty)"


def _fenced(text: str) -> str:
    """Inside a fence nothing renders and nobody is notified, so the text stays as written;
    only the fence must not be closable and no line may pass for one of planner's markers."""
    safe = text.replace("```", "ʼʼʼ").replace("<!--", "<!\u200b--")
    return f"```text\n{safe}\n```"
