"""The phase interface: how a phase plugs into the pass loop (planner.engine.coordinator).

The loop runs three fixed steps — plan (engine/steps/plan.py), execute each task
(engine/steps/execute.py), complete (engine/steps/complete.py) — and around them calls the
hooks of every registered phase, in registration order (planner/run/phases.py). A phase is
a subclass of `Phase` that overrides only the hooks it needs; the others do nothing.

    pass start ─ start()
    plan ─────── before_planning() → [planning call + addendum("planning")] → on_clarification()
                 → after_plan(reply, "planned")
    plan changed/resumed ─ after_plan(None, "revised" | "resumed")
    each task ── [task prompt + addendum("execute"), tools()] → per tool call:
                 before_action() → [the tool runs, is counted and recorded] → after_action()
                 → after_task()
    no task left ─ before_completion() → [completion call + addendum("completion")]
                 → on_completion_reply() → [completion recorded, pass ends]

Every hook gets `run`, the PassContext (config, issue, store, state(), model calls within the
budget, act(), snapshot(), progress()). A hook changes the course of the pass only by raising:

    StopPass(status, reason, messages, questions)  end the pass now, e.g. "needs_human" while
                                                   people answer; record what you asked first
    PlanChanged()                                  you saved a revised plan (store.save_revision):
                                                   the loop picks the next task from it
    PlanChanged(feedback="...")                    plan again from scratch; the planning request
                                                   carries the feedback (a judge's verdict)

Record what your phase decided in the history (run.store.append(kind, ...)) before raising, so
a crash or the next trigger finds it, and bound your own repeats (count your entries in
run.store.entries()): the loop re-plans as often as it is asked to, within the pass budget.

To add a phase: write `planner/<package>/phase.py` with a `Phase` subclass and add one line to
planner/run/phases.py (or pass it in PassSetup.phases). The engine never imports a phase
package; the registration list above it does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from planner.engine.documents import CompletionReply, PlanningError, PlanningReply
from planner.engine.interfaces import ToolCall, ToolResult, ToolSpec
from planner.engine.result import Notification

if TYPE_CHECKING:
    from planner.engine.context import PassContext

Request = Literal["planning", "execute", "completion"]
PlanEvent = Literal["planned", "revised", "resumed"]


@dataclass(frozen=True)
class ReviewSection:
    """A question a phase adds to the combined plan review (one call reads the plan once,
    instead of one call per phase that judges the same plan)."""

    name: str
    """The key of its answer in the review's reply."""
    text: str
    """The section of the review prompt: what to judge, and the answer's shape."""


class Phase:
    """One step's worth of behaviour hooked into the pass. Override what you need."""

    name = "phase"

    def start(self, run: PassContext) -> None:
        """The pass starts on an issue that has work to do: resume what an earlier pass left
        (interrupted work, answers that arrived). May raise StopPass to keep waiting."""

    def before_planning(self, run: PassContext, instruction: str) -> str:
        """A plan is about to be made. Return the instruction to plan with (the person's
        `/planner` text, or an enhanced one), or raise StopPass to wait for people first."""
        return instruction

    def addendum(self, run: PassContext, request: Request) -> str:
        """Extra text appended (after a newline) to the planning, task or completion request."""
        return ""

    def tools(self, run: PassContext) -> list[ToolSpec]:
        """Extra tools offered while a task runs; answer their calls in before_action()."""
        return []

    def on_clarification(
        self, run: PassContext, error: PlanningError, assumptions: list[str] | None
    ) -> None:
        """The planning reply asked questions instead of planning. `assumptions` is None when
        the pass stops to ask them; a list when the question budget is spent and planning
        continues on these assumptions."""

    def review_section(self, run: PassContext) -> ReviewSection | None:
        """A question about the current plan this phase wants answered inside the plan review
        (replanning's combined review call), or None."""
        return None

    def reviewed(self, run: PassContext, answers: dict[str, Any]) -> None:
        """The plan review's reply (every section's answer by name) after a review call that
        carried the sections review_section() offered."""

    def no_more_questions(self, run: PassContext) -> str:
        """Why people may not be asked now, under this phase's limits ("" = they may): a
        planning reply that asks is then told to plan on its assumptions."""
        return ""

    def after_plan(self, run: PassContext, reply: PlanningReply | None, event: PlanEvent) -> None:
        """The plan was just made ("planned", with the reply), revised by someone ("revised"),
        or taken over from the history ("resumed"). Read it with run.state().plan. May raise
        PlanChanged (revised, or feedback to plan again) or StopPass (e.g. rejected)."""

    def before_action(self, run: PassContext, task_id: str, call: ToolCall) -> ToolResult | None:
        """A tool call is about to run. Return None to let it run; return a result to answer
        the model instead (the tool does not run, is not counted, after_action is skipped);
        or raise StopPass to end the pass (e.g. waiting for an approval you recorded)."""
        return None

    def after_action(
        self, run: PassContext, task_id: str, call: ToolCall, result: ToolResult
    ) -> ToolResult:
        """The tool ran (counted, recorded). Return the result the model sees; run.act(task_id,
        call) runs it again (a retry). May raise PlanChanged or StopPass."""
        return result

    def after_task(self, run: PassContext, task_id: str, status: str, summary: str) -> None:
        """A task finished ("completed" or "failed") and was recorded: reflect, or checkpoint
        the work (e.g. a commit). May raise PlanChanged or StopPass."""

    def before_completion(self, run: PassContext) -> None:
        """No task is left. Raise PlanChanged after saving a revision that adds tasks, or
        StopPass; return to let the completion call judge the outcome."""

    def on_completion_reply(self, run: PassContext, reply: CompletionReply) -> None:
        """The completion reply arrived; nothing is recorded yet. May raise PlanChanged."""

    def questions(self) -> list[str]:
        """Questions this phase asked people in this pass (shown in the pass result)."""
        return []

    def notifications(self) -> list[Notification]:
        """Comments this phase wants the forge to post (PassResult.notifications)."""
        return []

    def proceed_after(self, run: PassContext) -> datetime | None:
        """The pass waits for people on this phase's behalf, and its next run goes on without
        them from this moment (PassResult.proceed_after). None: nothing is due by itself."""
        return None


