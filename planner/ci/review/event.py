"""A review event before the lease: whether it has anything to do (read-only), and what of its
text is the run's instruction (planner.ci.review)."""

from __future__ import annotations

from planner.ci.events.triggers import Skip, Trigger
from planner.ci.forges.base import ForgeAdapter
from planner.ci.review.threads import Permissions, open_threads
from planner.ci.run_port import Target
from planner.config import PlannerConfig

REVIEW_EVENT = "pull_request_review.submitted"


def review_skip(
    forge: ForgeAdapter, trigger: Trigger, target: Target, config: PlannerConfig
) -> Skip | None:
    """Why a review of planner's pull request starts nothing (None: it does). Reads only."""
    pull = target.pull
    if trigger.kind != "review" or pull is None:
        return None
    reference = forge.pull_reference(pull.number)
    if pull.state != "open":
        return Skip(reason=f"pull request {reference} is {pull.state}, not open")
    if trigger.command != "run" or review_instruction(forge, trigger, target):
        return None
    if open_threads(forge.review_threads(pull), Permissions(forge, config.forge)):
        return None
    return Skip(
        reason=f"the review of {reference} leaves no open thread for planner (each is "
        "resolved, answered already, or was started by someone without write access)"
    )


def review_instruction(forge: ForgeAdapter, trigger: Trigger, target: Target) -> str:
    """A review's own text (after the phrase) is the run's instruction; a line comment's text
    belongs to its thread, which its task reads."""
    if trigger.event != REVIEW_EVENT or not trigger.instruction or target.pull is None:
        return ""
    return (
        f"Review of pull request {forge.pull_reference(target.pull.number)}: {trigger.instruction}"
    )
