"""Interactive planning sessions on an issue (ADR-021): the CI side of planner.interactive.

planner.ci.job's table hands every `run` or `resume` on an issue here before the pass (a review
is planner.ci.handlers.review's). Ours are:
- the label forge.label_interactive, `/planner plan <instruction>`, or any trigger with
  interactive.enabled on an issue that never had a session: a new session starts;
- any event on an issue whose session waits for people: replies answer questions (`q-1: …`,
  `1. …`, free text for a single open question) or decide (`d-1: opt-b because …`);
  `/planner approve` hands the enhanced instruction to a pass in the same run, `/planner reject
  <why>` returns to design with the reason, `/planner cancel` cancels;
- `/planner cancel` on an approved session ends it: later passes plan from the issue as written.
Commands on the issue's pull request mean the same as on the issue.
Everything else falls through to the ordinary pass (after an approved session, its phase,
planner.interactive.phase, makes every plan of the issue from the approved design). Each phase
that waits for people gets a comment of its own (a new comment notifies; it is edited while the
phase lasts, and the end of the session is written into the last one), linked from the tracking
comment; the issue waits under forge.label_needs_input, so a plain reply by someone with write
access starts the next run.
Replies by people without write access never start a run; the next run says they were ignored.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from planner.ci.durability.durable import restore_from_lease
from planner.ci.events.triggers import Sweep, Trigger, match_phrase
from planner.ci.forges.base import MARKER_PREFIX, Actor, CommentData, parse_time
from planner.ci.gate.request_marks import (
    BEFORE_REQUEST,
    NOT_ON_OWN_LINE,
    RequestMark,
    came_after,
    mark_at,
)
from planner.ci.handlers import Event, Handler
from planner.ci.outcome import CiOutcome
from planner.ci.report.interactive_comment import (
    SESSION_MARKER,
    render_closed_phase,
    render_session,
)
from planner.ci.run_port import IssueRunPort
from planner.core.interfaces import HistoryBackend, ToolProvider
from planner.interactive import transitions as move
from planner.interactive.model import (
    ACTIVE,
    PlanningSession,
    PlanningSessionStatus,
    new_session,
)
from planner.interactive.operations import (
    REJECTED,
    PlanningOperations,
    approve_plan,
    remember,
)
from planner.interactive.replies import Parsed, SessionCommand, parse_answers, parse_command
from planner.interactive.replies import parse_decisions as parse_choices
from planner.interactive.storage import SessionStore, latest_for_issue, record_for_issue
from planner.memory.history import PlanningHistoryStore
from planner.run.runner import exclude_from_git, history_directory, new_run_id

log = logging.getLogger(__name__)
S = PlanningSessionStatus
MAX_IGNORED_AUTHORS = 5
NOTHING_TO_CANCEL = (
    "Nothing to cancel: no interactive planning session waits on this issue, so nothing was "
    "changed. To stop planner's work on the issue, use `/planner stop`."
)
NO_TEXT_KINDS = frozenset({"labeled", "interactive", "opened", "assigned"})
"""Triggers that carry no reply (their instruction, if any, is not an answer)."""


def interactive_event(
    run: IssueRunPort,
    *,
    model: Any,
    extra_tools: tuple[ToolProvider, ...],
    history: HistoryBackend | None,
) -> CiOutcome | None:
    """The outcome when the event belongs to a planning session; None to run a normal pass.
    A command on the issue's pull request means what it means on the issue."""
    if run.trigger.command not in ("run", "resume") or run.trigger.kind == "review":
        return None  # a review's threads are the review phase's (planner.ci.review), no answer
    directory = history_directory(run.config, run.workspace)
    if history is not None:
        history.restore(directory, str(run.number))
    # The session's journal is in the issue's history, which the lease also carries.
    store = PlanningHistoryStore(directory, run.forge.repository, str(run.number))
    restore_from_lease(run, run.lease, store)
    issue = IssueSessions(run, directory, model, extra_tools, history)
    return issue.route()


