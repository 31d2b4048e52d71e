"""One run on one issue: what every kind of event (planner.ci.handlers) works through.

The run owns the issue's tracking comment, status label and notifications, holds the issue's
lease while an event is handled, and answers a person without a pass (`reply`). The pass itself
is planner.ci.handlers.issue_pass, handed in as `work`, so the handlers see the run and the run
imports none of them. The branch's durability and the planning sessions see the run as
planner.ci.run_port.IssueRunPort.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from planner.ci.branch.gitops import GitWorkspace, Identity
from planner.ci.branch.lease import Lease, LeaseBusy
from planner.ci.durability.durable import free_lease, lease_heartbeat, take_lease
from planner.ci.durability.signals import ran_before, start_deadline
from planner.ci.events.triggers import Trigger
from planner.ci.forges.base import CommentData, ForgeAdapter
from planner.ci.outcome import CiOutcome, OutcomeStatus
from planner.ci.report.costs import cost_report, render_usage_details
from planner.ci.report.tracking import (
    TrackingState,
    TrackingView,
    earlier_runs,
    render_tracking,
    run_line,
    safe_result,
)
from planner.ci.run_port import Target
from planner.config import ForgeConfig, PlannerConfig
from planner.core.interfaces import HistoryBackend, ToolProvider
from planner.memory.history import PlanningHistoryStore
from planner.outcome.deadline import DEADLINE
from planner.outcome.result import Notification, PassResult
from planner.run.runner import history_directory, new_run_id
from planner.text.inert import neutralize, no_closing_keywords

log = logging.getLogger(__name__)

QUESTION_MARKER = "<!-- planner:question -->"
NOTIFICATION_MARKER = "<!-- planner:notification -->"
ASKING_KINDS = frozenset({"clarification", "escalation"})
"""Notifications that already ask a person to act, so no generic question is posted."""
STOPPED_BY_REQUEST = "stopped on request (`/planner stop`); the work so far is saved"
REPLY_MARKER = "<!-- planner:reply -->"
"""A short answer to a command that changed nothing (nothing to cancel, still waiting)."""


class PassWork(Protocol):
    """The pass on the issue (planner.ci.handlers.issue_pass.work)."""

    def __call__(
        self,
        run: IssueRun,
        *,
        model: Any,
        extra_tools: tuple[ToolProvider, ...],
        history: HistoryBackend | None,
    ) -> CiOutcome: ...


class IssueRun:
    """One run on one issue: its comment and labels, its lease, and the pass (`work`). The
    branch's durability and the planning sessions see it as planner.ci.run_port.IssueRunPort."""

    def __init__(
        self,
        forge: ForgeAdapter,
        trigger: Trigger,
        target: Target,
        config: PlannerConfig,
        workspace: Path,
        env: Mapping[str, str],
        work: PassWork,
    ) -> None:
        self.forge = forge
        self.trigger = trigger
        self.target = target
        self.config = config
        self.workspace = workspace
        self.env = env
        self.work = work
        self.number = target.number
        self.branch = f"{config.forge.branch_prefix}{target.number}"
        self.labels = list(target.issue.labels)
        self.comment: CommentData | None = None
        self.posted: set[str] = set()
        self.git: GitWorkspace | None = None
        self.lease: Lease | None = None
        self.run_id = new_run_id()
        self.start_head = ""
        """HEAD as the branch was fetched, before the pass (planner.ci.durability.durable)."""
        self.stop_requested = False
        """A person asked this run to stop while its pass ran (stop_if_asked)."""
        self.view = TrackingView(
            state="working",
            actor=trigger.actor.login,
            event=trigger.event,
            branch=self.branch,
            branch_url=forge.branch_url(self.branch),
            run_url=forge.run_url(),
            phrase=config.forge.trigger_phrase,
        )

    # -- answers that change nothing ----------------------------------------------------------

    def reply(self, status: OutcomeStatus, text: str, marker: str = "") -> CiOutcome:
        """Answer the person on the issue and do nothing else: no pass, no label change."""
        mention = self._mention()
        markers = f"{REPLY_MARKER}\n{marker}\n" if marker else f"{REPLY_MARKER}\n"
        comment = self.forge.post_comment(self.number, f"{markers}{mention}{text}")
        outcome = CiOutcome(status=status, reason=text)
        outcome.platform, outcome.issue_number = self.forge.platform, self.number
        outcome.comment_url = comment.url
        return outcome

    # -- a stop request -----------------------------------------------------------------------

    def stop_if_asked(self) -> None:
        """Called after every step of this run's pass: a stop request (the paused label, set
        by `/planner stop` or by hand) ends the pass at its next step boundary."""
        if self.stop_requested:
            return
        labels = self.forge.get_issue(self.number).labels
        if self.config.forge.label_paused in labels:
            self.stop_requested = True
            DEADLINE.expire(STOPPED_BY_REQUEST)

    # -- the event under the lease -------------------------------------------------------------

    def leased(self, handle: Callable[[], CiOutcome]) -> CiOutcome:
        """`handle` the event while holding the issue's lease: one run per issue at a time,
        planning-session replies included (planner.ci.branch.lease)."""
        waited_from = time.time()
        try:
            self.lease = take_lease(self)
        except LeaseBusy as exc:
            return self._busy(str(exc))
        start_deadline(self.config.budget, ran_before(waited_from))
        try:
            with lease_heartbeat(self, self.lease):
                return handle()
        finally:
            free_lease(self, self.lease)

    def execute(
        self, *, model: Any, extra_tools: tuple[ToolProvider, ...], history: HistoryBackend | None
    ) -> CiOutcome:
        """A pass, under the lease (`leased`). The 'working' comment comes before the first
        model call: if it cannot be written, nothing has been written and the error goes to
        the entry point as it is."""
        return self.work(self, model=model, extra_tools=extra_tools, history=history)

    def _busy(self, reason: str) -> CiOutcome:
        """Another run held the issue all the time this run could wait: say so, touch nothing."""
        self.load_earlier_runs()
        self.view.notes.append(f"This event was not handled: {reason}")
        outcome = CiOutcome(status="failed", reason=reason)
        self.finish(outcome, "failed", label=False)  # the label is the running run's
        return outcome

    def store(self, directory: Path) -> PlanningHistoryStore:
        return PlanningHistoryStore(directory, self.forge.repository, str(self.number), self.run_id)

    # -- git identity ----------------------------------------------------------------------------

    def identity(self) -> Identity:
        forge = self.config.forge
        default = _platform_identity(self.forge.platform, self.env)
        return Identity(forge.commit_name or default.name, forge.commit_email or default.email)

    def commit_message(self, result: PassResult) -> str:
        title = no_closing_keywords(" ".join(self.target.issue.title.split())[:120])
        done, total = result.progress()
        lines = [
            f"planner: {title} ({self.forge.issue_reference(self.number)})",
            "",
            f"Pass ended {result.status}: {done}/{total} tasks complete.",
        ]
        actor = self.trigger.actor
        if actor.email and not actor.is_bot:
            lines += ["", f"Co-authored-by: {actor.login} <{actor.email}>"]
        return self.forge.redact("\n".join(lines)) + "\n"

    # -- the comment and the labels ----------------------------------------------------------

    def load_earlier_runs(self) -> None:
        existing = self.forge.find_tracking_comment(self.number)
        self.view.earlier_runs = earlier_runs(existing.body) if existing else []

    def write_comment(self) -> None:
        self.comment = self.forge.upsert_tracking_comment(self.number, render_tracking(self.view))

    def set_label(self, label: str) -> None:
        """`label` becomes the issue's only status label, whatever other runs set meanwhile."""
        forge = self.config.forge
        status = (
            forge.label_working,
            forge.label_needs_input,
            forge.label_paused,
            forge.label_done,
        )
        self.labels = self.forge.get_issue(self.number).labels
        self.labels = self.forge.set_status_label(self.number, label, status, self.labels)

    def finish(self, outcome: CiOutcome, state: TrackingState, label: bool = True) -> None:
        """Final comment, label and question; each is tried even if another fails. `label`
        False leaves the status label to the run that works on the issue (a paused label set
        meanwhile would ask it to stop)."""
        self.view.state = state
        if outcome.status in ("failed", "stopped") and outcome.reason:
            self.view.reason = outcome.reason
        self.view.earlier_runs.append(run_line(self.view))
        self.view.usage = self._usage_footer()
        status = _status_label(self.config.forge, state)
        steps: list[Callable[[], None]] = [self.write_comment]
        steps += [lambda: self.set_label(status)] if label else []
        steps.append(self.post_notifications)
        if state == "needs_human":
            steps.append(self._ask)
        for step in steps:
            try:
                step()
            except Exception:
                log.exception("could not write the final status to the issue")
        self._fill(outcome)

    def _usage_footer(self) -> str:
        """Calls, tokens and cost by call kind, this pass and the issue so far
        (planner.ci.report.costs); '' when the history cannot be read: the comment must still be
        written."""
        try:
            entries = self.store(history_directory(self.config, self.workspace)).entries()
        except Exception:
            log.exception("could not read the history for the usage footer")
            return ""
        llm = self.config.llm
        return render_usage_details(
            cost_report(entries, self.run_id, llm.prices, self.config.budget)
        )

    def post_notifications(self) -> None:
        """Each notification of the pass (plan revision, clarification, ...) once, on its own."""
        result = self.view.result
        for note in result.notifications if result is not None else []:
            if note.id in self.posted:
                continue
            self.posted.add(note.id)  # a failed post is logged, not retried on every update
            self.forge.post_comment(self.number, self._notification_body(note))

    def _notification_body(self, note: Notification) -> str:
        """The notice, inert; one that asks a person to act also mentions who started the run."""
        mention = self._mention() if note.kind in ASKING_KINDS else ""
        lead = f"{mention}planner needs your input.\n\n" if mention else ""
        return f"{NOTIFICATION_MARKER}\n{lead}{neutralize(note.body)}"

    def _ask(self) -> None:
        """A separate comment, because a person must act (it notifies them)."""
        result = self.view.result
        if result is None or any(n.kind in ASKING_KINDS for n in result.notifications):
            return
        safe = safe_result(result)
        lines = [QUESTION_MARKER, f"{self._mention()}planner needs your input here."]
        asked = safe.questions or safe.messages or [neutralize(safe.stop_reason)]
        lines += ["", *[f"- {q}" for q in asked]]
        phrase = self.config.forge.trigger_phrase
        lines += ["", f"Reply with `{phrase} <your answer>` to continue."]
        self.forge.post_comment(self.number, "\n".join(lines))

    def _mention(self) -> str:
        """Who is asked: the person who started the run; nobody for a run a bot started (the
        assumption sweep's dispatch), which must not ping planner's own bot account."""
        actor = self.trigger.actor
        return "" if actor.is_bot else f"@{actor.login} "

    def _fill(self, outcome: CiOutcome) -> None:
        outcome.platform = self.forge.platform
        outcome.issue_number = self.number
        outcome.branch = self.branch
        outcome.comment_url = self.comment.url if self.comment else ""
        outcome.pr_url = outcome.pr_url or self.view.pull_url
        result = self.view.result
        if result is not None and result.usage.model_calls:
            outcome.tokens_used = result.usage.total_tokens
            outcome.model_calls = result.usage.model_calls
            outcome.history_path = result.history_path


