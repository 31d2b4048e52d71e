"""interactive — planning sessions with the people on the issue before any pass."""

from __future__ import annotations

from pydantic import Field

from planner.config.base import Section


class InteractiveConfig(Section):
    """interactive — planning sessions with the people on the issue before any pass
    (seeds/interactive-planning.md, ADR-021)."""

    enabled: bool = False
    """Every triggered issue without a session starts one (otherwise only the label
    forge.label_interactive or `/planner plan <instruction>` does)."""
    question_timeout_minutes: float = Field(default=5, ge=0)
    """Questions still open this long after the session's last activity are recorded as
    skipped (answer null) by the next event or the scheduled sweep."""