class IssueSessions:
    """The sessions of one issue and what one event does to them."""

    def __init__(
        self,
        run: IssueRunPort,
        directory: Path,
        model: Any,
        extra_tools: tuple[ToolProvider, ...],
        history: HistoryBackend | None,
    ) -> None:
        self.run = run
        self.directory = directory
        self.run_id = new_run_id()
        self.model = model
        self.extra_tools = extra_tools
        self.history = history
        self.store = SessionStore(directory)
        self.journal = self._journal()
        found = latest_for_issue(self.journal, self.store)
        self.session: PlanningSession | None = found[0] if found else None
        self.entry: dict[str, Any] = found[1] if found else {}
        self.comments: list[CommentData] | None = None
        self.notes: list[str] = []
        self.approving = False

    def _journal(self) -> PlanningHistoryStore:
        """The issue's history, read afresh (a pass appends through a store of its own)."""
        run = self.run
        number = str(run.number)
        return PlanningHistoryStore(self.directory, run.forge.repository, number, self.run_id)

    # -- routing

    def route(self) -> CiOutcome | None:
        session = self.session
        active = session is not None and session.active
        if self.run.trigger.command == "resume":
            return self._still_waiting(session) if session is not None and active else None
        text, command = self._event_text()
        if command is not None and command.name == "cancel" and not active:
            if session is not None and session.status == S.APPROVED:
                return self._cancel_approved(session)
            return self.run.reply("skipped", NOTHING_TO_CANCEL)
        if command is not None and command.name == "plan":
            return self._start(command.argument or self._issue_text())
        if session is not None and session.active:
            return self._reply(session, text, command)
        if command is not None:
            return None  # approve/reject/cancel of something else (the approval gate, …)
        wanted = self.run.trigger.kind == "interactive"
        if wanted or (self.run.config.interactive.enabled and session is None):
            return self._start(self._issue_text())
        return None  # after an approved session the pass plans from its design (its phase)

    def _still_waiting(self, session: PlanningSession) -> CiOutcome:
        """`resume` cannot pass a session that waits for people: say what it waits for."""
        url = str(self.entry.get("comment_url") or "")
        where = f"[the session comment]({url})" if url else "the session comment"
        text = (
            f"Nothing was resumed: planner is {_reason(session)}. Answer in {where}, or "
            "`/planner cancel` the session."
        )
        return self.run.reply("needs_human", text)

    def _cancel_approved(self, session: PlanningSession) -> CiOutcome:
        """An approved session whose design later passes plan from: cancelling it ends that.
        Its comment keeps the design, collapsed; the work already on the branch stays."""
        if not self.run.trigger.own_line:
            return self.run.reply("skipped", f"`cancel` did not count: {NOT_ON_OWN_LINE}")
        move.cancel(session)
        self.store.save(session)
        self._record(session)
        self._show(session)
        if self.history is not None:
            self.history.save(self.directory, str(self.run.number))
        phrase = self.run.config.forge.trigger_phrase
        return self.run.reply("stopped", approved_cancelled(session.session_id, phrase))

    def _event_text(self) -> tuple[str, SessionCommand | None]:
        """What the person wrote for planner, and a command when they used the phrase."""
        trigger = self.run.trigger
        if trigger.kind != "comment":
            return trigger.instruction, parse_command(trigger.instruction)
        body = next((c.body for c in self._comments() if c.id == trigger.comment_id), None)
        if body is None or match_phrase(body, self.run.config.forge.trigger_phrase) is None:
            return trigger.instruction, None  # a plain reply: answers, never a command
        return trigger.instruction, parse_command(trigger.instruction)

    def _issue_text(self) -> str:
        issue = self.run.target.issue
        extra = self.run.trigger.instruction.strip()
        parts = [issue.title.strip(), issue.body.strip(), extra]
        return "\n\n".join(p for p in parts if p) or f"Issue {self.run.number}"

    def _comments(self) -> list[CommentData]:
        if self.comments is None:
            self.comments = self.run.forge.list_comments(self.run.number)
        return self.comments

    # -- starting

    def _start(self, instruction: str) -> CiOutcome:
        previous = self.session
        if previous is not None and previous.active:
            move.cancel(previous)
            self.store.save(previous)
            self._show(previous)  # its comment says it is cancelled
            self.notes.append(f"Session {previous.session_id} was cancelled by the new one.")
        session = self.session = new_session(instruction)
        self.entry = {}
        self.store.save(session)
        self._record(session)
        return self._progress(session)

    # -- replies

    def _reply(
        self, session: PlanningSession, text: str, command: SessionCommand | None
    ) -> CiOutcome:
        stale = self._timed_out(session)
        if not move.check_resume_position(session):
            self.notes.append("The saved position did not match the answers: discovery restarts.")
        still_open = len(session.open_questions())
        if command is not None:
            self._command(session, command)
        elif self.run.trigger.kind not in NO_TEXT_KINDS and text.strip():
            self._answer(session, text)
        if stale and len(session.open_questions()) == still_open:  # an answer restarts the wait
            self._skip_open_questions(session)
        self._note_ignored_replies()
        return self._progress(session)

    def _skip_open_questions(self, session: PlanningSession) -> None:
        """Questions nobody answered within the timeout: skipped, each noted as assumed."""
        if session.status == S.DISCOVERY and session.open_questions():
            skipped = move.skip_open_questions(session)
            self.notes.append(f"No answer in time: {', '.join(skipped)} skipped.")

    def _command(self, session: PlanningSession, command: SessionCommand) -> None:
        if not self.run.trigger.own_line:
            self.notes.append(f"`{command.name}` did not count: {NOT_ON_OWN_LINE}")
        elif command.name == "cancel":
            move.cancel(session)
        elif session.status != S.REVIEW:
            self.notes.append(
                f"`{command.name}` applies in review; the session is in {session.status.value}."
            )
        elif command.name == "approve":
            self._approve(session, command)
        else:
            reason = command.argument or "(no reason given)"
            login = self.run.trigger.actor.login
            remember(session, "user", "review", REJECTED + reason, author=login)
            if move.reject(session) == S.CANCELLED:
                self.notes.append("Third rejection: the session is cancelled.")

    def _approve(self, session: PlanningSession, command: SessionCommand) -> None:
        """Counts only for the review that was shown, after it was shown."""
        named = command.argument.strip().strip("`")
        if named and named not in (session.session_id, _short_id(session)):
            self.notes.append(
                f"`approve {named[:40]}` did not count: `approve` takes nothing after it but "
                f"this session's id (`{_short_id(session)}`)."
            )
        elif not came_after(self.run.forge, self.run.trigger, self._review_mark(session)):
            self.notes.append(f"`approve` did not count: {BEFORE_REQUEST}")
        else:
            self.approving = True  # approve_plan makes the move when the pass is handed over

    def _review_mark(self, session: PlanningSession) -> RequestMark | None:
        """Where the review was shown: its mark, or (a review shown before marks were kept)
        the review's own comment."""
        same = self.entry.get("session", {}).get("session_id") == session.session_id
        mark = self.entry.get("review_mark") if same else None
        if mark:
            return RequestMark.model_validate(mark)
        wanted = str(self.entry.get("comment_id") or "")
        if not same or self.entry.get("comment_status") != S.REVIEW.value:
            return None
        shown = next((c for c in self._comments() if c.id == wanted and c.trusted), None)
        return None if shown is None else mark_at(shown, at=shown.created_at)

    def _answer(self, session: PlanningSession, text: str) -> None:
        if session.status == S.REVIEW:
            self.notes.append("The session is in review: approve, reject <why> or cancel.")
            return
        discovery = session.status == S.DISCOVERY
        parsed = parse_answers(text, session) if discovery else parse_choices(text, session)
        self.notes += [f"Not used: {problem}" for problem in parsed.problems]
        login = self.run.trigger.actor.login
        remember(session, "user", session.status.value, text, author=login)
        self._apply(session, parsed)

    def _apply(self, session: PlanningSession, parsed: Parsed) -> None:
        for question_id, answer in parsed.answers.items():
            move.record_answer(session, question_id, answer)
        for decision_id, (option_id, rationale) in parsed.choices.items():
            move.record_decision(session, decision_id, option_id, rationale or None)

    def _timed_out(self, session: PlanningSession) -> bool:
        last = parse_time(session.updated_at)
        limit = timedelta(minutes=self.run.config.interactive.question_timeout_minutes)
        return last is not None and datetime.now(UTC) - last >= limit

    def _proceed_after(self, session: PlanningSession) -> str:
        """When the next run skips the open discovery questions (the sweep starts that run)."""
        last = parse_time(session.updated_at)
        if session.status != S.DISCOVERY or last is None or not session.open_questions():
            return ""
        limit = timedelta(minutes=self.run.config.interactive.question_timeout_minutes)
        return (last + limit).astimezone(UTC).isoformat(timespec="seconds")

    def _note_ignored_replies(self) -> None:
        """Replies since the last run by people who may not steer the session: said, not used.
        (Their events never start a run, so no write happens on their account.)"""
        seen = int(self.entry.get("seen_comment") or 0)
        actor = self.run.trigger.actor.login
        authors = {
            c.author
            for c in self._comments()
            if _number(c.id) > seen
            and c.author != actor
            and not (c.trusted and MARKER_PREFIX in c.body)
        }
        forge = self.run.config.forge
        for author in sorted(authors)[:MAX_IGNORED_AUTHORS]:
            if author not in forge.allowed_users and not self.run.forge.can_write(
                Actor(login=author)
            ):
                self.notes.append(f"Ignored the reply of @{author}: no write access.")

    # -- after every change

    def _progress(self, session: PlanningSession) -> CiOutcome:
        """Model calls where none waits for people, then the comment, label and outcome."""
        run = self.run
        run.load_earlier_runs()
        run.write_comment()
        operations = PlanningOperations(self._model(), self.store, run.forge.repository)
        try:
            operations.advance(session)
        except Exception as exc:  # the session comment and tracking comment must say so
            log.exception("the planning session failed")
            move.fail(session, run.forge.redact(f"{type(exc).__name__}: {exc}"))
            self.store.save(session)
        if self.approving and session.status == S.REVIEW:
            return self._hand_over(session)
        self._show(session)
        return self._finish(session, operations)

    def _model(self) -> Any:
        if self.model is None:
            from planner.model.llm import OpenAIModel

            self.model = OpenAIModel(self.run.config.llm)
        return self.model

    def _show(self, session: PlanningSession) -> None:
        body = render_session(
            session,
            phrase=self.run.config.forge.trigger_phrase,
            timeout_minutes=self.run.config.interactive.question_timeout_minutes,
            notes=self.notes,
            mention=self.run.trigger.actor.login,
        )
        comment = self._session_comment(session)
        run = self.run
        if comment is None:
            self._close_previous_phase(session)
        written = (
            run.forge.edit_comment(run.number, comment.id, body)
            if comment is not None
            else run.forge.post_comment(run.number, body)
        )
        seen = max((_number(c.id) for c in self._comments()), default=0)
        shown: dict[str, Any] = {"comment_id": written.id, "comment_url": written.url}
        if comment is None and session.status == S.REVIEW:  # a review shown: answers after it
            shown["review_mark"] = mark_at(written).model_dump()
        self._record(session, **shown, comment_status=session.status.value, seen_comment=seen)
        link = f"[the session comment]({written.url})" if written.url else "the session comment"
        run.view.notes = [
            f"Interactive planning session {session.session_id}: "
            f"{session.status.value}; see {link}."
        ]

    def _close_previous_phase(self, session: PlanningSession) -> None:
        """The last phase's comment, final: its last answers or decisions, no instructions."""
        same = self.entry.get("session", {}).get("session_id") == session.session_id
        wanted = str(self.entry.get("comment_id") or "")
        status = self.entry.get("comment_status")
        if not same or not wanted or status not in {s.value for s in ACTIVE}:
            return
        found = [c for c in self._comments() if c.id == wanted and c.trusted]
        if found and SESSION_MARKER in found[0].body:
            phase = PlanningSessionStatus(status)
            body = render_closed_phase(self._as_shown(session, phase), phase, session.status)
            self.run.forge.edit_comment(self.run.number, wanted, body)

    def _as_shown(self, session: PlanningSession, phase: PlanningSessionStatus) -> PlanningSession:
        """The session a phase's comment is closed with: as it is now (with the answers or
        decisions this event brought), but a review as it was shown — a rejection clears the
        design it judged, which its comment must keep."""
        if phase != S.REVIEW or session.design_summary:
            return session
        try:
            return PlanningSession.model_validate(self.entry.get("session"))
        except ValueError:
            return session

    def _session_comment(self, session: PlanningSession) -> CommentData | None:
        """The comment showing this phase of the session; None when a new phase (or session)
        waits for people: it gets a comment of its own (a new comment notifies, an edit does
        not). A session that ends is written into its last comment."""
        wanted = str(self.entry.get("comment_id") or "")
        same = self.entry.get("session", {}).get("session_id") == session.session_id
        new_phase = session.active and self.entry.get("comment_status") != session.status.value
        if not same or not wanted or new_phase:
            return None
        found = (c for c in self._comments() if c.id == wanted and c.trusted)
        return next((c for c in found if SESSION_MARKER in c.body), None)

    def _record(self, session: PlanningSession, **extra: Any) -> None:
        """The session's snapshot in the issue's history, with the comment that shows it."""
        exclude_from_git(self.run.workspace, self.directory)
        same = self.entry.get("session", {}).get("session_id") == session.session_id
        carried = ("comment_id", "comment_url", "comment_status", "seen_comment", "review_mark")
        kept: dict[str, Any] = {k: self.entry[k] for k in carried if same and k in self.entry}
        self.entry = record_for_issue(self.journal, session, **{**kept, **extra})

    def _finish(self, session: PlanningSession, operations: PlanningOperations) -> CiOutcome:
        waiting = session.active
        status = (
            "needs_human" if waiting else ("failed" if session.status == S.FAILED else "stopped")
        )
        reason = _reason(session)
        outcome = CiOutcome(
            status=status,  # type: ignore[arg-type]
            reason=self.run.forge.redact(reason),
            tokens_used=operations.usage.total_tokens,
            model_calls=operations.usage.model_calls,
        )
        if self.history is not None:
            self.history.save(self.directory, str(self.run.number))
        self.run.view.reason = reason
        self.run.view.proceed_after = self._proceed_after(session) if waiting else ""
        self.run.finish(outcome, "needs_human" if waiting else outcome.status)  # type: ignore[arg-type]
        return outcome

    # -- approval

    def _hand_over(self, session: PlanningSession) -> CiOutcome:
        """The same run plans and carries out the enhanced instruction."""
        outcomes: list[CiOutcome] = []

        def run_pass(instruction: str) -> str:
            self._show(session)
            run = self.run
            run.trigger = run.trigger.model_copy(update={"instruction": instruction})
            run.view.notes = []
            outcomes.append(
                run.execute(model=self.model, extra_tools=self.extra_tools, history=self.history)
            )
            return self._last_pass_id()

        approve_plan(session, self.store, run_pass)
        self._show(session)
        return outcomes[0]

    def _last_pass_id(self) -> str:
        self.journal = self._journal()
        starts = [e for e in self.journal.entries() if e.get("type") == "run_start"]
        return str(starts[-1].get("run_id", "")) if starts else ""


