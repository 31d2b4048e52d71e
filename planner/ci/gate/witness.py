"""An approval runs only when the forge shows it: the approval gate's witness in CI.

planner's history lives in the checkout, where a program a pass starts may write it; anything
it says about approvals is a claim. Before an approved spec runs (planner.approval.gate), the
witness confirms its approval where people give them:

- the spec was shown to people exactly as it is now: the newest approval request that listed
  it (an `approval_shown` mark in the history, which planner writes and alone reads back:
  planner.memory.history) holds its spec_digest;
- the approval came with the event this run acts on (planner checked that event as it
  arrived: its author may write, the command stood on its own line, after the request); or
- its comment is still on the issue or the pull request, written by the approver, who may
  approve (write access, or forge.allowed_users), after that request was shown, with an approve
  command on its own line in a top-level paragraph that names the spec, or approves all.

Anything else runs nothing, and the tracking comment says why.
"""

from __future__ import annotations

from typing import Any

from planner.approval.commands import Approve, parse_command
from planner.approval.models import ActionSpecExt, Approval, spec_digest
from planner.ci.events.triggers import Trigger, find_phrase
from planner.ci.forges.base import Actor, CommentData, ForgeAdapter
from planner.ci.gate.request_marks import ENTRY, RequestMark
from planner.config import ForgeConfig
from planner.memory.history import PlanningHistoryStore
from planner.memory.recorded import recorded


class ForgeWitness:
    """planner.approval.gate.ApprovalWitness for one run on one issue."""

    def __init__(
        self,
        forge: ForgeAdapter,
        config: ForgeConfig,
        number: int,
        trigger: Trigger,
        run_id: str,
        store: PlanningHistoryStore,
    ) -> None:
        self.forge = forge
        self.config = config
        self.number = number
        self.trigger = trigger
        self.run_id = run_id
        self.store = store
        self._comments: dict[int, list[CommentData]] = {}
        self._writers: dict[str, bool] = {}

    def was_shown(self, spec: ActionSpecExt) -> bool:
        mark = self._mark_for(spec)
        return mark is not None and mark.specs.get(spec.id) == spec_digest(spec)

    def confirm(self, approval: Approval, spec: ActionSpecExt) -> str:
        mark = self._mark_for(spec)
        if mark is None:
            return f"{spec.id} was never shown to people for approval"
        if mark.specs.get(spec.id) != spec_digest(spec):
            return f"{spec.id} is not the change that was shown for approval"
        if self._this_event(approval):
            return ""
        if not approval.comment_id or approval.comment_id.startswith("event:"):
            return "its approval is on no comment of the issue; approve it again in a comment"
        return self._comment_problem(approval, spec, mark)

    # -- helpers ------------------------------------------------------------------------------

    def _this_event(self, approval: Approval) -> bool:
        """The event this run acts on, which the job checked before it recorded the answer."""
        own = {f"event:{self.run_id}", *([self.trigger.comment_id] * bool(self.trigger.comment_id))}
        return approval.comment_id in own and approval.approver == self.trigger.actor.login

    def _comment_problem(self, approval: Approval, spec: ActionSpecExt, mark: RequestMark) -> str:
        thread = approval.thread or self.number
        comment = next((c for c in self._listed(thread) if c.id == approval.comment_id), None)
        where = self.forge.issue_reference(thread)
        if comment is None:
            return f"the comment that approved it is no longer on {where}"
        if comment.author.casefold() != approval.approver.casefold():
            return (
                f"the comment that approved it was written by @{comment.author}, not the approver"
            )
        if not self._may_approve(comment.author):
            return f"@{comment.author} has no write access to the repository"
        seen = CommentData(id=mark.comment_id, created_at=mark.created_at)
        if self.forge.comment_order(comment) <= self.forge.comment_order(seen):
            return "the comment that approved it was written before the request was shown"
        answer = self._answer(comment.body)
        if not isinstance(answer, Approve) or (answer.ids and spec.id not in answer.ids):
            return f"the comment it names does not approve {spec.id} (it was edited, or never did)"
        return ""

    def _answer(self, body: str) -> Any:
        found = find_phrase(body, self.config.trigger_phrase)
        if found is None or not found[1]:
            return None
        return parse_command(found[0].split("\n", 1)[0])

    def _mark_for(self, spec: ActionSpecExt) -> RequestMark | None:
        """The newest request that listed `spec`."""
        for mark in recorded(reversed(self.store.entries()), ENTRY, "mark", RequestMark):
            if spec.id in mark.specs:
                return mark
        return None

    def _listed(self, thread: int) -> list[CommentData]:
        if thread not in self._comments:
            self._comments[thread] = self.forge.list_comments(thread)
        return self._comments[thread]

    def _may_approve(self, login: str) -> bool:
        if login not in self._writers:
            allowed = login in self.config.allowed_users
            self._writers[login] = allowed or self.forge.can_write(Actor(login=login))
        return self._writers[login]
