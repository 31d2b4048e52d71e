"""budget — the limits of one pass."""

from __future__ import annotations

from pydantic import Field

from planner.config.base import Section


class BudgetConfig(Section):
    """budget — limits of one pass. Reaching one ends the pass as in_progress, not failed."""

    max_actions: int = Field(default=40, ge=1)
    """Tool calls per pass."""
    max_actions_per_task: int = Field(default=8, ge=1)
    """Tool calls one task may make before it must decide: from then on reading is refused
    and the model must change files, finish or give up with a reason; four calls later the
    task ends as failed. Calls that were refused count too, so the loop cannot read forever."""
    max_model_calls: int = Field(default=80, ge=1)
    """Model requests per pass (retries of one request count once)."""
    max_wall_seconds: float = Field(default=1800.0, gt=0)
    """Wall-clock seconds per pass."""
    max_total_tokens: int = Field(default=1_000_000, ge=1)
    """Prompt plus completion tokens per pass."""
    finish_reserve_seconds: float = Field(default=120.0, ge=0)
    """Seconds of max_wall_seconds kept for the end of a CI run (commit, push, history, final
    comment): model requests, retries and commands get at most the time left before that
    (at most a quarter of max_wall_seconds is kept)."""
