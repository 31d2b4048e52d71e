"""The one count behind goal_understanding.max_clarification_requests.

"Questions planner may put to people about one piece of work (clarifications and
low-confidence confirmations from any phase)": the planning step (a reply that cannot plan)
and replanning (a decision that asks people) both read this count, so a question asked in one
place is counted in the other, and both start again from zero after a completed piece of work.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


def is_question(entry: dict[str, Any]) -> bool:
    """An entry that put questions to people: the planning reply's own clarification, or a
    replan decision that asked (a clarification or a low-confidence confirmation)."""
    kind = entry.get("type")
    return kind == "clarification" or (
        kind == "replan_decision" and entry.get("outcome") == "asked_user"
    )


def ends_piece_of_work(entry: dict[str, Any]) -> bool:
    """A completion that says the work is done: the next instruction is a new piece of work."""
    return entry.get("type") == "completion" and bool(entry.get("done", True))


@dataclass
class QuestionCount:
    """Fed entry by entry (replanning folds its state the same way)."""

    asked: int = 0

    def add(self, entry: dict[str, Any]) -> None:
        if ends_piece_of_work(entry):
            self.asked = 0
        elif is_question(entry):
            self.asked += 1


def questions_asked(entries: Iterable[dict[str, Any]]) -> int:
    count = QuestionCount()
    for entry in entries:
        count.add(entry)
    return count.asked
