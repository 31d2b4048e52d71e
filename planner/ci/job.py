"""What a CI entry point calls: one event in, one pass (or a skip) out.

    outcome = run_for_event("github", workspace=Path.cwd(), config=config, env=os.environ)

parse the trigger -> skip checks (read-only: no API writes on any skip path) -> post the
"working" tracking comment before the first model call -> run_pass with a reporter that edits
that comment -> commit and push the issue branch -> open/update the PR/MR -> final comment and
status label. Once the tracking comment exists, every failure still ends with the final status
written to it. Forge adapters are imported lazily, so the GitHub path never loads GitLab code.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import requests

from planner.ci.branch.commit_policy import CommitRules
from planner.ci.branch.gitops import GitWorkspace, Identity, on_branch
from planner.ci.branch.lease import Lease, LeaseBusy
from planner.ci.conversation import conversation
from planner.ci.durability.durable import (
    CheckpointReporter,
    free_lease,
    history_notes,
    lease_heartbeat,
    publish_pass,
    reconcile_branch,
    restore_from_lease,
    skipped_history_notes,
    take_lease,
)
from planner.ci.durability.signals import ran_before, start_deadline
from planner.ci.events.triggers import (
    Platform,
    Skip,
    Sweep,
    Trigger,
    gitlab_trigger_from_env,
    load_github_event,
    local_reply_trigger,
    local_trigger,
    parse_github_event,
    parse_gitlab_event,
)
from planner.ci.forges.base import (
    MARKER_PREFIX,
    CommentData,
    ForgeAdapter,
    IssueData,
    PullRequestData,
    parse_time,
)
from planner.ci.forges.http import RetryPolicy
from planner.ci.gate.approvals import (
    WaitingRequest,
    last_mark,
    record_answer,
    remember_shown,
    waiting_request,
)
from planner.ci.gate.request_marks import (
    BEFORE_REQUEST,
    NOT_ON_OWN_LINE,
    RequestMark,
    came_after,
    mark_at,
    mark_now,
)
from planner.ci.gate.witness import ForgeWitness
from planner.ci.handlers.interactive import interactive_event, restore_once
from planner.ci.outcome import CiOutcome, OutcomeStatus
from planner.ci.report.costs import cost_report, render_usage_details
from planner.ci.report.tracking import (
    CHECKLIST_CHARS,
    TrackingState,
    TrackingView,
    capped_items,
    earlier_runs,
    final_judgement_lines,
    render_tracking,
    run_line,
    safe_result,
    verification_lines,
)
from planner.ci.review.answers import answer_threads
from planner.ci.review.event import review_instruction, review_skip
from planner.ci.review.phase import ReviewPhase
from planner.ci.review.start import start_review
from planner.ci.run_port import Target
from planner.config import ForgeConfig, McpServerConfig, PlannerConfig
from planner.core.errors import UserInputError
from planner.core.interfaces import HistoryBackend, ToolProvider
from planner.memory.history import PlanningHistoryStore, expel_foreign
from planner.outcome.deadline import DEADLINE
from planner.outcome.result import Notification, PassResult, render_checklist
from planner.run.history_view import history_plan
from planner.run.runner import (
    PassSetup,
    history_directory,
    new_run_id,
    repository_name,
    run_pass,
)
from planner.text.inert import neutralize, no_closing_keywords
from planner.text.issue import Comment, IssueContext
from planner.tools.fence import credential_files
from planner.tools.mcp_config import load_file_servers

log = logging.getLogger(__name__)

CLOSES = re.compile(r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s+#(\d+)\b", re.IGNORECASE)
QUESTION_MARKER = "<!-- planner:question -->"
NOTIFICATION_MARKER = "<!-- planner:notification -->"
ASKING_KINDS = frozenset({"clarification", "escalation"})
"""Notifications that already ask a person to act, so no generic question is posted."""
PULL_MARKER = "<!-- planner:pull-request -->"
STOP_REQUESTED = (
    "Stop requested: the run working on this issue stops after its current step, saves its "
    "work and says so in the tracking comment. Should that run have died, the issue stays "
    "stopped all the same: no event from before this request starts work on it."
)
STOPPED_BY_REQUEST = "stopped on request (`/planner stop`); the work so far is saved"
STOPPED_BEFORE_START = (
    "stopped on request (`/planner stop`, made after this event while another run held the "
    "issue); nothing was done"
)
REPLY_MARKER = "<!-- planner:reply -->"
"""A short answer to a command that changed nothing (nothing to cancel, still waiting)."""
STOP_MARKER = "<!-- planner:stop-requested -->"
"""On the reply to a stop that another run's lease kept from acting at once: the stop holds
for every event that came before it, whichever run takes the lease next (planner.ci.job)."""
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


def run_for_event(
    platform: Platform,
    *,
    workspace: Path,
    config: PlannerConfig,
    env: Mapping[str, str],
    event: Mapping[str, Any] | None = None,
    event_name: str | None = None,
    model: Any = None,
    extra_tools: tuple[ToolProvider, ...] = (),
    history: HistoryBackend | None = None,
    session: requests.Session | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> CiOutcome:
    """Handle one event end to end; see the module docstring and the env of each platform."""
    trigger = read_trigger(
        platform,
        config.forge,
        env,
        event,
        event_name,
        act_on_changes_requested=config.review.act_on_changes_requested,
    )
    if isinstance(trigger, Sweep):  # the entry point runs planner.ci.handlers.sweep for these
        return skipped(platform, f"{trigger.event}: a sweep, not a run on one issue")
    if isinstance(trigger, Skip):
        return skipped(platform, trigger.reason)
    retry = RetryPolicy(config.forge.api_max_retries, config.forge.api_max_wait_seconds, sleep)
    forge = open_forge(platform, env, config.forge, workspace, trigger, session, retry)
    trigger = local_reply(forge, trigger, config.forge)
    target = decide(forge, trigger, config.forge)
    if isinstance(target, Skip):
        return skipped(platform, target.reason, trigger.issue_number)
    nothing = review_skip(forge, trigger, target, config)
    if nothing is not None:
        return skipped(platform, nothing.reason, target.number)
    log.info("acting on %s", trigger.describe())
    run = IssueRun(forge, trigger, target, config, workspace, env)
    if trigger.command == "stop":
        return run.stop(history)
    history = restore_once(history)

    def handle() -> CiOutcome:
        # A stop asked for after this event holds for every kind of event, sessions' included;
        # a cancel only ends work, so it is answered even then.
        stopped = None if _cancels(trigger) else run.stopped_after_event(history)
        if stopped is not None:
            return stopped
        # Interactive planning sessions (planner.ci.handlers.interactive) take the events that
        # are theirs.
        session = interactive_event(run, model=model, extra_tools=extra_tools, history=history)
        return session or run.execute(model=model, extra_tools=extra_tools, history=history)

    return run.leased(handle)


def _cancels(trigger: Trigger) -> bool:
    """`/planner cancel`: it starts nothing, so no stop needs to hold it back."""
    words = trigger.instruction.split()
    return trigger.command == "run" and words[:1] == ["cancel"]


def skipped(platform: str, reason: str, number: int | None = None) -> CiOutcome:
    log.info("skipped: %s", reason)
    return CiOutcome(status="skipped", reason=reason, platform=platform, issue_number=number)


# -- trigger and forge ---------------------------------------------------------------------------


def read_trigger(
    platform: Platform,
    config: ForgeConfig,
    env: Mapping[str, str],
    event: Mapping[str, Any] | None,
    event_name: str | None,
    *,
    act_on_changes_requested: bool = False,
) -> Trigger | Skip | Sweep:
    """GitHub: GITHUB_EVENT_NAME + GITHUB_EVENT_PATH. GitLab: TRIGGER_PAYLOAD or
    PLANNER_ISSUE_IID. Local: event {"issue", "instruction", "actor"} or PLANNER_ISSUE /
    PLANNER_INSTRUCTION. An explicit `event` replaces the one the environment names."""
    if platform == "github":
        if event is None:
            event_name, event = load_github_event(env)
        name = event_name or env.get("GITHUB_EVENT_NAME", "")
        return parse_github_event(
            name, event, config, act_on_changes_requested=act_on_changes_requested
        )
    if platform == "gitlab":
        if event is not None:
            return parse_gitlab_event(event, config)
        return gitlab_trigger_from_env(env, config)
    if platform == "local":
        inputs = event or {"issue": env.get("PLANNER_ISSUE", ""), "actor": env.get("USER", "")}
        if not inputs.get("issue"):
            raise UserInputError("a local run needs an issue number (PLANNER_ISSUE)")
        instruction = str(inputs.get("instruction", env.get("PLANNER_INSTRUCTION", "")))
        actor = str(inputs.get("actor") or "local")
        return local_trigger(inputs["issue"], config, instruction=instruction, actor=actor)
    raise UserInputError(f"unknown platform {platform!r} (github, gitlab or local)")


def local_reply(forge: ForgeAdapter, trigger: Trigger, config: ForgeConfig) -> Trigger:
    """A local run without --instruction takes the oldest comment file no run has taken yet as
    its event (README: a person's replies are files in .planner/issues/N/comments/)."""
    if trigger.platform != "local" or trigger.instruction or trigger.command != "run":
        return trigger
    comment = forge.next_reply(trigger.issue_number or 0)
    return trigger if comment is None else local_reply_trigger(trigger, comment, config)


def open_forge(
    platform: Platform,
    env: Mapping[str, str],
    config: ForgeConfig,
    workspace: Path,
    trigger: Trigger,
    session: requests.Session | None = None,
    retry: RetryPolicy | None = None,
) -> ForgeAdapter:
    """The adapter for `platform`, imported only when needed."""
    if platform == "github":
        from planner.ci.forges.github import GitHubForge

        return GitHubForge.from_env(env, config, session=session, retry=retry)
    if platform == "gitlab":
        from planner.ci.forges.gitlab import GitLabForge

        filled = {"CI_PROJECT_ID": trigger.project_id, "CI_PROJECT_PATH": trigger.repository}
        merged = {**{k: v for k, v in filled.items() if v}, **{k: v for k, v in env.items() if v}}
        return GitLabForge.from_env(merged, config, session=session, retry=retry)
    from planner.ci.forges.local import LocalForge

    return LocalForge(workspace, repository_name(workspace))


# -- act or skip (read-only) ---------------------------------------------------------------------


def decide(forge: ForgeAdapter, trigger: Trigger, config: ForgeConfig) -> Target | Skip:
    """Permission, the issue a PR comment is about, closed/locked issues. Never writes."""
    if not permitted(forge, trigger, config):
        return Skip(reason=f"@{trigger.actor.login} does not have write access to the repository")
    pull = None
    number = trigger.issue_number
    if number is None:
        pull = forge.get_pull_request(trigger.pull_request or 0)
        number = issue_of_pull_request(pull, config.branch_prefix)
        if number is None:
            return Skip(reason=f"pull request {trigger.pull_request} was not opened by planner")
    issue = forge.get_issue(number)
    problem = _unworkable(issue)
    return Skip(reason=problem) if problem else Target(number, issue, pull)


def permitted(forge: ForgeAdapter, trigger: Trigger, config: ForgeConfig) -> bool:
    actor = trigger.actor
    if trigger.kind == "sweep":  # a bot started it: only planner's own token, i.e. the sweep
        return forge.is_token_user(actor)
    if actor.login in config.allowed_users or (actor.is_bot and actor.login in config.allowed_bots):
        return True
    return forge.can_write(actor)


def issue_of_pull_request(pull: PullRequestData | None, prefix: str) -> int | None:
    """The issue a planner PR closes: from its branch name, else from `Closes #N`."""
    if pull is None or not pull.same_repository or not pull.head.startswith(prefix):
        return None
    suffix = pull.head[len(prefix) :]
    if suffix.isdigit():
        return int(suffix)
    found = CLOSES.search(pull.body)
    return int(found.group(1)) if found else None


def _unworkable(issue: IssueData) -> str:
    if issue.is_pull_request:
        return f"#{issue.number} is a pull request, not an issue"
    if issue.state == "closed":
        return f"issue #{issue.number} is closed"
    if issue.locked:
        return f"issue #{issue.number} is locked"
    return ""


def issue_context(
    forge: ForgeAdapter, trigger: Trigger, target: Target, comments: list[CommentData]
) -> IssueContext:
    """The issue for the prompt: only comments made before the event, never our own."""
    cutoff = parse_time(trigger.event_time)
    kept = [c for c in comments if _visible_to_model(c, trigger, cutoff)]
    issue = target.issue
    return IssueContext(
        repository=forge.repository,
        number=str(target.number),
        title=issue.title,
        body=issue.body,
        comments=[
            Comment(
                author=c.author,
                body=c.body,
                created_at=c.created_at,
                id=c.id,
                edited_after_trigger=c.edited_after(cutoff),
                on=c.on,
            )
            for c in kept
        ],
        labels=issue.labels,
        url=issue.url,
        author=issue.author,
        instruction=_instruction(forge, trigger, target),
    )


def _visible_to_model(comment: CommentData, trigger: Trigger, cutoff: datetime | None) -> bool:
    if comment.id == trigger.comment_id or (comment.trusted and MARKER_PREFIX in comment.body):
        return False
    if cutoff is None:
        return True
    created = comment.created
    return created is not None and created <= cutoff


def _instruction(forge: ForgeAdapter, trigger: Trigger, target: Target) -> str:
    if trigger.command == "resume":
        return ""
    if trigger.command == "replan":
        return f"Replan requested: {trigger.instruction or 'no reason given'}"
    if trigger.kind == "review":
        return review_instruction(forge, trigger, target)
    if target.pull is not None and trigger.instruction:
        reference = forge.pull_reference(target.pull.number)
        return f"Feedback on pull request {reference}: {trigger.instruction}"
    return trigger.instruction


# -- one run on one issue ------------------------------------------------------------------------


class IssueRun:
    """One run on one issue: the pass, its branch, pull request, comment and labels. The
    branch's durability and the planning sessions see it as planner.ci.run_port.IssueRunPort."""

    def __init__(
        self,
        forge: ForgeAdapter,
        trigger: Trigger,
        target: Target,
        config: PlannerConfig,
        workspace: Path,
        env: Mapping[str, str],
    ) -> None:
        self.forge = forge
        self.trigger = trigger
        self.target = target
        self.config = config
        self.workspace = workspace
        self.env = env
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

    # -- stop --------------------------------------------------------------------------------

    def stop(self, history: HistoryBackend | None) -> CiOutcome:
        """`/planner stop`: no pass; the comment and labels say it is stopped. While another
        run works on the issue (it holds the lease), that run is asked to stop instead."""
        try:
            self.lease = take_lease(self, wait=0)
        except LeaseBusy:
            return self._ask_running_pass_to_stop()
        try:
            self.load_earlier_runs()
            self.view.result = self._history_snapshot(history)
            outcome = CiOutcome(status="stopped", reason=f"stopped by @{self.trigger.actor.login}")
            self.finish(outcome, "stopped")
            return outcome
        finally:
            free_lease(self, self.lease)

    def _ask_running_pass_to_stop(self) -> CiOutcome:
        """The paused label is the request: the running pass looks at the labels after every
        step, stops at the next one, saves its work and writes its final comment itself."""
        self._set_label(self.config.forge.label_paused)
        return self.reply("stopped", STOP_REQUESTED, marker=STOP_MARKER)

    def stopped_after_event(self, history: HistoryBackend | None) -> CiOutcome | None:
        """A stop asked for after this event, while another run held the issue (alive, or dead
        and its lease since taken over): it holds for this event too, so no pass starts and the
        tracking comment says the issue is stopped. None when no such stop is in force."""
        if self.config.forge.label_paused not in self.forge.get_issue(self.number).labels:
            return None
        requests = [
            c for c in self.forge.list_comments(self.number) if c.trusted and STOP_MARKER in c.body
        ]
        marks = [mark_at(c, at=c.created_at) for c in requests]
        after = [m for m in marks if not came_after(self.forge, self.trigger, m)]
        if not after:
            return None
        self.load_earlier_runs()
        self.view.result = self._history_snapshot(history)
        outcome = CiOutcome(status="stopped", reason=STOPPED_BEFORE_START)
        self.finish(outcome, "stopped")
        return outcome

    def stop_if_asked(self) -> None:
        """Called after every step of this run's pass: a stop request (the paused label, set
        by `/planner stop` or by hand) ends the pass at its next step boundary."""
        if self.stop_requested:
            return
        labels = self.forge.get_issue(self.number).labels
        if self.config.forge.label_paused in labels:
            self.stop_requested = True
            DEADLINE.expire(STOPPED_BY_REQUEST)

    def _history_snapshot(self, history: HistoryBackend | None) -> PassResult | None:
        directory = history_directory(self.config, self.workspace)
        if history is not None:
            history.restore(directory, str(self.number))
        store = PlanningHistoryStore(directory, self.forge.repository, str(self.number))
        restore_from_lease(self, self.lease, store)  # may be longer than the cache's copy
        return history_plan(store, "in_progress")  # as every surface shows the plan

    # -- a pass ------------------------------------------------------------------------------

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
        return self._execute(model=model, extra_tools=extra_tools, history=history)

    def _busy(self, reason: str) -> CiOutcome:
        """Another run held the issue all the time this run could wait: say so, touch nothing."""
        self.load_earlier_runs()
        self.view.notes.append(f"This event was not handled: {reason}")
        outcome = CiOutcome(status="failed", reason=reason)
        self.finish(outcome, "failed", label=False)  # the label is the running run's
        return outcome

    def _execute(
        self, *, model: Any, extra_tools: tuple[ToolProvider, ...], history: HistoryBackend | None
    ) -> CiOutcome:
        self.load_earlier_runs()
        self.write_comment()
        try:
            self._set_label(self.config.forge.label_working)
            outcome = self._work(model, extra_tools, history)
        except Exception as exc:  # whatever broke, the comment must say how the run ended
            log.exception("the run failed")
            outcome = CiOutcome(status="failed", reason=self.forge.redact(f"{exc}"))
        if self.stop_requested and outcome.status == "in_progress":
            outcome.status, outcome.reason = "stopped", STOPPED_BY_REQUEST
        self.finish(outcome, _tracking_state(outcome.status))
        return outcome

    def _work(
        self, model: Any, extra_tools: tuple[ToolProvider, ...], history: HistoryBackend | None
    ) -> CiOutcome:
        git = self.git = GitWorkspace(self.workspace, self.forge.git_remote())
        base = self.forge.default_branch()
        # Read from the default branch's checkout: the issue branch is the last pass's work.
        mcp_servers = load_file_servers(self.config.tools, self.workspace)
        git.prepare(self.branch, base)
        issue = issue_context(
            self.forge,
            self.trigger,
            self.target,
            conversation(self.forge, self.number, self.branch),
        )
        base_commit = git.state.base_sha if git.state else None
        # Every commit of the run, checkpoints during the pass included, obeys the path rules.
        git.commit_rules = CommitRules.for_pass(
            self.config, self.workspace, self.checkout_credentials
        )
        directory = history_directory(self.config, self.workspace)
        try:
            result = self._pass(issue, model, extra_tools, history, mcp_servers, base_commit)
            self.view.result = result
            result, commit = publish_pass(self, git, result, self._store(directory))
        finally:
            self.view.notes.extend(refusal.describe() for refusal in git.refused)
            self.view.notes.extend(f"History: {line}" for line in expel_foreign(directory))
            if history is not None:
                history.save(directory, str(self.number))
        self.view.result = result
        self._answer_review(result, directory, history)
        if not git.commits_ahead():
            self.view.notes.append("No changes so far, so there is no commit and no pull request.")
            return self._outcome(result, commit, None)
        if self._closed_by_a_person(git):
            return self._outcome(result, commit, None)
        return self._outcome(result, commit, self._pull_request(result, base))

    def _answer_review(
        self, result: PassResult, directory: Path, history: HistoryBackend | None
    ) -> None:
        """Each review thread the pass took up gets its reply (planner.ci.review); what was
        posted is in the history, which is saved again."""
        try:
            posted = answer_threads(self, result, self._store(directory))
        except Exception:  # the pass's work is pushed: a failed reply must not undo the run
            log.exception("could not answer the review threads")
            self.view.notes.append("Could not answer the review threads; the next run will.")
            return
        if posted and history is not None:
            history.save(directory, str(self.number))

    @functools.cached_property
    def checkout_credentials(self) -> tuple[Path, ...]:
        """Files in the checkout that the job's environment names as credentials (a key that
        google-github-actions/auth wrote there): no tool reads them, no commit holds them."""
        root = self.workspace.resolve()
        named = {*credential_files(os.environ, root), *credential_files(self.env, root)}
        return tuple(sorted(Path(p) for p in named if Path(p).is_relative_to(root)))

    def _pass(
        self,
        issue: IssueContext,
        model: Any,
        extra_tools: tuple[ToolProvider, ...],
        history: HistoryBackend | None,
        mcp_servers: dict[str, McpServerConfig],
        base_commit: str | None = None,
    ) -> PassResult:
        directory = history_directory(self.config, self.workspace)
        if history is not None:
            history.restore(directory, str(self.number))
        history_notes(self, history)
        restore_from_lease(self, self.lease, self._store(directory))
        reconcile_branch(self, self._store(directory))
        issue = self._record_approval_answer(issue, directory)
        setup = PassSetup(
            config=self.config,
            workspace=self.workspace,
            run_id=self.run_id,
            reporter=CheckpointReporter(self, TrackingReporter(self)),
            extra_tools=extra_tools,
            model=model,
            protected=(
                *((self.workspace / ".planner",) if self.forge.platform == "local" else ()),
                *self.checkout_credentials,
            ),
            mcp_file_servers=mcp_servers,
            base_commit=base_commit,
            phases=(ReviewPhase(),),
            set_up=(functools.partial(start_review, self),),  # review threads: after set-up
            witness=ForgeWitness(
                self.forge,
                self.config.forge,
                self.number,
                self.trigger,
                self.run_id,
                self._store(directory),
            ),
        )
        result = run_pass(setup, issue)
        skipped_history_notes(self, result)
        waiting = waiting_request(self.config, self.workspace, directory, issue)
        self.view.approval = waiting.section
        self._show_request(directory, waiting)
        return result

    def _show_request(self, directory: Path, waiting: WaitingRequest) -> None:
        """The approval request, visible on the issue before its mark is taken: only answers
        that come after the mark count (planner.ci.gate.request_marks)."""
        if not waiting.section:
            return
        self.write_comment()
        remember_shown(self._store(directory), waiting, lambda: self._mark(waiting.section))

    def _mark(self, section: str) -> RequestMark:
        """Answers come on the issue and on planner's pull request: the mark covers both."""
        pull = self.forge.find_pull_request(self.branch)
        return mark_now(self.forge, self.number, section, pull.number if pull else None)

    def _store(self, directory: Path) -> PlanningHistoryStore:
        return PlanningHistoryStore(directory, self.forge.repository, str(self.number), self.run_id)

    def _record_approval_answer(self, issue: IssueContext, directory: Path) -> IssueContext:
        """`/planner approve a1` is an answer for PlanTool, not an instruction for the model.
        Only a plain `/planner <text>` can be one: `/planner replan approve all` is a reason.
        Other text while approvals wait is no answer either: it rejects nothing, and the next
        pass reads it among the issue's comments."""
        if self.trigger.command != "run":
            return issue
        line = record_answer(
            self.config,
            self.workspace,
            directory,
            issue,
            self.trigger.instruction,
            self.trigger.actor.login,
            refusal=lambda: self._answer_refusal(directory),
            comment_id=self.trigger.comment_id or f"event:{self.run_id}",
            thread=self.trigger.issue_number or self.trigger.pull_request,
        )
        if line is None:
            return issue
        self.view.notes.append(line)
        return issue.model_copy(update={"instruction": ""})

    def _answer_refusal(self, directory: Path) -> str:
        """Why this event cannot answer the approval request ('' when it can)."""
        if not self.trigger.own_line:
            return NOT_ON_OWN_LINE
        mark = last_mark(self._store(directory))
        return "" if came_after(self.forge, self.trigger, mark) else BEFORE_REQUEST

    def _outcome(self, result: PassResult, commit: str, pull: PullRequestData | None) -> CiOutcome:
        return CiOutcome(
            status=result.status,
            reason=self.forge.redact(result.stop_reason),
            commit=commit,
            pr_url=pull.url if pull else "",
            tokens_used=result.usage.total_tokens,
            model_calls=result.usage.model_calls,
            history_path=result.history_path,
        )

    # -- the pull request ----------------------------------------------------------------------

    def _closed_by_a_person(self, git: GitWorkspace) -> bool:
        """A person closed the branch's pull request without merging it, and the branch still
        carries that work: never reopen it or open another behind their back; say so."""
        if self.forge.find_pull_request(self.branch) is not None:
            return False
        closed = self.forge.last_closed_pull_request(self.branch)
        if closed is None:
            return False
        reference = self.forge.pull_reference(closed.number)
        if closed.merged:
            self.view.notes.append(f"{reference} was merged; this run's changes go to a new one.")
            return False
        if closed.head_sha and not on_branch(git, closed.head_sha, ""):
            return False  # the branch was made anew since (deleted, then redone): new work
        self.view.notes.append(closed_pull_note(reference, closed, self.branch))
        return True

    def _pull_request(self, result: PassResult, base: str) -> PullRequestData:
        regressed = _tests_regressed(result)
        draft = (self.config.forge.draft_pr and result.status != "completed") or regressed
        pull = self.forge.upsert_pull_request(
            head=self.branch,
            base=base,
            title=_title_prefix(result) + self._pull_title(),
            body=self._pull_body(result),
            draft=draft,
        )
        self.view.pull_url = pull.url
        self.view.pull_label = self.forge.pull_reference(pull.number)
        if pull.draft and not draft:
            self.view.notes.append("The plan is complete: mark the draft pull request ready.")
        return pull

    def _pull_title(self) -> str:
        title = no_closing_keywords(" ".join(self.target.issue.title.split())[:200])
        title = title or f"Issue {self.number}"
        return f"{title} ({self.forge.issue_reference(self.number)})"

    def _pull_body(self, result: PassResult) -> str:
        """Outcomes and checklist, within GitHub's body limit whatever the model wrote."""
        safe = safe_result(result)
        outcomes = safe.summary.key_outcomes if safe.summary else []
        lines = [PULL_MARKER, f"Closes {self.forge.issue_reference(self.number)}", ""]
        lines += _outcome_lines(outcomes)
        lines += ["", render_checklist(safe, CHECKLIST_CHARS).strip(), ""]
        lines += [*verification_lines(result.verification), ""] if result.verification else []
        lines += [*final_judgement_lines(result), ""] if result.result_quality else []
        if self.comment is not None and self.comment.url:
            lines.append(f"Progress and history: [tracking comment]({self.comment.url})")
        lines.append("_Planned and implemented by planner; review before merging._")
        body = "\n".join(lines)
        return body if len(body) <= PULL_BODY_CHARS else body[: PULL_BODY_CHARS - 40] + "\n…(cut)"

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

    def _set_label(self, label: str) -> None:
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
        steps += [lambda: self._set_label(status)] if label else []
        steps.append(self._post_notifications)
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
            entries = self._store(history_directory(self.config, self.workspace)).entries()
        except Exception:
            log.exception("could not read the history for the usage footer")
            return ""
        llm = self.config.llm
        return render_usage_details(
            cost_report(entries, self.run_id, llm.prices, self.config.budget)
        )

    def _post_notifications(self) -> None:
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


class TrackingReporter:
    """ProgressReporter: keeps the tracking comment current while the pass runs."""

    def __init__(self, run: IssueRun) -> None:
        self.run = run

    def update(self, snapshot: Any) -> None:
        if isinstance(snapshot, PassResult):
            self.run.view.result = snapshot
            self.run.write_comment()
            self.run._post_notifications()
            self.run.stop_if_asked()


FINAL_STATES: dict[str, TrackingState] = {
    "completed": "completed",
    "in_progress": "in_progress",
    "needs_human": "needs_human",
    "failed": "failed",
}


def closed_pull_note(reference: str, closed: PullRequestData, branch: str) -> str:
    by = f" by @{closed.closed_by}" if closed.closed_by else ""
    return (
        f"{reference} was closed{by} without merging, so planner did not reopen it or open "
        f"another: this run's commits are on `{branch}`. Reopen {reference} to review them, "
        f"or delete the branch `{branch}` to have planner redo the work in a new one."
    )


def _title_prefix(result: PassResult) -> str:
    """What the title says before a person reads the body: tests failing, or nothing proving
    the fix."""
    note = result.verification
    if note is None:
        return ""
    if note.unfinished:
        return TESTS_FAILING_TITLE
    return UNPROVEN_TITLE if note.unproven else ""


def _tests_regressed(result: PassResult) -> bool:
    """Tests that passed at the baseline fail now, or the issue's own test does (the fix is
    unproven): a draft, whatever forge.draft_pr says."""
    note = result.verification
    return note is not None and (note.unfinished or bool(note.unproven))


def _outcome_lines(outcomes: list[str]) -> list[str]:
    """The model's key outcomes as list items: each one line, all together OUTCOMES_CHARS."""
    return capped_items(outcomes, OUTCOME_CHARS, OUTCOMES_CHARS, "outcomes")


def _tracking_state(status: OutcomeStatus) -> TrackingState:
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
