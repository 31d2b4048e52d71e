"""The pass on the issue: every event no other handler answers (a labelled issue, a comment,
`resume`, `replan`, a workflow dispatch, the sweep's run, review feedback after
planner.ci.handlers.review, a session's approved design after planner.ci.handlers.interactive).

The 'working' tracking comment comes before the first model call -> run_pass with a reporter
that edits that comment -> commit and push the issue branch -> open/update the PR/MR -> final
comment and status label. Once the tracking comment exists, every failure still ends with the
final status written to it. An approval answer (`/planner approve a1`) is recorded just before
the pass, once the issue's history is restored, so it is a step of the pass, not an event kind
of its own; the request it answers is shown after the pass.
"""

from __future__ import annotations

import functools
import logging
import os
from pathlib import Path
from typing import Any

from planner.ci.branch.commit_policy import CommitRules
from planner.ci.branch.gitops import GitWorkspace, on_branch
from planner.ci.conversation import conversation
from planner.ci.durability.durable import (
    CheckpointReporter,
    history_notes,
    publish_pass,
    reconcile_branch,
    restore_from_lease,
    skipped_history_notes,
)
from planner.ci.forges.base import PullRequestData
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
    mark_now,
)
from planner.ci.gate.witness import ForgeWitness
from planner.ci.handlers import Event, Handler
from planner.ci.issue_run import STOPPED_BY_REQUEST, IssueRun, TrackingReporter, tracking_state
from planner.ci.outcome import CiOutcome
from planner.ci.report.pull_request import closed_pull_note, pull_body, pull_title, tests_regressed
from planner.ci.review.answers import answer_threads
from planner.ci.review.phase import ReviewPhase
from planner.ci.review.start import start_review
from planner.ci.target import issue_context
from planner.config import McpServerConfig
from planner.core.interfaces import HistoryBackend, ToolProvider
from planner.memory.history import expel_foreign
from planner.outcome.result import PassResult
from planner.run.runner import PassSetup, history_directory, run_pass
from planner.text.issue import IssueContext
from planner.tools.mcp.servers import load_file_servers
from planner.tools.sandbox.fence import credential_files

log = logging.getLogger(__name__)


def work(
    run: IssueRun,
    *,
    model: Any,
    extra_tools: tuple[ToolProvider, ...],
    history: HistoryBackend | None,
) -> CiOutcome:
    """A pass on the issue, under the lease the caller holds (IssueRun.execute)."""
    return IssuePass(run)._execute(model=model, extra_tools=extra_tools, history=history)


def handle(event: Event) -> CiOutcome:
    return event.run.execute(
        model=event.model, extra_tools=event.extra_tools, history=event.history
    )


HANDLER = Handler(kind="pass", takes=lambda trigger: True, handle=handle)
"""The last entry: it takes every event the ones before it passed on."""


