"""Review threads of a pull/merge request as every forge adapter returns them: a comment on
lines of the diff, the replies under it, and whether it is resolved (planner.ci.review)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class ThreadComment(BaseModel):
    """One comment of a review thread, oldest first in its thread."""

    id: str
    author: str = ""
    author_id: int | None = None
    """GitLab's user id (the permission check needs it); None on GitHub."""
    body: str = ""
    created_at: str = ""
    updated_at: str = ""
    url: str = ""
    is_bot: bool = False
    trusted: bool = False
    """Written by planner's own token (its replies in the thread)."""


class ReviewThread(BaseModel):
    """A line comment on the diff and its replies."""

    id: str
    """GitHub: the thread's node id (what resolveReviewThread takes); GitLab: the discussion id."""
    path: str
    line: int | None = None
    """The last commented line in the pull request's head as the forge tracks it; None when the
    forge could not follow the lines since (outdated) or the comment is on the whole file."""
    start_line: int | None = None
    """The first commented line of a comment on several lines (None: one line)."""
    original_line: int | None = None
    """The last commented line in `original_commit`, the commit the comment was made on."""
    original_start_line: int | None = None
    original_commit: str = ""
    diff_hunk: str = ""
    """The diff the comment was made on, ending at the commented line ('' when the forge does
    not say: the review code takes it from git)."""
    side: Literal["new", "old"] = "new"
    """`old`: the comment is on lines the change removed (they exist in no current file)."""
    outdated: bool = False
    resolved: bool = False
    url: str = ""
    comments: list[ThreadComment] = Field(default_factory=list)
