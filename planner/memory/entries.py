"""History entries are data, not trust: one pydantic model per entry type.

Every entry read from a history file is checked against the model of its `type` before any
reader sees it (planner.memory.history.read_entries). An entry whose fields have the wrong
shape (`{"type": "reflection", "evaluation": null}`, `{"type": "replan_started"}`,
`{"type": "assumed", "assumptions": 7}`) is skipped with a warning like a truncated line:
never rewritten, never a reason to stop a run. An entry of a type without a model (a phase
package's own, or one from a newer planner) is checked for the common fields only and kept:
no reader but its writer's looks at it. The models check the shape of what readers use
(types, nesting); extra fields are allowed, and fields a reader has a default for may be
missing. Readers get the entry exactly as it was written, not the model.

A new entry type should register its model (ENTRY_MODELS, or register_entry_model() from the
package that writes it), so its readers only ever see entries of the shape they expect.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

JsonObject = dict[str, Any]


class _Loose(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class DecompositionShape(_Loose):
    subtasks: list[JsonObject] = []


class PlanObject(_Loose):
    """The parts of a plan the history's readers walk before the seed's Plan model judges the
    whole (planner.memory.state counts a plan that fails it as invalid and keeps the last good
    one): objects where objects are expected."""

    goal_understanding: JsonObject = {}
    task_decomposition: DecompositionShape = DecompositionShape()
    action_plan: JsonObject = {}


class _Shape(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class EntryBase(_Shape):
    """The fields every entry carries."""

    type: str
    timestamp: str = ""
    repository: str = ""
    issue_id: str = ""
    run_id: str = ""


class RunStart(EntryBase):
    instruction: str = ""
    planning: bool = True


class RunEnd(EntryBase):
    status: str = ""
    stop_reason: str = ""
    usage: JsonObject = {}
    actions: int = 0


class HumanInput(EntryBase):
    text: str = ""


class PlanEntry(EntryBase):
    plan: PlanObject


class Revision(EntryBase):
    updated_plan: PlanObject
    revision: int | None = None
    reason: str = ""
    changes: list[Any] = []
    reflection: JsonObject = {}
    carry_progress: bool = True
    review_phases: list[str] | None = None
    level: int | None = None
    source: str = ""


class PlanReview(EntryBase):
    phases: list[str] = []
    outcome: str = ""


class Task(EntryBase):
    task_id: str
    status: str = ""
    summary: str | None = None


class FunctionCallShape(_Shape):
    name: str = ""
    arguments: JsonObject = {}


class ExecutionShape(_Shape):
    function_call: FunctionCallShape = FunctionCallShape()


class Action(EntryBase):
    task_id: str = ""
    index: int = 0
    execution: ExecutionShape = ExecutionShape()
    ok: bool = False
    error: str | None = None
    result: str = ""


class ModelCall(EntryBase):
    kind: str = ""
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    latency_ms: float = 0.0
    attempts: int = 0
    outcome: str = ""


class ReflectionShape(_Shape):
    reflection: JsonObject = {}


class Reflection(EntryBase):
    evaluation: ReflectionShape


class ReplanStarted(EntryBase):
    replan_id: str
    phase: str | None = None
    trigger: str = ""
    level: int | None = None
    limit_key: str | None = None
    signature: str = ""
    counted: bool = False
    llm_decision: JsonObject | None = None
    plan_before: JsonObject = {}


class FactsShape(BaseModel):
    """What a replan decision about an action is told (planner.replanning.prompting.facts.
    ActionFacts has these fields and no other), kept so an answered question rebuilds them."""

    model_config = ConfigDict(extra="forbid", strict=True)
    task_id: str
    trigger: str
    executed_action: str
    execution_result: str
    error_info: str
    completed_count: int
    total_count: int
    error_count: int
    consecutive_errors: int
    remaining_actions: str
    can_retry: bool = False


class ReplanDecisionEntry(EntryBase):
    replan_id: str = ""
    result: str = ""
    phase: str | None = None
    trigger: str = ""
    llm_decision: JsonObject | None = None
    confidence: float | None = None
    executed: bool = False
    override_reason: str | None = None
    outcome: str = ""
    warning: str | None = None
    level: int | None = None
    replan_type: str | None = None
    limit_key: str | None = None
    signature: str = ""
    counted: bool = False
    decided_at: str | None = None
    question_kind: str = "clarification"
    questions: list[str] = []
    assumptions: list[str] = []
    facts: JsonObject | None = None

    @model_validator(mode="after")
    def _execution_facts(self) -> ReplanDecisionEntry:
        """An answered question about an action rebuilds its ActionFacts from `facts`."""
        if self.phase == "execution" and self.facts:
            FactsShape.model_validate(self.facts)
        return self


class QuestionShape(_Shape):
    message: str = ""
    clarification_needed: list[str] = []
    assumptions: list[str] = []


class Clarification(EntryBase):
    error: QuestionShape = QuestionShape()
    comment: str | None = None
    asked_at: str | None = None


class ClarificationResolved(EntryBase):
    question_id: str = ""
    resolution: str = ""
    answer: str = ""
    assumptions: list[str] = []
    asked_at: str = ""


class Assumed(EntryBase):
    assumptions: list[str] = []
    reason: str = ""


class NotificationEntry(EntryBase):
    id: str = ""
    kind: str = ""
    body: str = ""


class InterventionShape(_Shape):
    summary: JsonObject = {}


class HumanIntervention(EntryBase):
    document: InterventionShape = InterventionShape()
    phase: str | None = None


class Completion(EntryBase):
    done: bool = True
    summary: JsonObject = {}
    comment: str | None = None


class ErrorEntry(EntryBase):
    level: int = 0
    error: str = ""
    message: str = ""


class CheckpointEntry(EntryBase):
    commit: str
    marker: str = ""
    tasks: list[str] = []


class Reconciled(EntryBase):
    head: str = ""
    reopened: list[str] = []


class ApprovalPlan(EntryBase):
    """planner.approval.store: a plan awaiting approval (its own model validates `record`)."""

    record: JsonObject


class ApprovalExecuted(EntryBase):
    plan_id: str = ""
    spec_id: str = ""
    ok: bool = False


class ApprovalRejected(EntryBase):
    plan_id: str = ""
    spec_id: str = ""


class ApprovalSuperseded(EntryBase):
    spec_ids: list[str] = []
    by: str = ""


class RolledBack(EntryBase):
    """A change undone that a person would have been asked about, where a pass cannot wait
    (planning off): a command's or MCP call's effect, or a change no judged call made."""

    source: str = ""
    paths: list[str] = []
    note: str = ""


ENTRY_MODELS: dict[str, type[EntryBase]] = {
    "run_start": RunStart,
    "run_end": RunEnd,
    "human_input": HumanInput,
    "plan": PlanEntry,
    "revision": Revision,
    "plan_review": PlanReview,
    "task": Task,
    "action": Action,
    "model_call": ModelCall,
    "reflection": Reflection,
    "replan_started": ReplanStarted,
    "replan_decision": ReplanDecisionEntry,
    "clarification": Clarification,
    "clarification_resolved": ClarificationResolved,
    "assumed": Assumed,
    "notification": NotificationEntry,
    "human_intervention": HumanIntervention,
    "completion": Completion,
    "error": ErrorEntry,
    "checkpoint": CheckpointEntry,
    "reconciled": Reconciled,
    "approval_plan": ApprovalPlan,
    "approval_executed": ApprovalExecuted,
    "approval_rejected": ApprovalRejected,
    "approval_superseded": ApprovalSuperseded,
    "rolled_back": RolledBack,
}


def register_entry_model(entry_type: str, model: type[EntryBase]) -> None:
    """For a phase package that writes entries of its own type (call it at import time)."""
    ENTRY_MODELS[entry_type] = model


def entry_problem(entry: JsonObject) -> str | None:
    """Why `entry` cannot be used (unknown type or a field of the wrong shape), else None."""
    kind = entry.get("type")
    if not isinstance(kind, str):
        return f"entry type {str(kind)[:40]!r} is not a name"
    model = ENTRY_MODELS.get(kind, EntryBase)  # a phase's own type: the common fields only
    try:
        model.model_validate(entry)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "entry"
        return f"{kind}: {where}: {first['msg']}"
    return None
