"""PlanningCoordinator: one pass of the planning process (seed: planning-process.md §7.4.1).

plan (or resume) -> execute tasks in execution_order with tool calls -> reflect on errors and
every N actions -> revise within limits -> completion. Control flow uses two small exceptions:
StopPass ends the pass with a status, PlanChanged abandons the current task after a revision.
Every decision is appended to the history the moment it is made, so a crash loses nothing.

With planning.replanning enabled (the default), the model's replan decisions (replanning.md)
take the place of the reflection call: the coordinator calls the ReplanManager's hooks after
the plan exists, at the reflection trigger points and before completion; the manager decides,
records and carries out replans and raises PlanChanged / StopPass like everything else here.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, NoReturn

from planner.engine.checkpoints import after_task
from planner.engine.config import PlannerConfig
from planner.engine.deadline import stop_if_expired
from planner.engine.documents import (
    CompletionReply,
    ExecutionRecord,
    FunctionCall,
    HumanIntervention,
    InterventionSummary,
    Plan,
    PlanningReply,
    PlanRules,
    ReflectionReply,
)
from planner.engine.errors import ApiError, ModelBehaviourError
from planner.engine.flow import PlanChanged, StopPass
from planner.engine.history import PlanningHistoryStore
from planner.engine.interfaces import DocT, ProgressReporter, ToolCall, ToolResult, ToolSpec
from planner.engine.issue import IssueContext, prompt_view, sanitize_untrusted
from planner.engine.llm import CallRecord
from planner.engine.prompts import render
from planner.engine.result import PassResult, PassStatus, Usage, render_checklist
from planner.engine.state import IssueState
from planner.engine.summaries import assumptions_in_force, history_digest, task_actions_digest
from planner.replanning.manager import ReplanManager
from planner.replanning.tools import REQUEST_REPLAN
from planner.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

RESULT_EXCERPT = 2_000
FINISH_TASK = ToolSpec(
    name="finish_task",
    description="Declare the current task finished (done, or impossible to do).",
    parameters={
        "type": "object",
        "properties": {
            "status": {"type": "string", "enum": ["completed", "failed"]},
            "summary": {"type": "string", "description": "What was done, or why it failed"},
        },
        "required": ["status", "summary"],
    },
)


class PlanningCoordinator:
    def __init__(
        self,
        config: PlannerConfig,
        model: Any,
        tools: ToolRegistry,
        issue: IssueContext,
        store: PlanningHistoryStore,
        reporter: ProgressReporter | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.config = config
        self.model = model
        self.tools = tools
        self.issue = issue
        self.store = store
        self.reporter = reporter
        self.usage = Usage()
        self.action_counter = 0
        self.questions: list[str] = []
        self.summary: Any = None
        self.clock = clock or (lambda: datetime.now(UTC))
        self._started = time.monotonic()
        self._last_action: tuple[ToolCall, ToolResult] | None = None
        self.replan = ReplanManager(config, store, self, issue, self.clock)
        model.on_call = self._record_call
        if self.replan.active and "max_revisions" in config.planning.revision.model_fields_set:
            log.warning(
                "planning.revision.max_revisions (MAX_PLAN_REVISIONS) only applies with "
                "replanning off; the planning.replanning limits apply instead"
            )

    # -- the pass ---------------------------------------------------------------------------

    def execute_with_planning(self) -> PassResult:
        self.store.append(
            "run_start", instruction=self.issue.instruction, planning=self.config.planning.enabled
        )
        if self.issue.instruction:
            self.store.append("human_input", text=self.issue.instruction)
        status: PassStatus = "failed"
        reason, messages = "the pass ended unexpectedly", []
        try:
            self._run()
        except StopPass as stop:
            status, reason, messages = stop.status, stop.reason, stop.messages
        except (ApiError, ModelBehaviourError) as exc:
            reason, messages = str(exc), [f"planner stopped: {exc}"]
            self.store.append("error", level=4, error=type(exc).__name__, message=str(exc))
        finally:
            result = self.snapshot(status, reason, messages)
            self.store.append(
                "run_end",
                status=status,
                stop_reason=reason,
                usage=result.usage.model_dump(),
                actions=self.action_counter,
            )
        self._report(result)
        return result

    def _run(self) -> None:
        state = self._state()
        if not self.config.planning.enabled:
            self._legacy_loop()
        if state.completed and not self.issue.instruction:
            raise StopPass("completed", "the plan was already completed")
        if self.replan.active:
            self.replan.resume()
            state = self._state()
        if state.plan is None or state.completed or self._new_work_requested(state):
            self._plan()
        while True:
            if self.replan.active:
                self.replan.review_if_pending()
            state = self._state()
            task_id = state.next_task()
            try:
                if task_id is None:
                    self._finish(state)
                self._execute_task(task_id, state)
            except PlanChanged:
                continue

    def _new_work_requested(self, state: IssueState) -> bool:
        """A person's instruction arrived but the plan has nothing left to run: plan again,
        with the whole history in context, instead of judging the old plan once more."""
        answering = self.replan.answer_pending()  # durable: an answer feeds its decision point
        return bool(self.issue.instruction.strip()) and state.next_task() is None and not answering

    def _state(self) -> IssueState:
        return IssueState.from_entries(self.store.entries())

    # -- phase 1-3: planning --------------------------------------------------------------------

    def _plan(self) -> None:
        request = render("planning_request.md.j2", **self.planning_variables())
        folded = self.replan.folded_planning_instruction()
        messages = [
            self._system("planning"),
            _user(request + ("\n" + folded if folded else "")),
        ]
        reply = self._structured("planning", messages, PlanningReply)
        if reply.error is not None and self._questions_used() >= self._question_limit():
            reply = self._plan_on_assumptions(messages, reply)
        if reply.error is not None:
            self.store.append(
                "clarification",
                error=reply.error.model_dump(),
                comment=reply.comment,
                asked_at=_iso(self.clock()),
            )
            self.questions = list(reply.error.clarification_needed)
            if self.replan.active:
                self.replan.planning_question(reply.error)
            raise StopPass(
                "needs_human",
                f"clarification needed: {reply.error.message}",
                [reply.comment or reply.error.message],
            )
        self.store.save_plan(reply.plan().model_dump())
        self._report(self.snapshot("in_progress", "planned"))
        if self.replan.active:
            self.replan.review_if_pending(reply.replan_review)

    def _question_limit(self) -> int:
        return self.config.planning.replanning.goal_understanding.max_clarification_requests

    def _questions_used(self) -> int:
        return sum(1 for entry in self.store.entries() if entry.get("type") == "clarification")

    def _plan_on_assumptions(self, messages: list[dict[str, Any]], asking: PlanningReply) -> Any:
        """The question budget is spent: the model must plan on its stated assumptions."""
        assert asking.error is not None
        assumptions = [sanitize_untrusted(a, 1_000) for a in asking.error.assumptions]
        self.store.append("assumed", assumptions=assumptions, reason="question limit reached")
        if self.replan.active:
            self.replan.planning_assumed(assumptions)
        instruction = render(
            "plan_on_assumptions.md.j2",
            asked=self._questions_used(),
            limit=self._question_limit(),
            assumptions=assumptions,
        )
        conversation = [*messages, _assistant(asking.model_dump_json(), []), _user(instruction)]
        return self._structured("planning", conversation, PlanningReply)

    def planning_variables(self) -> dict[str, Any]:
        return {
            "issue": prompt_view(self.issue),
            "tools": self.tools.catalogue(),
            "history": history_digest(self.store.entries()),
            "max_subtasks": self.config.planning.max_subtasks,
        }

    # -- phase 4: execution -----------------------------------------------------------------

    def _execute_task(self, task_id: str, state: IssueState) -> None:
        assert state.plan is not None
        self.store.append("task", task_id=task_id, status="in_progress")
        self._report(self.snapshot("in_progress", f"working on {task_id}"))
        self._last_action = None
        messages = [self._system("execution"), _user(self._task_prompt(task_id, state))]
        nudged = False
        while True:
            reply = self._chat("execute", messages)
            messages.append(_assistant(reply.content, reply.tool_calls))
            if not reply.tool_calls:
                if nudged:
                    return self._finish_task(task_id, "completed", reply.content or "")
                nudged = True
                messages.append(_user(render("nudge.md.j2", task_id=task_id)))
                continue
            finish = self._run_tool_calls(task_id, reply.tool_calls, messages)
            if finish is not None:
                return self._finish_task(task_id, *finish)

    def _run_tool_calls(
        self, task_id: str, calls: list[ToolCall], messages: list[dict[str, Any]]
    ) -> tuple[str, str] | None:
        finish = None
        for call in calls:
            if call.name == FINISH_TASK.name:
                finish = (
                    str(call.arguments.get("status", "completed")),
                    str(call.arguments.get("summary", "")),
                )
                messages.append(_tool_message(call.id, "noted"))
                continue
            if call.name == REQUEST_REPLAN.name and self.replan.folded:
                answer = self.replan.folded_execution(task_id, call.arguments, self._last_action)
                messages.append(_tool_message(call.id, answer))
                continue
            result = self._evaluate_action(task_id, call, self._act(task_id, call))
            self._last_action = (call, result)
            messages.append(_tool_message(call.id, result.for_model()))
        if finish and finish[0] not in ("completed", "failed"):
            finish = ("completed", finish[1])
        return finish

    def _check_action_budget(self) -> None:
        limit = self.config.budget.max_actions
        if self.action_counter >= limit:
            raise StopPass("in_progress", f"budget: {limit} actions per pass reached")

    def _act(self, task_id: str, call: ToolCall) -> ToolResult:
        self._check_action_budget()
        if call.raw_arguments:
            result = ToolResult(ok=False, error="the tool arguments were not a JSON object")
        else:
            result = self.tools.call(call.name, call.arguments)
        self.action_counter += 1
        record = ExecutionRecord(
            current_task=task_id,
            function_call=FunctionCall(name=call.name, arguments=call.arguments),
        )
        self.store.append(
            "action",
            index=self.action_counter,
            task_id=task_id,
            execution=record.model_dump(),
            ok=result.ok,
            error=result.error,
            result=result.content[:RESULT_EXCERPT],
        )
        return result

    def _finish_task(self, task_id: str, status: str, summary: str) -> None:
        self.store.append("task", task_id=task_id, status=status, summary=summary)
        after_task(self.reporter, self.store, task_id)  # durable: commit + push, then record
        self._report(self.snapshot("in_progress", f"{task_id} {status}"))
        if status != "failed" or not self._reflection_wanted(failed=True):
            return
        if self.replan.separate:
            self.replan.after_task_failure(task_id, summary)
        elif not self.replan.active:
            self._reflect(task_id, f"task {task_id} reported failure: {summary}")

    def _task_prompt(self, task_id: str, state: IssueState) -> str:
        prompt = self._plain_task_prompt(task_id, state)
        if self.replan.folded:
            prompt += "\n" + self.replan.prompts.build_folded_execution()
        return prompt

    def _plain_task_prompt(self, task_id: str, state: IssueState) -> str:
        assert state.plan is not None
        return render(
            "execute_task.md.j2",
            issue=prompt_view(self.issue),
            plan=state.plan,
            checklist=render_checklist(self.snapshot("in_progress", "")),
            task=state.plan.subtask(task_id),
            actions=state.plan.actions_for(task_id),
            earlier=task_actions_digest(state.actions_by_task.get(task_id, [])),
            assumptions=assumptions_in_force(self.store.entries()),
        )

    # -- phase 5: monitoring and reflection -------------------------------------------------------

    def _reflection_wanted(self, *, failed: bool) -> bool:
        reflection = self.config.planning.reflection
        if not reflection.enabled:
            return False
        if failed and reflection.trigger_on_error:
            return True
        interval = reflection.trigger_interval
        return not failed and interval > 0 and self.action_counter % interval == 0

    def _evaluate_action(self, task_id: str, call: ToolCall, result: ToolResult) -> ToolResult:
        """At the reflection trigger points: reflect (replanning off) or take the replan
        decision (replanning on; folded mode leaves it to the model's request_replan call).
        Legacy mode has no plan to reflect on: the model sees the result and carries on."""
        if not self.config.planning.enabled:
            return result
        while self._reflection_wanted(failed=not result.ok):
            if not self.replan.active:
                outcome = "failed: " + str(result.error) if not result.ok else "succeeded"
                self._reflect(task_id, f"action {call.name} for {task_id} {outcome}")
                return result
            if not self.replan.separate:
                return result
            if self.replan.after_action(task_id, call, result) != "retry":
                return result
            result = self._act(task_id, call)
        return result

    def _reflect(self, task_id: str, trigger: str) -> None:
        state = self._state()
        messages = [
            self._system("reflection"),
            _user(
                render(
                    "reflection_request.md.j2",
                    plan=state.plan,
                    trigger=sanitize_untrusted(trigger, 4_000),
                    task_id=task_id,
                    checklist=render_checklist(self.snapshot("in_progress", "")),
                    actions=task_actions_digest(state.actions_by_task.get(task_id, [])),
                    depth=self.config.planning.reflection.depth,
                )
            ),
        ]
        try:
            reply = self._structured(
                "reflection", messages, ReflectionReply, current_plan=state.plan
            )
        except ModelBehaviourError as exc:
            # Level 2: a failed reflection is logged and execution continues.
            log.warning("reflection failed: %s", exc)
            self.store.append("error", level=2, error="reflection_failed", message=str(exc))
            return
        self.store.save_reflection(reply.model_dump())
        if reply.reflection.plan_revision_needed:
            self._revise(reply, state)

    def _revise(self, reply: ReflectionReply, state: IssueState) -> None:
        assert reply.plan_revision is not None and state.plan is not None
        limit = self.config.planning.revision.max_revisions
        if state.revisions_since_human >= limit:
            self._request_intervention(state, reply.plan_revision.reason)
        revised = reply.plan_revision.apply_to(state.plan)
        self.store.save_revision(revised.model_dump(), reply.model_dump())
        self._report(self.snapshot("in_progress", "plan revised"))
        raise PlanChanged

    def _request_intervention(self, state: IssueState, wanted: str) -> None:
        done, total = state.progress()
        failed = sum(1 for status in state.task_status.values() if status == "failed")
        limit = self.config.planning.revision.max_revisions
        document = HumanIntervention(
            summary=InterventionSummary(
                tasks_completed=done,
                tasks_failed=failed,
                revision_attempts=state.revisions_since_human,
                reason=f"the plan revision limit ({limit}) was reached",
                current_state=f"{done}/{total} tasks complete; wanted another revision: {wanted}",
                recommendations=["Reply with guidance (`/planner <instructions>`)."],
            ),
            comment="Automatic processing is stuck, so a person needs to step in.",
        )
        self.store.append("human_intervention", document=document.model_dump())
        raise StopPass(
            "needs_human",
            document.summary.reason,
            [document.comment, document.summary.current_state],
        )

    # -- completion -----------------------------------------------------------------------------

    def _finish(self, state: IssueState) -> NoReturn:
        """No task is left: the §8 final evaluation may revise the plan, else complete."""
        if self.replan.separate:
            self.replan.final_evaluation()
            state = self._state()
        raise self._complete(state)

    def _complete(self, state: IssueState) -> StopPass:
        request = render(
            "completion_request.md.j2",
            plan=state.plan,
            tasks=state.tasks(),
            instruction=prompt_view(self.issue)["instruction"],
            checklist=render_checklist(self.snapshot("in_progress", "")),
        )
        folded = self.replan.folded_completion_instruction()
        messages = [
            self._system("completion"),
            _user(request + ("\n" + folded if folded else "")),
        ]
        reply = self._structured("completion", messages, CompletionReply)
        if self.replan.folded:
            self.replan.folded_final(reply.replan_decision)
        self.store.append(
            "completion", done=reply.done, summary=reply.summary.model_dump(), comment=reply.comment
        )
        self.summary = reply.summary
        if not reply.done:
            raise StopPass(
                "needs_human", "the model did not consider the work done", [reply.comment]
            )
        raise StopPass("completed", "all tasks finished", [reply.comment] if reply.comment else [])

    # -- legacy mode (planning.enabled: false) ------------------------------------------------

    def _legacy_loop(self) -> None:
        messages = [
            self._system("legacy"),
            _user(render("legacy_request.md.j2", issue=prompt_view(self.issue))),
        ]
        while True:
            reply = self._chat("legacy", messages)
            messages.append(_assistant(reply.content, reply.tool_calls))
            finish = (
                self._run_tool_calls("legacy", reply.tool_calls, messages)
                if reply.tool_calls
                else ("completed", reply.content or "")
            )
            if finish is not None:
                self.store.append("completion", done=True, summary={}, comment=finish[1])
                raise StopPass(
                    "completed" if finish[0] == "completed" else "failed", finish[1] or "done"
                )

    # -- model calls and bookkeeping ------------------------------------------------------------

    def _system(self, phase: str) -> dict[str, Any]:
        planning = self.config.planning
        return {
            "role": "system",
            "content": render(
                "system_planning.md.j2",
                phase=phase,
                strategy=planning.strategy,
                decomposition_level=planning.decomposition_level,
                reflection_interval=planning.reflection.trigger_interval,
            ),
        }

    def _structured(
        self, kind: str, messages: list[dict[str, Any]], schema: Any, current_plan: Any = None
    ) -> Any:
        self._check_budget()
        return self.model.structured(kind, messages, schema, self.plan_rules(current_plan))

    def _chat(self, kind: str, messages: list[dict[str, Any]]) -> Any:
        self._check_budget()
        extra = [REQUEST_REPLAN] if self.replan.folded and kind == "execute" else []
        return self.model.chat(kind, messages, [*self.tools.specs(), FINISH_TASK, *extra])

    # -- the replanning port (planner.replanning.port.ReplanPort) -------------------------------

    def plan_rules(self, current_plan: Plan | None) -> PlanRules:
        return PlanRules(
            max_subtasks=self.config.planning.max_subtasks,
            tool_names=self.tools.names() | {FINISH_TASK.name},
            current_plan=current_plan,
        )

    def ask_document(
        self,
        kind: str,
        prompt: str,
        schema: type[DocT],
        context: Any = None,
        system: str = "replanning",
    ) -> DocT:
        self._check_budget()
        messages = [self._system(system), _user(prompt)]
        document: DocT = self.model.structured(kind, messages, schema, context)
        return document

    def ask_text(self, kind: str, prompt: str, schema: type[Any]) -> str:
        self._check_budget()
        messages = [self._system("replanning"), _user(prompt)]
        return str(self.model.structured_text(kind, messages, schema))

    def tool_specs(self) -> list[ToolSpec]:
        return self.tools.specs()

    def checklist(self) -> str:
        return render_checklist(self.snapshot("in_progress", ""), max_chars=6_000)

    def issue_state(self) -> IssueState:
        return self._state()

    def snapshot_now(self) -> PassResult:
        return self.snapshot("in_progress", "")

    def progress(self, reason: str) -> None:
        self._report(self.snapshot("in_progress", reason))

    def _check_budget(self) -> None:
        stop_if_expired()  # durable: the run's deadline (budget minus the finish, or a signal)
        budget = self.config.budget
        if self.usage.model_calls >= budget.max_model_calls:
            raise StopPass(
                "in_progress", f"budget: {budget.max_model_calls} model calls per pass reached"
            )
        if self.usage.total_tokens >= budget.max_total_tokens:
            raise StopPass(
                "in_progress", f"budget: {budget.max_total_tokens} tokens per pass reached"
            )
        if time.monotonic() - self._started >= budget.max_wall_seconds:
            raise StopPass(
                "in_progress", f"budget: {budget.max_wall_seconds:g} seconds per pass reached"
            )

    def _record_call(self, record: CallRecord) -> None:
        self.usage.add(record.prompt_tokens, record.completion_tokens)
        self.store.append(
            "model_call",
            kind=record.kind,
            model=record.model,
            prompt_tokens=record.prompt_tokens,
            completion_tokens=record.completion_tokens,
            total_tokens=record.total_tokens,
            latency_ms=record.latency_ms,
            attempts=record.attempts,
            outcome=record.outcome,
        )

    def snapshot(
        self, status: PassStatus, reason: str, messages: list[str] | None = None
    ) -> PassResult:
        state = self._state()
        return PassResult(
            status=status,
            stop_reason=reason,
            goal=state.plan.goal_understanding.main_objective if state.plan else "",
            plan=state.plan,
            tasks=state.tasks(),
            revision=state.revision,
            revision_reason=state.revision_reason,
            previous_progress=state.previous_progress,
            plan_started_at=state.plan_started_at,
            plan_history=list(state.plan_history),
            usage=self.usage.model_copy(),
            actions=self.action_counter,
            messages=list(messages or []),
            questions=list(self.questions or self.replan.questions),
            summary=self.summary,
            history_path=str(self.store.filepath),
            notifications=list(self.replan.notifications),
        )

    def _report(self, result: PassResult) -> None:
        if self.reporter is None:
            return
        try:
            self.reporter.update(result)
        except Exception:  # reporting must never end the pass
            log.exception("progress reporter failed")


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _user(content: str) -> dict[str, Any]:
    return {"role": "user", "content": content}


def _assistant(content: str | None, calls: list[ToolCall]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {
                    "name": c.name,
                    "arguments": c.raw_arguments or json.dumps(c.arguments),
                },
            }
            for c in calls
        ]
    return message


def _tool_message(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}
