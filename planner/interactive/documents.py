"""What the model answers in each phase (the response schema sent with the prompt).

The model proposes content only: ids, answers, choices and timestamps are planner's.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from planner.interactive.model import QuestionType

MAX_QUESTIONS = 8
MAX_DECISIONS = 5
MAX_OPTIONS = 5


class Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ProposedQuestion(Reply):
    type: QuestionType
    question: str = Field(min_length=1, max_length=1_000)
    context: str = Field(default="", max_length=1_000, description="why the answer matters")
    options: list[str] = Field(
        default_factory=list, max_length=MAX_OPTIONS, description="suggested answers, if any"
    )


class DiscoveryReply(Reply):
    """Discovery: the questions to ask before any design (none when the request is clear)."""

    questions: list[ProposedQuestion] = Field(max_length=MAX_QUESTIONS)


class ProposedOption(Reply):
    name: str = Field(min_length=1, max_length=200)
    description: str = Field(min_length=1, max_length=2_000)
    pros: list[str] = Field(default_factory=list, max_length=8)
    cons: list[str] = Field(default_factory=list, max_length=8)
    recommended: bool = False


class ProposedDecision(Reply):
    topic: str = Field(min_length=1, max_length=300)
    options: list[ProposedOption] = Field(min_length=2, max_length=MAX_OPTIONS)


class DesignReply(Reply):
    """Design: the decision points that shape the implementation, each with options."""

    decisions: list[ProposedDecision] = Field(min_length=1, max_length=MAX_DECISIONS)


class ReviewReply(Reply):
    """Review: the design summary people approve (empty when it cannot be written)."""

    design_summary: str = Field(default="", max_length=8_000)
