"""What replanning needs from the pass that runs it (engine.context.PassContext implements it)."""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel

from planner.core.interfaces import DocT, ToolSpec
from planner.memory.state import IssueState
from planner.outcome.result import PassResult
from planner.plan.documents import Plan, PlanRules


class ReplanPort(Protocol):
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

    def ask_text(self, kind: str, prompt: str, schema: type[BaseModel]) -> str:
        """One model call whose raw reply is returned unparsed (decisions parse leniently)."""
        ...

    def plan_rules(self, current_plan: Plan | None) -> PlanRules: ...

    def tool_specs(self) -> list[ToolSpec]: ...

    def planning_variables(self) -> dict[str, Any]:
        """The variables of planning_request.md.j2 as the pass renders it."""
        ...

    def checklist(self) -> str: ...

    def issue_state(self) -> IssueState: ...

    def snapshot_now(self) -> PassResult: ...

    def progress(self, reason: str) -> None:
        """Tell the reporter (the tracking comment) that the plan changed."""
        ...
