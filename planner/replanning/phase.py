"""The replanning phase: the ReplanManager's decision points as hooks of the pass loop.

start               resume an interrupted replan, settle a pending question
after_plan          judge the plan (goal, decomposition, actions) where a review is owed
after_action        separate mode: decide at the reflection trigger points; retry runs the
                    call again
after_task          separate mode: decide after a failed task
before_completion   separate mode: the §8 final evaluation
folded mode         the decision rides in the phases' own replies: addendum() adds the
                    instructions, tools() offers request_replan, before_action() answers it,
                    on_completion_reply() reads the final decision
"""

from __future__ import annotations

from datetime import datetime

from planner.core.interfaces import ToolCall, ToolResult, ToolSpec
from planner.engine.context import PassContext
from planner.engine.phase import Phase, PlanEvent, Request
from planner.engine.reflection import failed_action, reflection_wanted, task_reflection_wanted
from planner.outcome.result import Notification
from planner.plan.documents import CompletionReply, PlanningError, PlanningReply
from planner.replanning.manager import ReplanManager
from planner.replanning.tools import REQUEST_REPLAN


class ReplanningPhase(Phase):
    name = "replanning"

    def __init__(self) -> None:
        self._manager: ReplanManager | None = None

    @property
    def manager(self) -> ReplanManager:
        assert self._manager is not None, "start() creates the manager"
        return self._manager

    def start(self, run: PassContext) -> None:
        self._manager = ReplanManager(run.config, run.store, run, run.issue, run.clock)
        self.manager.review_sections = lambda: run.phases.review_sections(run)
        self.manager.reviewed = lambda answers: run.phases.reviewed(run, answers)
        self.manager.resume()
        if self.manager.answer_pending():  # the instruction answers a question: it feeds the
            run.issue = run.issue.model_copy(update={"instruction": ""})  # decision point

    # -- planning ----------------------------------------------------------------------------------

    def addendum(self, run: PassContext, request: Request) -> str:
        if request == "planning":
            return self.manager.folded_planning_instruction()
        if request == "completion":
            return self.manager.folded_completion_instruction()
        return self.manager.prompts.build_folded_execution() if self.manager.folded else ""

    def on_clarification(
        self, run: PassContext, error: PlanningError, assumptions: list[str] | None
    ) -> None:
        if assumptions is None:
            self.manager.planning_question(error)
        else:
            self.manager.planning_assumed(assumptions)

    def no_more_questions(self, run: PassContext) -> str:
        return self.manager.no_more_questions()

    def after_plan(self, run: PassContext, reply: PlanningReply | None, event: PlanEvent) -> None:
        self.manager.issue = run.issue
        self.manager.review_if_pending(reply.replan_review if reply is not None else None)

    # -- execution -----------------------------------------------------------------------------

    def tools(self, run: PassContext) -> list[ToolSpec]:
        return [REQUEST_REPLAN] if self.manager.folded else []

    def before_action(self, run: PassContext, task_id: str, call: ToolCall) -> ToolResult | None:
        if call.name != REQUEST_REPLAN.name or not self.manager.folded:
            return None
        answer = self.manager.folded_execution(task_id, call.arguments, run.last_action)
        return ToolResult(ok=True, content=answer)

    def after_action(
        self, run: PassContext, task_id: str, call: ToolCall, result: ToolResult
    ) -> ToolResult:
        if not self.manager.separate:
            return result  # folded: the model asks with request_replan when it wants to
        while reflection_wanted(
            run.config, failed=failed_action(result), actions=run.action_counter
        ):
            if self.manager.after_action(task_id, call, result) != "retry":
                return result
            result = run.act(task_id, call)
        return result

    def after_task(self, run: PassContext, task_id: str, status: str, summary: str) -> None:
        if status == "failed" and task_reflection_wanted(run.config) and self.manager.separate:
            self.manager.after_task_failure(task_id, summary)

    # -- completion ----------------------------------------------------------------------------

    def before_completion(self, run: PassContext) -> None:
        if self.manager.separate:
            self.manager.final_evaluation()

    def on_completion_reply(self, run: PassContext, reply: CompletionReply) -> None:
        if self.manager.folded:
            self.manager.folded_final(reply.replan_decision)

    # -- what people see -----------------------------------------------------------------------

    def questions(self) -> list[str]:
        return list(self._manager.questions) if self._manager else []

    def notifications(self) -> list[Notification]:
        return list(self._manager.notifications) if self._manager else []

    def proceed_after(self, run: PassContext) -> datetime | None:
        return self._manager.proceed_after() if self._manager else None
