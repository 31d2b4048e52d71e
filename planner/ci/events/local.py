"""`planner run` on a working tree read into a Trigger: an issue number and an instruction from
the command line, or a person's reply as a comment file (.planner/issues/N/comments/)."""

from __future__ import annotations

from planner.ci.events.triggers import Trigger, manual_command, now, phrase_command, positive_number
from planner.ci.forges.base import Actor, CommentData
from planner.config import ForgeConfig


def local_trigger(
    issue_number: int | str, config: ForgeConfig, *, instruction: str = "", actor: str = "local"
) -> Trigger:
    """`planner run` on a working tree: issues, comments and PRs are files under .planner/."""
    command, text, own_line = manual_command(instruction, config)
    return Trigger(
        platform="local",
        kind="local",
        event="local run",
        repository="",
        issue_number=positive_number(issue_number, "the issue number"),
        actor=Actor(login=actor or "local"),
        command=command,
        instruction=text,
        own_line=own_line,
        event_time=now(),
    )


def local_reply_trigger(trigger: Trigger, comment: CommentData, config: ForgeConfig) -> Trigger:
    """A local run whose event is a person's comment file: read like a comment on a forge
    (a command after the phrase, else a plain reply)."""
    found = phrase_command(comment.body, config)
    command, text, own_line = found or ("run", comment.body.strip(), False)
    return trigger.model_copy(
        update={
            "kind": "comment",
            "event": "local comment",
            "command": command,
            "instruction": text,
            "own_line": own_line,
            "comment_id": comment.id,
            "event_time": comment.created_at or trigger.event_time,
        }
    )
