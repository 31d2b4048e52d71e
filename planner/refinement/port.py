"""What refinement needs from the pass that runs it (the coordinator implements it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from planner.engine.documents import Plan, PlanRules
from planner.engine.interfaces import DocT, ToolSpec
from planner.engine.issue import IssueContext
from planner.engine.state import IssueState

WorkDiff = Callable[[], str]
"""The changes of the pass's branch against its base, as a unified diff (the runner supplies it
from git; refinement never runs git itself)."""


class RefinementPort(Protocol):
    issue: IssueContext
    """The issue as this pass plans it (with the run's instruction)."""

    def ask_document(
        self,
        kind: str,
        prompt: str,
        schema: type[DocT],
        context: Any = None,
        system: str = "replanning",
    ) -> DocT:
        """One structured model call (validated, re-asked once), within the pass budget."""
        ...

    def plan_rules(self, current_plan: Plan | None) -> PlanRules: ...

    def tool_specs(self) -> list[ToolSpec]: ...

    def planning_variables(self) -> dict[str, Any]:
        """The variables of planning_request.md.j2 as the pass renders it."""
        ...

    def checklist(self) -> str: ...

    def issue_state(self) -> IssueState: ...

    def progress(self, reason: str) -> None:
        """Tell the reporter (the tracking comment) that the plan changed."""
        ...