class Phases:
    """The registered phases; each call runs that hook on every phase in order."""

    def __init__(self, phases: Sequence[Phase] = ()) -> None:
        self.all = list(phases)

    def start(self, run: PassContext) -> None:
        for phase in self.all:
            phase.start(run)

    def before_planning(self, run: PassContext, instruction: str) -> str:
        for phase in self.all:
            instruction = phase.before_planning(run, instruction)
        return instruction

    def addendum(self, run: PassContext, request: Request) -> str:
        texts = (phase.addendum(run, request) for phase in self.all)
        return "".join("\n" + text for text in texts if text)

    def tools(self, run: PassContext) -> list[ToolSpec]:
        return [spec for phase in self.all for spec in phase.tools(run)]

    def on_clarification(
        self, run: PassContext, error: PlanningError, assumptions: list[str] | None
    ) -> None:
        for phase in self.all:
            phase.on_clarification(run, error, assumptions)

    def review_sections(self, run: PassContext) -> list[ReviewSection]:
        sections = (phase.review_section(run) for phase in self.all)
        return [section for section in sections if section is not None]

    def reviewed(self, run: PassContext, answers: dict[str, Any]) -> None:
        for phase in self.all:
            phase.reviewed(run, answers)

    def no_more_questions(self, run: PassContext) -> str:
        return next((why for phase in self.all if (why := phase.no_more_questions(run))), "")

    def after_plan(self, run: PassContext, reply: PlanningReply | None, event: PlanEvent) -> None:
        for phase in self.all:
            phase.after_plan(run, reply, event)

    def before_action(self, run: PassContext, task_id: str, call: ToolCall) -> ToolResult | None:
        for phase in self.all:
            answer = phase.before_action(run, task_id, call)
            if answer is not None:
                return answer
        return None

    def after_action(
        self, run: PassContext, task_id: str, call: ToolCall, result: ToolResult
    ) -> ToolResult:
        for phase in self.all:
            result = phase.after_action(run, task_id, call, result)
        return result

    def after_task(self, run: PassContext, task_id: str, status: str, summary: str) -> None:
        for phase in self.all:
            phase.after_task(run, task_id, status, summary)

    def before_completion(self, run: PassContext) -> None:
        for phase in self.all:
            phase.before_completion(run)

    def on_completion_reply(self, run: PassContext, reply: CompletionReply) -> None:
        for phase in self.all:
            phase.on_completion_reply(run, reply)

    def questions(self) -> list[str]:
        return [question for phase in self.all for question in phase.questions()]

    def notifications(self) -> list[Notification]:
        return [note for phase in self.all for note in phase.notifications()]

    def proceed_after(self, run: PassContext) -> datetime | None:
        """The earliest moment any phase goes on without an answer."""
        moments = [m for phase in self.all if (m := phase.proceed_after(run)) is not None]
        return min(moments, default=None)
