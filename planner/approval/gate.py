"""The approval gate in the pass: every write, deletion or command the model asks for becomes an
ActionSpec of PlanTool, and only approved specs run (plan-tool.md "Migration": no fallback).

risky (default): a spec runs at once when policy approves it in bulk (auto_approve), else the pass
    ends waiting with its preview in the tracking comment;
plan: every spec is staged (not run) until all tasks are done; then a person approves the whole
    set before anything runs; reads of a staged file see the staged content;
off: only high-risk specs wait for a person.

On the next run, `resume` executes exactly the approved specs (the previewed content: preflight
is recomputed and a changed file is asked about again) and hands rejected ones back to the model
as failed actions carrying the person's reason.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from planner.approval.effects import KINDS, EffectGuard, EffectReview, Stray
from planner.approval.models import (
    ActionSpec,
    ActionSpecExt,
    Approval,
    MessageRef,
    PlanRecord,
    PlanStatus,
    Preflight,
    Risk,
    SpecKind,
    SpecSelection,
    ToolInvocation,
)
from planner.approval.preview import decoded, is_cut
from planner.approval.store import PlanStore
from planner.approval.tool import RUNNABLE, PlanTool
from planner.approval.validation import runs_as_code
from planner.config import TEST_PATHS, ApprovalConfig
from planner.core.interfaces import ToolCall, ToolResult
from planner.core.tool_names import READ_ONLY_TOOLS
from planner.memory.history import PlanningHistoryStore
from planner.outcome.flow import StopPass
from planner.tools.destructive import destructive_change

PASS_TOOLS = frozenset({"finish_task", "request_replan"})
STRAY_TITLE = (
    "changed outside any judged call (a process that outlived its command, or an MCP server)"
)
ROLLED_BACK = "Rolled back without asking anyone (planning is off, so no pass waits for approval)"
"""Starts every note about a change undone where a pass cannot wait: the CI layer shows these
notes in the tracking comment whatever the pass's status (planner.ci.durability.durable)."""
ReadFile = Callable[[str], bytes | None]
ReadText = Callable[[str], str | None]
HELD: tuple[PlanStatus, ...] = ("proposed", "pending_review", *RUNNABLE)
"""Plans whose pending or approved specs are changes not made yet."""


class GatePort(Protocol):
    """What the gate needs from the pass."""

    def record_action(self, task_id: str, call: ToolCall, result: ToolResult) -> None: ...

    def append(self, entry_type: str, **fields: Any) -> None: ...

    def reopen_task(self, task_id: str) -> None: ...


class ApprovalWitness(Protocol):
    """Where people answer (the forge): an approval found only in planner's history, which a
    program a pass started may have written, runs nothing."""

    def confirm(self, approval: Approval, spec: ActionSpecExt) -> str:
        """'' when the forge shows `approval` of exactly `spec` (by its author, who may approve,
        after `spec` was shown, naming it); otherwise why not, for people."""
        ...

    def was_shown(self, spec: ActionSpecExt) -> bool:
        """Whether exactly `spec` was shown to people for approval."""
        ...


SYSTEM_APPROVER = "planner"
"""What the gate approves itself (by policy, in the call that asked for it)."""
NOT_CONFIRMED = "Not run"


class AwaitingApproval(StopPass):
    """The pass ends waiting for a person (needs_human). `markdown` asks and previews; the
    forge layer shows it (rendered again from PlanTool), the pass result carries one line per
    spec as questions."""

    def __init__(self, reason: str, markdown: str, waiting: list[ActionSpecExt]) -> None:
        asks = [f"approve or reject {s.id}: {s.description} ({s.risk} risk)" for s in waiting]
        super().__init__("needs_human", reason, [], asks)
        self.markdown = markdown


