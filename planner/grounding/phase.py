"""The grounding phase: before a plan is made, show the model the repository.

before_planning builds the repository map (and, when configured, runs the bounded exploration)
and hands both to the planning request through `run.planning_context`; the history records the
map's digest and the exploration. Registered last in planner/run/phases.py, so a phase that
stops the pass before planning (waiting for answers) does so before anything is explored.
"""

from __future__ import annotations

from pathlib import Path

from planner.engine.context import PassContext
from planner.engine.phase import Phase
from planner.grounding.context import Grounding


class GroundingPhase(Phase):
    name = "grounding"

    def __init__(self, workspace: Path, excluded: tuple[Path, ...] = ()) -> None:
        self.workspace = workspace
        self.excluded = excluded
        self._grounding: Grounding | None = None

    def before_planning(self, run: PassContext, instruction: str) -> str:
        if self._grounding is None:
            self._grounding = Grounding(run.config, self.workspace, self.excluded)
        run.planning_context.update(self._grounding.planning_context(run, run.store))
        return instruction
