"""review — reviews of planner's own pull request."""

from __future__ import annotations

from planner.config.base import Section


class ReviewConfig(Section):
    """review — a review of planner's own pull request (GitHub review comments, GitLab diff
    notes): the next pass makes each open thread a task, applies suggestions as written, and
    answers (and, when the change is committed with the tests passing, resolves) each thread.
    See docs/github.md, "Reviews of planner's pull request"."""

    act_on_changes_requested: bool = False
    """GitHub: every "Request changes" review of planner's pull request by someone with write
    access starts a pass, with or without the trigger phrase. False: a review starts one only
    when its text or one of its comments contains forge.trigger_phrase. GitLab has no such
    review state in its events; a diff note there needs the phrase."""
