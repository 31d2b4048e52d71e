"""Pieces of the scripted model's conversation that passes in several test files share."""

from __future__ import annotations

from typing import Any

from planner.testing.steps import Step
from tests.plans import completed, finish, write


def cannot_plan(**error: Any) -> dict[str, Any]:
    """A planning reply that cannot plan (§10.1.1): the files are not named, so the model asks
    the people on the issue which to write; `error` adds fields to the reply's error (its
    assumptions, say)."""
    return {
        "phase": "planning",
        "comment": "Which files?",
        "error": {
            "type": "unclear_goal",
            "message": "the files are not named",
            "clarification_needed": ["Which files should I write?"],
            **error,
        },
    }


def two_files_written(first: str, second: str) -> list[Step]:
    """After a plan of two tasks: the first writes `first`, the second `second`, and the pass
    ends judged done with both completed."""
    return [write(first), finish(), write(second), finish(), *completed(completed=2)]
