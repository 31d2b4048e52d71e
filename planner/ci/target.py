"""Which issue an event acts on, and whether it may: write access, the issue a comment on
planner's pull request is about, closed or locked issues (read-only: nothing is written on any
path that ends in a Skip). Then the issue as the model sees it: only comments made before the
event, never planner's own, and the event's own text as the instruction."""

from __future__ import annotations

import re
from datetime import datetime

from planner.ci.events.triggers import Skip, Trigger
from planner.ci.forges.base import (
    MARKER_PREFIX,
    CommentData,
    ForgeAdapter,
    IssueData,
    PullRequestData,
    parse_time,
)
from planner.ci.review.event import review_instruction
from planner.ci.run_port import Target
from planner.config import ForgeConfig
from planner.text.issue import Comment, IssueContext

CLOSES = re.compile(r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s+#(\d+)\b", re.IGNORECASE)


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
