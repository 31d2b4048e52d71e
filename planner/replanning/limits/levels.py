"""Replan levels (replanning.md §7.4) and where each one re-enters the planning process.

| level | name                | re-enters            | completed tasks (§11.4.3) |
|-------|---------------------|----------------------|---------------------------|
| 1     | retry               | execution (same call)| kept                      |
| 2     | partial replan      | execution            | kept                      |
| 3     | action regeneration | action sequence      | kept                      |
| 4     | task redecomposition| task decomposition   | cleared                   |
| 5     | goal re-check       | goal understanding   | cleared                   |

Re-entering a planning phase means its decision point, and every later one, runs again on the
new plan before execution resumes (the combined review covers exactly those phases).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.replanning.prompting.decision import PLANNING_PHASES, Phase, ReplanDecision


@dataclass(frozen=True)
class Level:
    number: int
    name: str
    reenters: Phase
    carry_progress: bool
    limit_key: str | None
    """The planning.replanning key limiting this level (None: only the global limit)."""

    @property
    def review_phases(self) -> list[Phase]:
        """Planning decision points to run again after this level's new plan."""
        if self.reenters not in PLANNING_PHASES:
            return []
        return list(PLANNING_PHASES[PLANNING_PHASES.index(self.reenters) :])


LEVELS: dict[int, Level] = {
    1: Level(1, "retry", "execution", True, "execution.max_action_retries"),
    2: Level(2, "partial replan", "execution", True, "execution.max_partial_replans"),
    3: Level(
        3,
        "action regeneration",
        "action_sequence",
        True,
        "action_sequence.max_regeneration_attempts",
    ),
    4: Level(
        4,
        "task redecomposition",
        "task_decomposition",
        False,
        "task_decomposition.max_redecomposition_attempts",
    ),
    5: Level(5, "goal re-check", "goal_understanding", False, None),
}
PLAN_REVISION_LIMIT = "reflection.max_plan_revisions"
QUESTION_LIMIT = "goal_understanding.max_clarification_requests"
REVISION_CAP = "planning.revision.max_revisions"
"""Counted plan revisions; a cap only when the key is set explicitly (see ReplanControls)."""

TYPE_LEVELS = {
    "retry": 1,
    "partial_replan": 2,
    "plan_revision": 2,
    "action_regeneration": 3,
    "task_redecomposition": 4,
    "full_replan": 4,
    "goal_revision": 5,
}
PHASE_LEVELS = {
    "goal_understanding": 5,
    "task_decomposition": 4,
    "action_sequence": 3,
    "execution": 2,
    "reflection": 2,
}
LOWEST_LEVEL = {
    "goal_understanding": 3,
    "task_decomposition": 3,
    "action_sequence": 3,
    "execution": 1,
    "reflection": 2,
}
"""Before anything ran there is nothing to retry or patch: planning phases start at level 3;
after all tasks ran there is no failed call to retry: reflection starts at level 2."""


def level_of(decision: ReplanDecision, phase: Phase) -> Level:
    """The level to execute: replan_level, else replan_type, else target_phase, else phase."""
    number = (
        decision.replan_level
        or TYPE_LEVELS.get(decision.replan_type or "")
        or PHASE_LEVELS.get(decision.target_phase or "")
        or PHASE_LEVELS[phase]
    )
    return LEVELS[max(number, LOWEST_LEVEL[phase])]


def limit_key_of(level: Level, phase: Phase) -> str | None:
    """A level-2 replan decided at the final evaluation is a §8 plan revision."""
    if level.number == 2 and phase == "reflection":
        return PLAN_REVISION_LIMIT
    return level.limit_key
