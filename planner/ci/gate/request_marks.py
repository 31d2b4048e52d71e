"""An answer counts only for a request its author could have seen.

When planner shows people something to approve (the approval gate's previews in the tracking
comment, an interactive session's review), it records a mark: the newest comment on the issue
and on planner's pull request (merge request) once the request was visible, and the time.
GitHub and GitLab number comments in the order they are made, across issues and pull requests,
so an approval counts only when it comes after that mark wherever it was written: an `approve
all` posted on the pull request while the pass still ran, an old event delivered again, or an
approve posted while the design was still being made, can never approve what was shown later.
The gate's mark also carries a hash of what was shown: showing the same request again keeps the
old mark, showing anything else makes a new one.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from pydantic import BaseModel

from planner.ci.events.triggers import Trigger
from planner.ci.forges.base import CommentData, ForgeAdapter, PullRequestData, parse_time

ENTRY = "approval_shown"
"""The gate's marks in the issue's JSONL history."""
NOT_ON_OWN_LINE = (
    "it was not a command on its own line. Write the command, with its trigger phrase, alone at "
    "the start of a line, outside quotes, code and HTML comments."
)
BEFORE_REQUEST = (
    "it was written before the request it would answer was shown, so it cannot approve "
    "what was shown. Read the request and answer again."
)


class RequestMark(BaseModel):
    """Where the issue stood when a request was shown."""

    comment_id: str = ""
    """The newest comment on the issue once the request was visible."""
    created_at: str = ""
    """When that comment was made (orders comments on the local forge)."""
    shown_at: str = ""
    """When planner showed the request (orders events that are not comments)."""
    digest: str = ""
    """A hash of what was shown."""
    specs: dict[str, str] = {}
    """The approval gate's specs shown, by id: what each would do, as a hash (spec_digest). An
    approval counts only for a spec shown exactly as it is when it runs."""


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def mark_at(comment: CommentData | None, shown: str = "", at: str = "") -> RequestMark:
    """The mark of a request shown in (or before) `comment`, now (or `at`)."""
    return RequestMark(
        comment_id=comment.id if comment else "",
        created_at=comment.created_at if comment else "",
        shown_at=at or _now(),
        digest=digest(shown) if shown else "",
    )


def mark_now(forge: ForgeAdapter, number: int, shown: str, pull: int | None = None) -> RequestMark:
    """The mark of a request visible now: the newest comment on the issue and on pull request
    `pull` (planner's, where answers are given too)."""
    comments = forge.list_comments(number)
    if pull is not None:
        comments += forge.list_pull_comments(PullRequestData(number=pull))
    return mark_at(max(comments, key=forge.comment_order, default=None), shown)


def came_after(forge: ForgeAdapter, trigger: Trigger, mark: RequestMark | None) -> bool:
    """Whether the event that carries an answer came after the request was shown. A comment
    is compared with the mark's comment; an event that is not one (a typed instruction) by
    its time (to the second, as events are stamped)."""
    if mark is None:
        return False
    if trigger.comment_id:
        where = trigger.issue_number or trigger.pull_request or 0  # a PR's comments: its own
        comments = forge.list_comments(where)
        made = next((c for c in comments if c.id == trigger.comment_id), None)
        seen = CommentData(id=mark.comment_id, created_at=mark.created_at)
        return made is not None and forge.comment_order(made) > forge.comment_order(seen)
    event, shown = parse_time(trigger.event_time), parse_time(mark.shown_at)
    return event is not None and shown is not None and event >= shown.replace(microsecond=0)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")