class RestoreOnce:
    """The job's history backend, restored once: the handlers of one event share it (a session
    check and the pass after it; an artifact backend would otherwise download and report twice)."""

    def __init__(self, backend: HistoryBackend) -> None:
        self.backend = backend
        self.restored: bool | None = None

    def restore(self, directory: Path, issue: str) -> bool:
        if self.restored is None:
            self.restored = self.backend.restore(directory, issue)
        return self.restored

    def save(self, directory: Path, issue: str) -> None:
        self.backend.save(directory, issue)

    @property
    def problems(self) -> list[str]:
        """What the backend could not read (an artifact from a fork, a broken archive)."""
        return list(getattr(self.backend, "problems", []))


def restore_once(backend: HistoryBackend | None) -> HistoryBackend | None:
    return None if backend is None else RestoreOnce(backend)


class TrackingReporter:
    """ProgressReporter: keeps the tracking comment current while the pass runs."""

    def __init__(self, run: IssueRun) -> None:
        self.run = run

    def update(self, snapshot: Any) -> None:
        if isinstance(snapshot, PassResult):
            self.run.view.result = snapshot
            self.run.write_comment()
            self.run.post_notifications()
            self.run.stop_if_asked()


FINAL_STATES: dict[str, TrackingState] = {
    "completed": "completed",
    "in_progress": "in_progress",
    "needs_human": "needs_human",
    "failed": "failed",
}


def tracking_state(status: OutcomeStatus) -> TrackingState:
    return FINAL_STATES.get(status, "stopped")


def _status_label(forge: ForgeConfig, state: TrackingState) -> str:
    """The label a run ends with. Only needs_human gets the one under which a plain reply
    answers: a paused, failed or stopped run waits for an explicit phrase."""
    if state == "completed":
        return forge.label_done
    return forge.label_needs_input if state == "needs_human" else forge.label_paused


def _platform_identity(platform: str, env: Mapping[str, str]) -> Identity:
    if platform == "github":
        return Identity(
            "github-actions[bot]", "41898282+github-actions[bot]@users.noreply.github.com"
        )
    if platform == "gitlab":
        host = env.get("CI_SERVER_HOST") or "gitlab.invalid"
        return Identity("planner", f"planner@noreply.{host}")
    return Identity("planner", "planner@localhost")
