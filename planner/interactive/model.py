"""The PlanningSession of ADR-021 (seeds/interactive-planning.md §5), field for field, snake_case.

Ids (`planning-<uuid>`, `q-N`, `d-N`, `opt-x`) are assigned by planner when the model's reply
is turned into a session, never taken from the model.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

QuestionType = Literal["clarification", "scope", "technical", "priority", "constraint"]
QUESTION_TYPES: tuple[QuestionType, ...] = (
    "clarification",
    "scope",
    "technical",
    "priority",
    "constraint",
)
CRITICAL_TYPES = frozenset({"clarification", "scope", "technical"})
"""The question types build_enhanced_instruction carries (priority and constraint are folded
into the design summary, as the seed decides)."""
Phase = Literal["discovery", "design", "review"]
PHASES: tuple[Phase, ...] = ("discovery", "design", "review")


class PlanningSessionStatus(StrEnum):
    DISCOVERY = "discovery"
    DESIGN = "design"
    REVIEW = "review"
    APPROVED = "approved"
    CANCELLED = "cancelled"
    FAILED = "failed"


ACTIVE = frozenset(
    {PlanningSessionStatus.DISCOVERY, PlanningSessionStatus.DESIGN, PlanningSessionStatus.REVIEW}
)
"""Statuses that wait for a person."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Question(Strict):
    id: str
    type: QuestionType
    question: str
    context: str | None = None
    """Why the question matters."""
    options: list[str] | None = None
    answer: str | None = None
    """None while open, and for a question skipped after the timeout."""
    answered_at: str | None = None
    """Set when answered or skipped; None while the question is open."""

    @property
    def open(self) -> bool:
        return self.answered_at is None


class Tradeoffs(Strict):
    pros: list[str] = Field(default_factory=list)
    cons: list[str] = Field(default_factory=list)


class DecisionOption(Strict):
    id: str
    name: str
    description: str
    tradeoffs: Tradeoffs = Field(default_factory=Tradeoffs)
    recommendation: bool | None = None


class DecisionPoint(Strict):
    id: str
    topic: str
    options: list[DecisionOption]
    selected_option_id: str | None = None
    rationale: str | None = None
    decided_at: str | None = None

    def option(self, option_id: str | None) -> DecisionOption | None:
        return next((o for o in self.options if o.id == option_id), None)


class ConversationMessage(Strict):
    """One message of the model dialogue of a phase (the prompt sent or the reply)."""

    role: Literal["system", "user", "assistant"]
    phase: Literal["discovery", "design", "review", "summary"]
    content: str
    timestamp: str
    author: str | None = None
    """Who wrote it: None for planner's prompts and the model's replies, else the person."""


class PlanningSession(Strict):
    session_id: str
    instruction: str
    status: PlanningSessionStatus
    current_question_index: int = Field(default=0, ge=0)
    current_decision_index: int = Field(default=0, ge=0)
    questions: list[Question] = Field(default_factory=list)
    decisions: list[DecisionPoint] = Field(default_factory=list)
    design_summary: str | None = None
    conversation_history: list[ConversationMessage] = Field(default_factory=list)
    reject_count: int = Field(default=0, ge=0)
    error_message: str | None = None
    planner_session_id: str | None = None
    discovery_log_path: str | None = None
    design_log_path: str | None = None
    review_log_path: str | None = None
    created_at: str
    updated_at: str

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    def open_questions(self) -> list[Question]:
        return [q for q in self.questions if q.open]

    def open_decisions(self) -> list[DecisionPoint]:
        return [d for d in self.decisions if d.decided_at is None]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def new_session(instruction: str, at: str | None = None) -> PlanningSession:
    stamp = at or now_iso()
    return PlanningSession(
        session_id=f"planning-{uuid.uuid4()}",
        instruction=instruction,
        status=PlanningSessionStatus.DISCOVERY,
        created_at=stamp,
        updated_at=stamp,
    )


def option_id(index: int) -> str:
    """opt-a, opt-b, …, opt-z, opt-aa, … (0-based index)."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return f"opt-{letters}"
