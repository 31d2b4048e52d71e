"""The plan-tool.md domain model in snake_case, plus what planner needs to replay a spec."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SpecKind = Literal["create", "write", "mkdir", "read", "analyze", "run", "delete"]
Risk = Literal["low", "medium", "high"]
PlanStatus = Literal[
    "proposed", "pending_review", "approved", "scheduled", "executing", "completed", "aborted"
]
SpecOutcome = Literal["pending", "approved", "rejected", "succeeded", "failed"]
Actor = Literal["ai", "user", "system"]
RISK_ORDER: dict[str, int] = {"low": 0, "medium": 1, "high": 2}


class Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class MessageRef(Model):
    message_id: str
    timestamp: str


class SpecSelection(Model):
    """Which specs an approval covers: all of the plan's, or the listed ids."""

    all: bool = False
    ids: list[str] = Field(default_factory=list)

    def covers(self, spec_id: str) -> bool:
        return self.all or spec_id in self.ids


class ActionSpec(Model):
    """The seed's base ActionSpec."""

    kind: SpecKind
    path: str = ""
    content: str | None = None
    description: str = ""
    optional: bool = False


class Preflight(Model):
    exists: bool = False
    overwrite: bool = False
    diff_summary: str = ""
    base_sha256: str | None = None
    """The file's content hash when previewed: execution recomputes it, a change asks again."""
    effect_diff: str = ""
    """A command's effect on the working tree (rolled back, waiting for a person), as a diff."""
    effect_sha256: str | None = None
    """The effect a person approves: the command runs again and keeps exactly this effect."""
    effect_reason: str = ""
    """Why the effect needs a person (e.g. "deletes README.md")."""


class ToolInvocation(Model):
    """The tool call a `run` spec replays exactly (a command or an MCP tool)."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    argument_sha256: dict[str, str] = Field(default_factory=dict)
    """Long arguments kept once under the history's payloads/ (planner.storage.payloads):
    saved copies hold the hash by name instead of the value."""
    json_arguments: list[str] = Field(default_factory=list)
    """Those of `argument_sha256` that are not text (an edit_file's `edits` list): their
    payload is the value as JSON."""


class ActionSpecExt(ActionSpec):
    """An ActionSpec with planner's review data (the seed's ActionSpecExt, flattened)."""

    id: str
    risk: Risk = "low"
    validated: bool = False
    preflight: Preflight = Field(default_factory=Preflight)
    notes: list[str] = Field(default_factory=list)
    invocation: ToolInvocation | None = None
    task_id: str = ""
    outcome: SpecOutcome = "pending"
    reason: str = ""
    """Why it was rejected or failed (a person's words or the error)."""
    needs_person: bool = False
    """Policy wants a person's approval before this spec runs."""
    reported: bool = False
    """Its outcome has been handed back to the pass (recorded as an action)."""
    content_sha256: str | None = None
    """A long `content` kept once under the history's payloads/ (planner.storage.payloads):
    saved copies hold this hash instead of the text."""

    @property
    def payload_missing(self) -> bool:
        """A stored text this spec needs could not be read back (the spec must not run)."""
        invocation = self.invocation
        arguments = invocation.arguments if invocation is not None else {}
        held = invocation.argument_sha256 if invocation is not None else {}
        lost = any(name not in arguments for name in held)
        return (self.content_sha256 is not None and self.content is None) or lost


class Approval(Model):
    approver: str
    timestamp: str
    selection: SpecSelection
    decision: Literal["approved", "rejected"] = "approved"
    reason: str = ""
    comment_id: str = ""
    """The forge comment that gave it; `event:<run id>` for an event that is no comment (a
    workflow dispatch), "" at the terminal. A plan runs only when its approval is still on the
    forge (planner.approval.gate.ApprovalWitness)."""
    thread: int | None = None
    """The issue or pull request that comment is on."""


def spec_digest(spec: ActionSpecExt) -> str:
    """What a spec would do, as a hash: an approval is of exactly the change it previewed."""
    what = {
        "kind": spec.kind,
        "path": spec.path,
        "content": spec.content,
        "invocation": spec.invocation.model_dump(mode="json") if spec.invocation else None,
        "base": spec.preflight.base_sha256,
    }
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode("utf-8")).hexdigest()[:32]


class DiffSummary(Model):
    spec_id: str
    path: str
    added: int = 0
    removed: int = 0
    summary: str = ""


class PlanPreview(Model):
    files: list[str] = Field(default_factory=list)
    diffs: list[DiffSummary] = Field(default_factory=list)
    risk_score: float = 0.0


class Plan(Model):
    id: str
    title: str
    content: str
    sources: list[MessageRef] = Field(default_factory=list)
    rationale: str = ""
    tags: list[str] = Field(default_factory=list)
    created_at: str
    version: int = 1
    issue: str = ""


class PlanState(Model):
    status: PlanStatus = "proposed"
    action_specs: list[ActionSpecExt] = Field(default_factory=list)
    selection: SpecSelection = Field(default_factory=SpecSelection)
    approvals: list[Approval] = Field(default_factory=list)
    previews: PlanPreview | None = None
    approval_requests: list[str] = Field(default_factory=list)
    results: list[FileOpOutcome] = Field(default_factory=list)

    def spec(self, spec_id: str) -> ActionSpecExt | None:
        return next((s for s in self.action_specs if s.id == spec_id), None)


class PlanRecord(Model):
    """plans/<plan_id>/plan.json: the plan, its state and its specs."""

    plan: Plan
    state: PlanState = Field(default_factory=PlanState)
    revision: int = 0
    """Counts saves: of two copies (file, history entry) the higher revision is the newer."""


class PlanRef(Model):
    id: str
    title: str
    status: PlanStatus
    issue: str = ""
    specs: int = 0
    updated_at: str = ""
    max_spec: int = 0
    """The highest spec number (aN) in the plan, so new ids need no plan files read."""


class ValidationReport(Model):
    ok: bool
    issues: list[str] = Field(default_factory=list)
    normalized: list[ActionSpecExt] = Field(default_factory=list)


class FileOpOutcome(Model):
    spec_id: str
    ok: bool
    detail: str = ""
    refused: bool = False
    """The tool refused the spec for its own content before changing anything
    (ToolResult.refused: a Python file that would no longer parse, say)."""


class ExecutionResult(Model):
    overall_success: bool
    results: list[FileOpOutcome] = Field(default_factory=list)
    started_at: str
    finished_at: str


PlanState.model_rebuild()
