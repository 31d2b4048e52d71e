"""Which review threads are open work: unresolved, started by someone who may steer planner,
and not answered by planner since that person's last word.

Comments by people without write access (and not on forge.allowed_users), and by bots not on
forge.allowed_bots, are left out: a thread such a person started is no task at all, and their
replies in another thread are not shown to the model. planner's own replies are kept (the
model reads what it answered before); a marker in anyone else's comment counts for nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from planner.ci.events.gitlab import is_gitlab_bot
from planner.ci.forges.base import Actor, ForgeAdapter
from planner.ci.forges.threads import ReviewThread, ThreadComment
from planner.config import ForgeConfig


@dataclass(frozen=True)
class OpenThread:
    thread: ReviewThread
    comments: tuple[ThreadComment, ...]
    """What the model may read of the thread: permitted people's comments and planner's own."""

    @property
    def latest(self) -> ThreadComment:
        """The comment that asks (the last one; never planner's own)."""
        return self.comments[-1]

    @property
    def reviewer(self) -> str:
        return self.latest.author


def open_threads(
    threads: list[ReviewThread], may_steer: Callable[[ThreadComment], bool]
) -> list[OpenThread]:
    found = []
    for thread in threads:
        if thread.resolved or not thread.comments:
            continue
        first = thread.comments[0]
        if first.trusted or not may_steer(first):
            continue  # a stranger's thread (or a stray one of ours) is nobody's request
        kept = tuple(c for c in thread.comments if c.trusted or may_steer(c))
        if kept and not kept[-1].trusted:
            found.append(OpenThread(thread, kept))
    return found


class Permissions:
    """`may_steer(comment)`: the comment's author has write access (asked once per person),
    is on forge.allowed_users, or is a bot on forge.allowed_bots."""

    def __init__(self, forge: ForgeAdapter, config: ForgeConfig) -> None:
        self.forge = forge
        self.config = config
        self.known: dict[str, bool] = {}

    def __call__(self, comment: ThreadComment) -> bool:
        login = comment.author
        if not login or comment.trusted:
            return False
        if comment.is_bot or login.endswith("[bot]") or is_gitlab_bot(login):
            return login in self.config.allowed_bots
        if login in self.config.allowed_users:
            return True
        if login not in self.known:
            self.known[login] = self.forge.can_write(Actor(login=login, id=comment.author_id))
        return self.known[login]
