"""Review feedback on planner's pull request (planner.ci.review): a review, or a comment on a
line of its diff. Before anything is written the event is checked for work (an open pull
request, an instruction or an open thread); then the pass takes its threads up as tasks."""

from __future__ import annotations

from planner.ci.events.triggers import Sweep, Trigger
from planner.ci.handlers import Event, Handler
from planner.ci.outcome import CiOutcome
from planner.ci.review.event import review_skip


def is_review(trigger: Trigger | Sweep) -> bool:
    return isinstance(trigger, Trigger) and trigger.kind == "review"


def handle(event: Event) -> CiOutcome:
    """The pass: its set-up takes the open threads up (planner.ci.review.start) and it answers
    them when it ends."""
    return event.run.execute(
        model=event.model, extra_tools=event.extra_tools, history=event.history
    )


HANDLER = Handler(kind="review", takes=is_review, handle=handle, refuse=review_skip)