@dataclass
class ApprovalGate:
    tool: PlanTool
    config: ApprovalConfig
    read_file: ReadFile
    issue_ref: str = ""
    staged: dict[str, str] = field(default_factory=dict)
    can_wait: bool = True
    """False where a pass cannot end waiting and resume (legacy mode): refuse instead."""
    current_task: str = ""
    """The task whose tool calls the guard sees (set by the approval phase before each call)."""
    code_written: set[str] = field(default_factory=set)
    """Files this pass asked to write that an allowed command runs as code (conftest.py, …):
    every later command or MCP call says it runs code the model wrote."""
    rolled_back: list[str] = field(default_factory=list)
    """Where a pass cannot wait: what was rolled back that a person would have been asked
    about, one note each (also in the history), for the people on the issue; also approvals
    the witness could not confirm."""
    witness: ApprovalWitness | None = None
    """Confirms every approval on the forge before its spec runs; None at the terminal, where
    the person approving is the one running planner."""
    test_paths: tuple[str, ...] = TEST_PATHS
    """What a test file is (verification.test_paths), for changes that delete its checks."""
    base_text: ReadText = lambda path: None
    """The file as the repository has it at the pass's start (None: not there)."""
    issue_text: str = ""
    """The issue's title and body: a deletion of definitions it names is meant."""

    def guard(self, name: str, arguments: dict[str, Any]) -> ToolResult | None:
        """ToolRegistry's guard: every tool call of the pass passes here first (None: run it)."""
        return self.before_action(
            self.current_task, ToolCall(id="", name=name, arguments=arguments)
        )

    # -- before each action -----------------------------------------------------------------

    def before_action(self, task_id: str, call: ToolCall) -> ToolResult | None:
        """None lets the pass run a read-only tool itself; otherwise the result of the spec."""
        if call.name in PASS_TOOLS:
            return None
        if call.name in READ_ONLY_TOOLS or _dry_run(call):
            return self._staged_read(call)
        spec = self.spec_for(task_id, call)
        if isinstance(spec, ToolResult):
            return spec
        told = self._destructive(spec)
        if told is not None:
            return told
        if self.config.mode == "plan":
            return self._stage(task_id, spec)
        return self._run_or_wait(task_id, spec)

    def spec_for(self, task_id: str, call: ToolCall) -> ActionSpec | ToolResult:
        """The ActionSpec a mutating tool call asks for (a failed result if it cannot be one)."""
        invocation = ToolInvocation(name=call.name, arguments=call.arguments)
        path = str(call.arguments.get("path", ""))
        if call.name in ("write_file", "edit_file") and runs_as_code(path):
            self.code_written.add(path)
        if call.name == "write_file":
            content = call.arguments.get("content")
            if not isinstance(content, str) or not path:
                return ToolResult(
                    ok=False, error="bad arguments for write_file: need path, content", refused=True
                )
            kind: SpecKind = "write" if self._exists(path) else "create"
            return _spec(kind, path, content, f"write_file {path}", invocation, task_id)
        if call.name == "edit_file":
            return self._edit_spec(task_id, call, invocation, path)
        # The whole arguments, never a cut: the preview shows what runs (render says what is cut)
        content = (
            _command_text(call)
            if call.name == "run_command"
            else json.dumps(call.arguments, sort_keys=True)  # \u escapes: nothing invisible
        )
        description = f"{call.name}: {content[:120]}{self._runs_model_code()}"
        return _spec("run", "", content, description, invocation, task_id)

    def _destructive(self, spec: ActionSpec) -> ToolResult | None:
        """A refusal telling the model what its write would destroy (planner.tools.destructive);
        None to go on to the gate."""
        before = self._current_text(spec.path) if spec.kind == "write" else None
        if before is None or spec.content is None:
            return None
        invocation = spec.invocation if isinstance(spec, ActionSpecExt) else None
        whole = invocation is None or invocation.name != "edit_file"
        base = self.base_text(spec.path)
        why = destructive_change(
            spec.path, before, spec.content, self.test_paths, whole, base, self.issue_text
        )
        return None if why is None else ToolResult(ok=False, error=why, refused=True)

    def _runs_model_code(self) -> str:
        if not self.code_written:
            return ""
        names = ", ".join(sorted(self.code_written))
        return f" (runs code the model wrote: {names[:200]})"

    def _edit_spec(
        self, task_id: str, call: ToolCall, invocation: ToolInvocation, path: str
    ) -> ActionSpec | ToolResult:
        from planner.tools.arguments import BadArguments
        from planner.tools.edits import EditFailed, apply_edits, edits_of

        current = self._current_text(path)
        if current is None:
            return ToolResult(ok=False, error=f"{path!r} does not exist or is not UTF-8 text")
        try:
            edits = edits_of(call.arguments)
            after = apply_edits(current, edits)
        except (EditFailed, BadArguments, AttributeError) as exc:
            error = str(exc) or "bad arguments for edit_file"
            return ToolResult(ok=False, error=error, refused=True)
        description = f"edit_file {path} ({len(edits)} edit(s))"
        return _spec("write", path, after, description, invocation, task_id)

    # -- risky and off: one PlanTool plan per action ---------------------------------------

    def _run_or_wait(self, task_id: str, spec: ActionSpec) -> ToolResult:
        with self.tool.batch():
            plan_id = self.tool.propose(
                spec.description, self._sources(), rationale=f"task {task_id}", tags=[task_id]
            )
            checked = self.tool.set_action_specs(plan_id, [spec]).normalized[0]
            answer = self._decide(plan_id, checked)
        if self._ask_about_effects():
            raise self._awaiting(f"approval needed for the effect of {checked.id}")
        if answer is None:
            raise self._awaiting(f"approval needed for {checked.id}")
        return answer

    def _decide(self, plan_id: str, checked: ActionSpecExt) -> ToolResult | None:
        """The spec's result, or None once a person has been asked."""
        if not checked.validated:
            return ToolResult(ok=False, error="; ".join(checked.notes))
        if self._needs_person(checked) and not self.can_wait:
            return ToolResult(ok=False, error=_cannot_wait(checked))
        if self._needs_person(checked):
            self.tool.require_person(plan_id, [checked.id])
            self.tool.request_approval(plan_id, SpecSelection(ids=[checked.id]))
            return None
        self.tool.approve(plan_id, "planner", SpecSelection(all=True), actor="system")
        self.tool.execute(plan_id, reported=True)
        return self._tool_result(self.tool.get_plan(plan_id), checked.id)

    def _needs_person(self, spec: ActionSpecExt) -> bool:
        """Policy by risk, except that no action is approved in bulk whose preview a person
        could not read in full (any tool: a file's diff, a command, MCP arguments)."""
        if self.config.mode == "plan" or is_cut(self.tool.preview_body(spec)):
            return True
        return person_needed(self.config, spec.risk)

    # -- effects of commands and MCP calls ----------------------------------------------------

    def _ask_about_effects(self) -> bool:
        """Ask a person about every effect and stray change the guard rolled back; whether any
        was asked about. Where a pass cannot wait, the rolled-back call stays a failed action
        for the model, and a stray change stays rolled back."""
        guard = self._effect_guard()
        reviews = guard.take_pending() if guard is not None else []
        strays = guard.take_strays() if guard is not None else []
        if not self.can_wait:
            self._tell_rolled_back(reviews, strays)
            return False
        for review in reviews:
            self._ask_about_effect(review)
        return bool(reviews) | self._ask_about_strays(strays)

    def _tell_rolled_back(self, reviews: list[EffectReview], strays: list[Stray]) -> None:
        """Nobody can be asked: each undone change is recorded and noted for the issue instead
        of vanishing (the model only learns that its call failed)."""
        for review in reviews:
            effect = review.effect
            what = f"the effect of {review.spec.description[:200]}: {effect.reason()}"
            self._note_rolled_back(what, "effect", [c.change.path for c in effect.changes])
        for stray in strays:
            judged, path = stray.judged, stray.judged.change.path
            why = f"{judged.risk} risk" + (f": {judged.reason}" if judged.reason else "")
            what = f"{path} {KINDS[judged.change.kind]} {STRAY_TITLE}; {why}"
            self._note_rolled_back(what, "stray", [path])

    def _note_rolled_back(self, what: str, source: str, paths: list[str]) -> None:
        note = f"{ROLLED_BACK}: {what}"
        self.rolled_back.append(note)
        journal = self.tool.store.journal
        if journal is not None:
            journal.append("rolled_back", source=source, paths=paths, note=note)

    def _ask_about_strays(self, strays: list[Stray]) -> bool:
        """Each stray change becomes the direct file action it amounts to, waiting for a person:
        approving it makes the change again, exactly as shown."""
        specs = [spec for stray in strays if (spec := self._stray_spec(stray)) is not None]
        if not specs:
            return False
        with self.tool.batch():
            plan_id = self.tool.propose(
                STRAY_TITLE, self._sources(), rationale=STRAY_TITLE, tags=["stray"]
            )
            checked = self.tool.set_action_specs(plan_id, specs).normalized
            ids = [spec.id for spec in checked if spec.validated]
            self.tool.require_person(plan_id, ids)
            self.tool.request_approval(plan_id, SpecSelection(ids=ids))
        return bool(ids)

    def _stray_spec(self, stray: Stray) -> ActionSpecExt | None:
        """None where no file action can make the change again (binary content, a symlink)."""
        change = stray.judged.change
        text = decoded(stray.written) if stray.written is not None else None
        if change.kind != "delete" and text is None:
            return None
        return ActionSpecExt(  # no invocation: it runs as the plain file action
            id="",
            kind="delete" if change.kind == "delete" else "write",
            path=change.path,
            content=text or "",
            description=f"{change.kind} {change.path}: {STRAY_TITLE}",
            task_id=self.current_task,
        )

    def settle(self) -> None:
        """Before a commit: what changed since the gate last judged the tree, outside any
        judged call, is judged now; what needs a person is rolled back and asked about (the
        pass ends waiting: AwaitingApproval)."""
        guard = self._effect_guard()
        if guard is None:
            return
        guard.settle()
        if self._ask_about_effects():
            raise self._awaiting("approval needed for files changed outside any judged call")

    def close(self) -> None:
        """Delete the saved copies a rollback would need (after the pass's last look)."""
        guard = self._effect_guard()
        if guard is not None:
            guard.watcher.close()

    def accept(self) -> None:
        """The tree as it is now counts as judged (after planner's own commit and rebase)."""
        guard = self._effect_guard()
        if guard is not None:
            guard.accept()

    def _ask_about_effect(self, review: EffectReview) -> None:
        spec, effect = review.spec, review.effect
        held = _spec(
            "run",
            "",
            spec.content or "",
            f"{spec.description[:200]} (its effect)",
            spec.invocation or ToolInvocation(name="run_command"),
            spec.task_id,
        )
        held.preflight = Preflight(
            diff_summary=effect.summary(),
            effect_diff=effect.diff,
            effect_sha256=effect.digest,
            effect_reason=effect.reason() if effect.risk == "high" else "",
        )
        with self.tool.batch():
            plan_id = self.tool.propose(
                held.description, self._sources(), rationale=f"effect of {spec.id}", tags=["effect"]
            )
            checked = self.tool.set_action_specs(plan_id, [held]).normalized[0]
            self.tool.require_person(plan_id, [checked.id])
            self.tool.request_approval(plan_id, SpecSelection(ids=[checked.id]))

    def watched(
        self, task_id: str, argv: list[str], run: Callable[[], ToolResult], description: str = ""
    ) -> ToolResult:
        """`run` (a command planner starts on the model's behalf, such as the repository's test
        command in verification) under the same effect check as run_command. An effect that
        needs a person is rolled back; when `argv` is an allowed command a person is asked (the
        pass ends waiting, AwaitingApproval), else the failed result says what was rolled back."""
        guard = self._effect_guard()
        if guard is None:
            return run()
        text = shlex.join(argv)
        invocation = ToolInvocation(name="run_command", arguments={"argv": argv})
        spec = _spec("run", "", text, description or text, invocation, task_id)
        result = guard.run(spec, run)
        if guard.pending and self.tool.rules.command_allowed(text) and self._ask_about_effects():
            raise self._awaiting(f"approval needed for the effect of {text}")
        guard.take_pending()  # not replayable by a person's approval: the failure says it all
        return result

    def _effect_guard(self) -> EffectGuard | None:
        guard = getattr(self.tool.executor, "effects", None)
        return guard if isinstance(guard, EffectGuard) else None

    # -- plan mode: stage everything, ask once -------------------------------------------

    def _stage(self, task_id: str, spec: ActionSpec) -> ToolResult:
        record = self._staging_record()
        specs: list[ActionSpec] = [*record.state.action_specs, spec]
        report = self.tool.set_action_specs(record.plan.id, specs)
        checked = report.normalized[-1]
        if not checked.validated:
            self.tool.set_action_specs(record.plan.id, report.normalized[:-1])
            return ToolResult(ok=False, error="; ".join(checked.notes))
        self.tool.require_person(record.plan.id, [checked.id])
        if checked.kind in {"create", "write"}:
            self.staged[checked.path] = checked.content or ""
        return ToolResult(
            ok=True,
            content=f"staged as {checked.id} ({checked.preflight.diff_summary or checked.kind}); "
            "it runs after a person approves the plan's changes. Continue as if it had run.",
        )

    def _staging_record(self) -> PlanRecord:
        open_plans = self.tool.records(("proposed", "pending_review"))
        staging = [r for r in open_plans if "staged" in r.plan.tags]
        if staging:
            return staging[-1]
        plan_id = self.tool.propose(
            "the plan's changes, staged for approval", self._sources(), tags=["staged"]
        )
        return self.tool.get_plan(plan_id)

    def before_completion(self) -> None:
        """plan mode: the staged specs wait for a person before the pass may complete."""
        for record in self.tool.records(("pending_review",)):
            if "staged" in record.plan.tags and not record.state.approval_requests:
                self.tool.request_approval(record.plan.id, SpecSelection(all=True))
        if self.waiting():
            raise self._awaiting("approval needed for the plan's changes")

    def _staged_read(self, call: ToolCall) -> ToolResult | None:
        path = str(call.arguments.get("path", ""))
        if call.name != "read_file" or path not in self.staged:
            return None
        return ToolResult(ok=True, content=f"[staged, not yet approved]\n{self.staged[path]}")

    # -- the next run -----------------------------------------------------------------------

    def unmade_changes(self) -> set[str]:
        """Tasks with a change not made yet: staged (plan mode), asked about, or approved and
        not yet run. Such a task is not done, whatever the model said when it finished."""
        return unmade_tasks(self.tool.records(HELD))

    def waiting(self) -> list[ActionSpecExt]:
        """Specs that wait for a person (asked, not yet approved or rejected)."""
        from planner.approval.answers import waiting_specs

        return waiting_specs(self.tool)

    def resume(self, port: GatePort) -> None:
        """Execute approved plans, hand rejected specs back, and re-ask for what still waits.
        An approval the witness cannot confirm runs nothing (_hold_back)."""
        for record in self.tool.records(RUNNABLE):
            self._hold_back(record)
        for record in self.tool.records(RUNNABLE):
            self._execute_approved(record, port)
        for record in self.tool.records(("completed", "aborted")):  # `plan-tool execute`
            self._report_executed(record, port)
        self._ask_about_effects()
        # A rejection may sit in a plan still waiting for its other specs, or next to approved ones.
        for record in self.tool.records(("proposed", "pending_review")):
            self._report_rejected(record, port)
        if self.waiting():
            raise self._awaiting("still waiting for approval")

    def _hold_back(self, record: PlanRecord) -> None:
        """Approved specs not yet run whose approval is not confirmed: one shown to people waits
        for an approval again; one never shown as it is now (a plan or a spec planner did not
        write) is never run. Each gets a note for the people on the issue."""
        refused = {
            spec.id: why
            for spec in record.state.action_specs
            if spec.outcome == "approved" and (why := self._unconfirmed(record, spec))
        }
        if not refused:
            return
        specs = [spec for spec in record.state.action_specs if spec.id in refused]
        shown = [spec.id for spec in specs]
        again = [s.id for s in specs if self.witness is not None and self.witness.was_shown(s)]
        dropped = [spec_id for spec_id in shown if spec_id not in again]
        self.tool.hold_back(record.plan.id, again, dropped, refused)
        for spec_id in shown:
            what = "it waits for an approval again" if spec_id in again else "it is dropped"
            note = f"{NOT_CONFIRMED}: {spec_id} of {record.plan.id}: {refused[spec_id]}; {what}"
            self.rolled_back.append(note)
            journal = self.tool.store.journal
            if journal is not None:
                journal.append(
                    "approval_refused", plan_id=record.plan.id, spec_id=spec_id, note=note
                )

    def _unconfirmed(self, record: PlanRecord, spec: ActionSpecExt) -> str:
        """Why `spec`'s approval does not count ('' when it does)."""
        approval = next(
            (
                a
                for a in reversed(record.state.approvals)
                if a.decision == "approved" and a.selection.covers(spec.id)
            ),
            None,
        )
        if approval is None:
            return "no approval of it was recorded"
        if approval.approver == SYSTEM_APPROVER:
            needs = self._needs_person(spec) and spec.validated
            return (
                "it needs a person's approval, and only planner's policy approved it"
                if needs
                else ""
            )
        return self.witness.confirm(approval, spec) if self.witness is not None else ""

    def _execute_approved(self, record: PlanRecord, port: GatePort) -> None:
        self.tool.execute(record.plan.id)
        self._report_executed(self.tool.get_plan(record.plan.id), port)

    def _report_executed(self, done: PlanRecord, port: GatePort) -> None:
        """Outcomes the pass has not seen yet: specs run here, or at the terminal."""
        for spec in done.state.action_specs:
            if spec.outcome in ("succeeded", "failed") and not _reported(done, spec.id):
                result = self._tool_result(done, spec.id)
                port.record_action(spec.task_id, _call_of(spec), result)
                port.append(
                    "approval_executed", plan_id=done.plan.id, spec_id=spec.id, ok=result.ok
                )
                self.tool.mark_reported(done.plan.id, spec.id)
                if not result.ok:
                    port.reopen_task(spec.task_id)
        self._report_rejected(done, port)

    def _report_rejected(self, record: PlanRecord, port: GatePort) -> None:
        for spec in record.state.action_specs:
            if spec.outcome == "rejected" and not _reported(record, spec.id):
                error = f"a person rejected {spec.id} ({spec.description}): {spec.reason}"
                port.record_action(spec.task_id, _call_of(spec), ToolResult(ok=False, error=error))
                port.append("approval_rejected", plan_id=record.plan.id, spec_id=spec.id)
                self.tool.mark_reported(record.plan.id, spec.id)
                port.reopen_task(spec.task_id)

    def reject_waiting(self, approver: str, reason: str) -> list[str]:
        """A person answered with new guidance instead: what waited is rejected with it."""
        rejected = []
        for record in self.tool.records(("pending_review",)):
            asked = record.state.approval_requests  # refused specs stay pending, never asked
            ids = [s.id for s in record.state.action_specs if asked and _waits(s)]
            if ids:
                self.tool.reject(record.plan.id, approver, ids, reason)
                rejected += ids
        return rejected

    # -- helpers ------------------------------------------------------------------------------

    def _awaiting(self, reason: str) -> AwaitingApproval:
        from planner.approval.render import approval_request

        waiting = self.waiting()
        return AwaitingApproval(reason, approval_request(self.tool, waiting), waiting)

    def _tool_result(self, record: PlanRecord, spec_id: str) -> ToolResult:
        outcome = next((o for o in reversed(record.state.results) if o.spec_id == spec_id), None)
        if outcome is None:
            spec = record.state.spec(spec_id)
            return ToolResult(ok=False, error=spec.reason if spec else "not executed")
        if outcome.ok:
            return ToolResult(ok=True, content=outcome.detail)
        return ToolResult(ok=False, error=outcome.detail, refused=outcome.refused)

    def _exists(self, path: str) -> bool:
        return self.read_file(path) is not None

    def _current_text(self, path: str) -> str | None:
        if path in self.staged:
            return self.staged[path]
        data = self.read_file(path)
        try:
            return None if data is None else data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def _sources(self) -> list[MessageRef]:
        return [MessageRef(message_id=self.issue_ref or "issue", timestamp=self.tool._now())]


