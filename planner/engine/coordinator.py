"""PlanningCoordinator: one pass of the planning process (seed: planning-process.md §7.4.1).

    plan (or resume) -> execute tasks in execution_order -> complete

The steps live in planner/engine/steps/; everything else — reflection, replanning, and the
gates and judges later issues add — is a phase (planner/engine/phase.py) whose hooks this loop
calls at fixed points. Phases are registered above the engine (planner/run/phases.py) and
passed in. Control flow uses two small exceptions: StopPass ends the pass with a status,
PlanChanged abandons the current task after the plan changed (or asks for a new plan). Every
decision is appended to the history the moment it is made, so a crash loses nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Literal

from planner.config import PlannerConfig
from planner.core.errors import ApiError, ModelBehaviourError
from planner.core.interfaces import FileContext, ProgressReporter, Tools
from planner.engine.context import PassContext
from planner.engine.phase import Phase, Phases
from planner.engine.steps.complete import complete
from planner.engine.steps.execute import run_task
from planner.engine.steps.legacy import run_legacy
from planner.engine.steps.plan import make_plan
from planner.memory.history import PlanningHistoryStore
from planner.memory.state import IssueState
from planner.outcome.flow import PlanChanged, StopPass
from planner.outcome.result import PassResult, PassStatus
from planner.text.issue import IssueContext
from planner.text.plain import plain_reason

Pending = Literal["", "plan", "revised", "resumed"]
"""What the phases have not seen yet: nothing, a plan to make, a revised or resumed plan."""


class PlanningCoordinator:
    def __init__(
        self,
        config: PlannerConfig,
        model: Any,
        tools: Tools,
        issue: IssueContext,
        store: PlanningHistoryStore,
        reporter: ProgressReporter | None = None,
        clock: Callable[[], datetime] | None = None,
        phases: Sequence[Phase] = (),
        files: FileContext | None = None,
    ) -> None:
        self.run = PassContext(
            config, model, tools, issue, store, reporter, clock, Phases(phases), files
        )

    def execute_with_planning(self) -> PassResult:
        run = self.run
        run.store.append(
            "run_start", instruction=run.issue.instruction, planning=run.config.planning.enabled
        )
        if run.issue.instruction:
            run.store.append("human_input", text=run.issue.instruction)
        status: PassStatus = "failed"
        reason, messages = "the pass ended unexpectedly", []
        try:
            self._pass()
        except StopPass as stop:
            status, reason, messages = stop.status, stop.reason, stop.messages
            run.questions = stop.questions or run.questions
            run.phases.on_stop(run, status)
        except (ApiError, ModelBehaviourError) as exc:
            reason = plain_reason(str(exc))
            messages = [f"planner stopped: {reason}"]
            run.store.append("error", level=4, error=type(exc).__name__, message=str(exc))
            run.phases.on_stop(run, status)
        finally:
            reason = plain_reason(reason)  # a model's words in it never as raw JSON
            result = run.snapshot(status, reason, messages)
            run.store.append(
                "run_end",
                status=status,
                stop_reason=reason,
                usage=result.usage.model_dump(),
                actions=run.action_counter,
            )
        run.report(result)
        return result

    def _pass(self) -> None:
        run = self.run
        if not run.config.planning.enabled:
            run_legacy(run)
        if run.state().completed and not run.issue.instruction:
            raise StopPass("completed", "the plan was already completed")
        run.phases.start(run)
        state = run.state()
        plan_first = state.plan is None or state.completed or _new_work_requested(run, state)
        self._loop("plan" if plan_first else "resumed")

    def _loop(self, pending: Pending) -> None:
        """Run tasks until the pass stops; `pending` is what happened to the plan since the
        phases last saw it ("plan" = make one, with `feedback` when a phase asked for it)."""
        run, feedback = self.run, ""
        while True:
            try:
                self._settle_plan(pending, feedback)
                pending, feedback = "", ""
                task_id = run.state().next_task()
                if task_id is None:
                    run.phases.before_completion(run)
                    complete(run)
                run_task(run, task_id)
            except PlanChanged as change:
                pending, feedback = (
                    ("plan", change.feedback) if change.feedback else ("revised", "")
                )

    def _settle_plan(self, pending: Pending, feedback: str) -> None:
        run = self.run
        if pending == "plan":
            instruction = run.phases.before_planning(run, run.issue.instruction)
            run.issue = run.issue.model_copy(update={"instruction": instruction})
            reply = make_plan(run, feedback)
            run.phases.after_plan(run, reply, "planned")
        elif pending:
            run.phases.after_plan(run, None, pending)


def _new_work_requested(run: PassContext, state: IssueState) -> bool:
    """A person's instruction arrived but the plan has nothing left to run: plan again,
    with the whole history in context, instead of judging the old plan once more."""
    return bool(run.issue.instruction.strip()) and state.next_task() is None