class IssuePass:
    """The pass of one run on its issue, and the branch, pull request and history it leaves."""

    def __init__(self, run: IssueRun) -> None:
        self.run = run

    def _execute(
        self, *, model: Any, extra_tools: tuple[ToolProvider, ...], history: HistoryBackend | None
    ) -> CiOutcome:
        self.run.load_earlier_runs()
        self.run.write_comment()
        try:
            self.run.set_label(self.run.config.forge.label_working)
            outcome = self._work(model, extra_tools, history)
        except Exception as exc:  # whatever broke, the comment must say how the run ended
            log.exception("the run failed")
            outcome = CiOutcome(status="failed", reason=self.run.forge.redact(f"{exc}"))
        if self.run.stop_requested and outcome.status == "in_progress":
            outcome.status, outcome.reason = "stopped", STOPPED_BY_REQUEST
        self.run.finish(outcome, tracking_state(outcome.status))
        return outcome

    def _work(
        self, model: Any, extra_tools: tuple[ToolProvider, ...], history: HistoryBackend | None
    ) -> CiOutcome:
        git = self.run.git = GitWorkspace(self.run.workspace, self.run.forge.git_remote())
        base = self.run.forge.default_branch()
        # Read from the default branch's checkout: the issue branch is the last pass's work.
        mcp_servers = load_file_servers(self.run.config.tools, self.run.workspace)
        git.prepare(self.run.branch, base)
        issue = issue_context(
            self.run.forge,
            self.run.trigger,
            self.run.target,
            conversation(self.run.forge, self.run.number, self.run.branch),
        )
        base_commit = git.state.base_sha if git.state else None
        # Every commit of the run, checkpoints during the pass included, obeys the path rules.
        git.commit_rules = CommitRules.for_pass(
            self.run.config, self.run.workspace, self.checkout_credentials
        )
        directory = history_directory(self.run.config, self.run.workspace)
        try:
            result = self._pass(issue, model, extra_tools, history, mcp_servers, base_commit)
            self.run.view.result = result
            result, commit = publish_pass(self.run, git, result, self.run.store(directory))
        finally:
            self.run.view.notes.extend(refusal.describe() for refusal in git.refused)
            self.run.view.notes.extend(f"History: {line}" for line in expel_foreign(directory))
            if history is not None:
                history.save(directory, str(self.run.number))
        self.run.view.result = result
        self._answer_review(result, directory, history)
        if not git.commits_ahead():
            self.run.view.notes.append(
                "No changes so far, so there is no commit and no pull request."
            )
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
            posted = answer_threads(self.run, result, self.run.store(directory))
        except Exception:  # the pass's work is pushed: a failed reply must not undo the run
            log.exception("could not answer the review threads")
            self.run.view.notes.append("Could not answer the review threads; the next run will.")
            return
        if posted and history is not None:
            history.save(directory, str(self.run.number))

    @functools.cached_property
    def checkout_credentials(self) -> tuple[Path, ...]:
        """Files in the checkout that the job's environment names as credentials (a key that
        google-github-actions/auth wrote there): no tool reads them, no commit holds them."""
        root = self.run.workspace.resolve()
        named = {*credential_files(os.environ, root), *credential_files(self.run.env, root)}
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
        directory = history_directory(self.run.config, self.run.workspace)
        if history is not None:
            history.restore(directory, str(self.run.number))
        history_notes(self.run, history)
        restore_from_lease(self.run, self.run.lease, self.run.store(directory))
        reconcile_branch(self.run, self.run.store(directory))
        issue = self._record_approval_answer(issue, directory)
        setup = PassSetup(
            config=self.run.config,
            workspace=self.run.workspace,
            run_id=self.run.run_id,
            reporter=CheckpointReporter(self.run, TrackingReporter(self.run)),
            extra_tools=extra_tools,
            model=model,
            protected=(
                *((self.run.workspace / ".planner",) if self.run.forge.platform == "local" else ()),
                *self.checkout_credentials,
            ),
            mcp_file_servers=mcp_servers,
            base_commit=base_commit,
            phases=(ReviewPhase(),),
            set_up=(functools.partial(start_review, self.run),),  # review threads: after set-up
            witness=ForgeWitness(
                self.run.forge,
                self.run.config.forge,
                self.run.number,
                self.run.trigger,
                self.run.run_id,
                self.run.store(directory),
            ),
        )
        result = run_pass(setup, issue)
        skipped_history_notes(self.run, result)
        waiting = waiting_request(self.run.config, self.run.workspace, directory, issue)
        self.run.view.approval = waiting.section
        self._show_request(directory, waiting)
        return result

    def _show_request(self, directory: Path, waiting: WaitingRequest) -> None:
        """The approval request, visible on the issue before its mark is taken: only answers
        that come after the mark count (planner.ci.gate.request_marks)."""
        if not waiting.section:
            return
        self.run.write_comment()
        remember_shown(self.run.store(directory), waiting, lambda: self._mark(waiting.section))

    def _mark(self, section: str) -> RequestMark:
        """Answers come on the issue and on planner's pull request: the mark covers both."""
        pull = self.run.forge.find_pull_request(self.run.branch)
        return mark_now(self.run.forge, self.run.number, section, pull.number if pull else None)

    def _record_approval_answer(self, issue: IssueContext, directory: Path) -> IssueContext:
        """`/planner approve a1` is an answer for PlanTool, not an instruction for the model.
        Only a plain `/planner <text>` can be one: `/planner replan approve all` is a reason.
        Other text while approvals wait is no answer either: it rejects nothing, and the next
        pass reads it among the issue's comments."""
        if self.run.trigger.command != "run":
            return issue
        line = record_answer(
            self.run.config,
            self.run.workspace,
            directory,
            issue,
            self.run.trigger.instruction,
            self.run.trigger.actor.login,
            refusal=lambda: self._answer_refusal(directory),
            comment_id=self.run.trigger.comment_id or f"event:{self.run.run_id}",
            thread=self.run.trigger.issue_number or self.run.trigger.pull_request,
        )
        if line is None:
            return issue
        self.run.view.notes.append(line)
        return issue.model_copy(update={"instruction": ""})

    def _answer_refusal(self, directory: Path) -> str:
        """Why this event cannot answer the approval request ('' when it can)."""
        if not self.run.trigger.own_line:
            return NOT_ON_OWN_LINE
        mark = last_mark(self.run.store(directory))
        return "" if came_after(self.run.forge, self.run.trigger, mark) else BEFORE_REQUEST

    def _outcome(self, result: PassResult, commit: str, pull: PullRequestData | None) -> CiOutcome:
        return CiOutcome(
            status=result.status,
            reason=self.run.forge.redact(result.stop_reason),
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
        if self.run.forge.find_pull_request(self.run.branch) is not None:
            return False
        closed = self.run.forge.last_closed_pull_request(self.run.branch)
        if closed is None:
            return False
        reference = self.run.forge.pull_reference(closed.number)
        if closed.merged:
            self.run.view.notes.append(
                f"{reference} was merged; this run's changes go to a new one."
            )
            return False
        if closed.head_sha and not on_branch(git, closed.head_sha, ""):
            return False  # the branch was made anew since (deleted, then redone): new work
        self.run.view.notes.append(closed_pull_note(reference, closed, self.run.branch))
        return True

    def _pull_request(self, result: PassResult, base: str) -> PullRequestData:
        run = self.run
        draft = (run.config.forge.draft_pr and result.status != "completed") or tests_regressed(
            result
        )
        reference = run.forge.issue_reference(run.number)
        comment_url = run.comment.url if run.comment is not None else ""
        pull = run.forge.upsert_pull_request(
            head=run.branch,
            base=base,
            title=pull_title(result, run.target.issue.title, run.number, reference),
            body=pull_body(result, reference, comment_url),
            draft=draft,
        )
        run.view.pull_url = pull.url
        run.view.pull_label = run.forge.pull_reference(pull.number)
        if pull.draft and not draft:
            run.view.notes.append("The plan is complete: mark the draft pull request ready.")
        return pull