def _spec(
    kind: SpecKind,
    path: str,
    content: str,
    description: str,
    invocation: ToolInvocation,
    task_id: str,
) -> ActionSpecExt:
    return ActionSpecExt(
        id="",
        kind=kind,
        path=path,
        content=content,
        description=description,
        invocation=invocation,
        task_id=task_id,
    )


def person_needed(config: ApprovalConfig, risk: Risk) -> bool:
    """The policy for one risk level: high always waits; off lets everything else run; risky
    and plan let the levels of `auto_approve` run (plan mode stages specs before it asks)."""
    if risk == "high":
        return True
    return config.mode != "off" and risk not in config.auto_approve


def _cannot_wait(spec: ActionSpecExt) -> str:
    return (
        f"refused {spec.id} ({spec.description}): {spec.risk} risk needs a person's approval, "
        "and without planning (planning.enabled: false) a pass cannot wait for one"
    )


def _command_text(call: ToolCall) -> str:
    argv = call.arguments.get("argv")
    if isinstance(argv, list) and all(isinstance(part, str) for part in argv):
        return shlex.join(argv)
    return json.dumps(argv)


def _dry_run(call: ToolCall) -> bool:
    return call.name == "edit_file" and call.arguments.get("dryRun") is True


def _call_of(spec: ActionSpecExt) -> ToolCall:
    invocation = spec.invocation or ToolInvocation(name=spec.kind, arguments={"path": spec.path})
    return ToolCall(id=f"approved-{spec.id}", name=invocation.name, arguments=invocation.arguments)


def _waits(spec: ActionSpecExt) -> bool:
    return spec.outcome == "pending" and spec.needs_person


def _reported(record: PlanRecord, spec_id: str) -> bool:
    spec = record.state.spec(spec_id)
    return spec is not None and spec.reported


def unmade_tasks(records: Iterable[PlanRecord]) -> set[str]:
    """The tasks of `records` (plans still held) with a change pending or approved, not run."""
    return {
        spec.task_id
        for record in records
        for spec in record.state.action_specs
        if spec.task_id and spec.outcome in ("pending", "approved")
    }


def unmade_in_history(journal: PlanningHistoryStore) -> set[str]:
    """What `ApprovalGate.unmade_changes` says, read after the pass from the issue's history
    (its plan files, else their copies in the JSONL history): for what is shown of the plan
    outside a pass (the job summary, `planner plan --status`)."""
    store = PlanStore(journal.directory, journal)
    refs = [ref for ref in store.index() if ref.issue == journal.issue_id and ref.status in HELD]
    loaded = (store.load(ref.id) for ref in refs)
    return unmade_tasks(r for r in loaded if r is not None and r.state.status in HELD)
