"""What refinement gets from the runner besides the pass itself (planner.engine.context)."""

from __future__ import annotations

from collections.abc import Callable

WorkDiff = Callable[[], str]
"""The changes of the pass's branch against its base, as a unified diff (the runner supplies it
from git, planner.run.workdiff; refinement never runs git itself)."""
