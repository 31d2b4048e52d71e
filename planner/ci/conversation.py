"""What people said about an issue: its comments, and the conversation on planner's pull
request for it (review threads are not here: they are tasks of their own, planner.ci.review).
All of it is untrusted data for the prompt, like the issue's own comments."""

from __future__ import annotations

from planner.ci.forges.base import CommentData, ForgeAdapter


def conversation(forge: ForgeAdapter, number: int, branch: str) -> list[CommentData]:
    """The issue's comments and those on its pull request (if there is one), oldest first; a
    pull request's comment says where it was made."""
    comments = forge.list_comments(number)
    pull = forge.find_pull_request(branch)
    if pull is None:
        return comments
    where = f"pull request {forge.pull_reference(pull.number)}"
    on_pull = [c.model_copy(update={"on": where}) for c in forge.list_pull_comments(pull)]
    return sorted(comments + on_pull, key=forge.comment_order)
