"""approval — which action specs run without a person."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from planner.config.base import Section

RiskLevel = Literal["low", "medium", "high"]
BULK_APPROVED: tuple[RiskLevel, ...] = ("low", "medium")


class ApprovalConfig(Section):
    """The approval gate: which action specs run without a person."""

    mode: Literal["risky", "plan", "off"] = "risky"
    """risky: pause only at specs that need a person; plan: a person approves the whole plan's
    specs before anything runs; off: no gate except for high risk."""
    auto_approve: list[RiskLevel] = Field(default_factory=lambda: list(BULK_APPROVED))
    """Risk levels approved in bulk without a person (risky mode). high always needs a person."""
    large_file_bytes: int = Field(default=100_000, ge=1)
    """Overwriting or deleting a file at least this large is high risk; a write that keeps 90% of
    its lines, in order, is an edit of it (medium)."""
    max_spec_bytes: int = Field(default=1_000_000, ge=1)
    """A spec whose content is larger is refused."""
    forbidden_extensions: list[str] = Field(
        default_factory=lambda: [".exe", ".dll", ".so", ".dylib", ".pem", ".key", ".p12", ".jks"]
    )
    """File endings no spec may write (compared case-insensitively)."""

    @field_validator("auto_approve")
    @classmethod
    def _no_bulk_high(cls, levels: list[str]) -> list[str]:
        if "high" in levels:
            raise ValueError("high risk always needs a person; allowed: low, medium")
        return levels
