"""The quality judge's answer (seed: task-refinement.md, QualityJudge), and what it judges."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, field_validator

from planner.plan.documents import Doc

Subject = Literal["plan", "result"]
"""plan: a plan before (or between) its tasks run. result: the finished work before completion."""


class QualityJudgement(Doc):
    """One judgement; the seed's score / isAcceptable / issues / suggestions in snake_case."""

    score: int | None = Field(default=None, ge=0, le=100)
    """0-100; None when the judge could not give one (decision priority 2)."""
    is_acceptable: bool
    issues: list[str] = Field(default_factory=list)
    """What is wrong: the feedback a replan must address."""
    suggestions: list[str] = Field(default_factory=list)
    """What could be better even when acceptable."""

    def verdict(self) -> dict[str, Any]:
        """The judgement under the names its history entry and the replan prompts give it."""
        return {
            "score": self.score,
            "acceptable": self.is_acceptable,
            "issues": self.issues,
            "suggestions": self.suggestions,
        }

    @field_validator("score", mode="before")
    @classmethod
    def _whole_points(cls, value: Any) -> Any:
        """Models write 82.5 or "82"; the seed's scale is whole points. A non-finite number is
        left for the int check to refuse (round() would raise past the reply validation)."""
        if isinstance(value, float) and math.isfinite(value):
            return round(value)
        return value

    @field_validator("issues", "suggestions", mode="after")
    @classmethod
    def _non_empty(cls, items: list[str]) -> list[str]:
        return [item.strip() for item in items if item.strip()]