def approved_cancelled(session_id: str, phrase: str) -> str:
    return (
        f"Cancelled the approved planning session {session_id}: later passes plan from the "
        "issue as written, not from its design. The work already on the branch stays; to stop "
        f"planner's work on the issue, use `{phrase} stop`."
    )


def _short_id(session: PlanningSession) -> str:
    """The part of the session id a person types: `planning-1a2b3c4d`."""
    return session.session_id[: len("planning-") + 8]


def _number(comment_id: str) -> int:
    """Comment ids grow on both forges; the newest seen marks where the next run starts."""
    return int(comment_id) if comment_id.isdigit() else 0


def _reason(session: PlanningSession) -> str:
    reasons = {
        S.DISCOVERY: "waiting for answers to the planning session's questions",
        S.DESIGN: "waiting for the design decisions of the planning session",
        S.REVIEW: "waiting for approval of the planning session's design",
        S.CANCELLED: f"planning session {session.session_id} cancelled",
        S.FAILED: f"planning session failed: {session.error_message}",
    }
    return reasons.get(session.status, "")


def takes_event(trigger: Trigger | Sweep) -> bool:
    """A `run` or `resume` on an issue; a review's threads are the review's (planner.ci.review)."""
    return isinstance(trigger, Trigger) and trigger.command in ("run", "resume")


def handle(event: Event) -> CiOutcome | None:
    """The session's outcome when the event is one of a session's; None passes it to the pass."""
    return interactive_event(
        event.run, model=event.model, extra_tools=event.extra_tools, history=event.history
    )


HANDLER = Handler(kind="interactive", takes=takes_event, handle=handle)
