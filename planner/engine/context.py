"""PassContext: what every step and phase of one pass shares.

The config, the issue, the tools, the history store and the registered phases; model calls
that respect the pass budget and land in the history; the recorded tool run (act); the pass
snapshot and the reporter. It is also the port replanning talks to
(planner.replanning.port.ReplanPort).

The phase interface (Phase, Phases) is defined here too: every hook takes a PassContext and a
PassContext holds the registered phases, so split over two modules each would import the other.
planner.engine.phase documents the interface, and phase packages import it from there.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any, Literal

from planner.config import PlannerConfig
from planner.core.interfaces import (
    DocT,
    FileContext,
    PointedDefinition,
    ProgressReporter,
    ShownFiles,
    ToolCall,
    ToolResult,
    Tools,
    ToolSpec,
)
from planner.memory.history import PlanningHistoryStore
from planner.memory.plan_view import plan_result
from planner.memory.state import IssueState
from planner.memory.summaries import history_digest
from planner.model.conversation import FINISH_TASK, iso, user
from planner.model.usage import CallRecord
from planner.outcome.deadline import stop_if_expired
from planner.outcome.evidence import verification_note
from planner.outcome.flow import StopPass
from planner.outcome.result import (
    Notification,
    PassResult,
    PassStatus,
    Usage,
    render_checklist,
)
from planner.plan.clarifications import issue_reference
from planner.plan.documents import (
    CompletionReply,
    ExecutionRecord,
    FunctionCall,
    Plan,
    PlanningError,
    PlanningReply,
    PlanRules,
)
from planner.plan.repair import repair_plan
from planner.text.budget import ISSUE_TOKENS, within_tokens
from planner.text.issue import IssueContext, prompt_view
from planner.text.prompts import render

log = logging.getLogger(__name__)

RESULT_EXCERPT = 2_000
ARGUMENT_EXCERPT = 2_000
"""The history keeps this much of each string a tool call carried (a file's content)."""
"""Characters of a tool result kept in its history entry."""


class PassContext:
    def __init__(
        self,
        config: PlannerConfig,
        model: Any,
        tools: Tools,
        issue: IssueContext,
        store: PlanningHistoryStore,
        reporter: ProgressReporter | None = None,
        clock: Callable[[], datetime] | None = None,
        phases: Phases | None = None,
        files: FileContext | None = None,
    ) -> None:
        self.config = config
        self.files = files
        """What the repository holds that a request is about (None: no workspace to show)."""
        self.model = model
        self.tools = tools
        self.issue = issue
        self.store = store
        self.reporter = reporter
        self.clock = clock or (lambda: datetime.now(UTC))
        self.phases = phases or Phases()
        self.usage = Usage()
        self.action_counter = 0
        self.questions: list[str] = []
        self.summary: Any = None
        self.last_action: tuple[ToolCall, ToolResult] | None = None
        """The last tool call of the current task and its result (what a replan would retry)."""
        self.planning_context: dict[str, str] = {}
        """Extra variables of the planning request that phases set in before_planning
        (planner.grounding: `repository`, the map, and `findings`, the exploration's)."""
        self.attempt = 1
        """The attempt at the issue the pass is in (verification.attempts)."""
        self._started = time.monotonic()
        model.on_call = self._record_call

    def state(self) -> IssueState:
        return IssueState.from_entries(self.store.entries())

    # -- model calls ----------------------------------------------------------------------------

    def system(self, phase: str) -> dict[str, Any]:
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

    def structured(
        self, kind: str, messages: list[dict[str, Any]], schema: Any, current_plan: Any = None
    ) -> Any:
        self._check_budget()
        return self.model.structured(kind, messages, schema, self.plan_rules(current_plan))

    def chat(
        self,
        kind: str,
        messages: list[dict[str, Any]],
        tools: list[ToolSpec],
        tools_on_wire: bool = True,
        retry: bool = False,
    ) -> Any:
        self._check_budget()
        return self.model.chat(kind, messages, tools, tools_on_wire=tools_on_wire, retry=retry)

    def ask_document(
        self,
        kind: str,
        prompt: str,
        schema: type[DocT],
        context: Any = None,
        system: str = "replanning",
    ) -> DocT:
        self._check_budget()
        messages = [self.system(system), user(prompt)]
        document: DocT = self.model.structured(kind, messages, schema, context)
        return document

    def ask_text(self, kind: str, prompt: str, schema: type[Any]) -> str:
        self._check_budget()
        messages = [self.system("replanning"), user(prompt)]
        return str(self.model.structured_text(kind, messages, schema))

    def new_attempt(self, number: int) -> None:
        """Attempt `number` at the issue starts afresh (verification.attempts): the model
        samples another way from now on, where it can (planner.model.llm.OpenAIModel.vary)."""
        self.attempt = number
        self._vary(number)

    @contextmanager
    def sampled(self, seed: int) -> Iterator[None]:
        """Calls inside sample with `seed` (1: as the first attempt does; more: warmer, like a
        later attempt), then the attempt's own sampling again."""
        self._vary(seed)
        try:
            yield
        finally:
            self._vary(self.attempt)

    def _vary(self, number: int) -> None:
        vary = getattr(self.model, "vary", None)
        if callable(vary):
            vary(number)

    def plan_rules(self, current_plan: Plan | None) -> PlanRules:
        offered = [*self.tools.catalogue(), *self.phases.tools(self)]  # run_tests, say
        return PlanRules(
            max_subtasks=self.config.planning.max_subtasks,
            tool_names=self.tools.names() | {FINISH_TASK.name} | {spec.name for spec in offered},
            current_plan=current_plan,
            tool_descriptions={spec.name: spec.description for spec in offered},
            question_reference="\n".join(
                [issue_reference(self.issue), *self.planning_context.values()]
            ),
            issue_text=issue_reference(self.issue),
            repair=partial(repair_plan, whole_file=self.config.llm.edit_format == "whole_file"),
        )

    def planning_variables(self) -> dict[str, Any]:
        return {
            "issue": planning_view(self.issue),
            "tools": self.tools.catalogue(),
            "history": history_digest(self.store.entries()),
            "max_subtasks": self.config.planning.max_subtasks,
            **self.planning_context,
        }

    def shown_files(self, texts: list[str]) -> ShownFiles:
        """The files `texts` are about, for a task or legacy request (planning.task_context)."""
        return self.files.files_for(texts) if self.files is not None else ShownFiles()

    def pointed(
        self, texts: list[str], ran: Collection[tuple[str, int]] = ()
    ) -> list[PointedDefinition]:
        """The definitions `texts` point to, best first (none without a workspace); given
        the functions a test ran, those (FileContext.pointed)."""
        return self.files.pointed(texts, ran) if self.files is not None else []

    def existing_path(self, path: str) -> str | None:
        return self.files.existing(path) if self.files is not None else None

    def writes_whole(self, files: ShownFiles) -> bool:
        """The model is asked to write the files shown whole as code blocks (llm.edit_format)."""
        return self.config.llm.edit_format == "whole_file" and bool(files.whole or files.windows)

    def current_text(self, path: str) -> str | None:
        return self.files.current(path) if self.files is not None else None

    def closest_paths(self, path: str) -> list[str]:
        return self.files.closest(path) if self.files is not None else []

    def tool_specs(self) -> list[ToolSpec]:
        return self.tools.specs()

    # -- actions --------------------------------------------------------------------------------

    def act(self, task_id: str, call: ToolCall) -> ToolResult:
        """Run one tool call within the action budget; it is counted and recorded."""
        limit = self.config.budget.max_actions
        if self.action_counter >= limit:
            raise StopPass("in_progress", f"budget: {limit} actions per pass reached")
        if call.raw_arguments:
            result = ToolResult(
                ok=False, error="the tool arguments were not a JSON object", refused=True
            )
        else:
            result = self.tools.call(call.name, call.arguments)
        self.record_action(task_id, call, result)
        return result

    def record_action(self, task_id: str, call: ToolCall, result: ToolResult) -> None:
        """Count and record an action that ran elsewhere (e.g. an approved spec at pass start)."""
        self.action_counter += 1
        record = ExecutionRecord(
            current_task=task_id,
            function_call=FunctionCall(name=call.name, arguments=kept_arguments(call.arguments)),
        )
        self.store.append(
            "action",
            index=self.action_counter,
            task_id=task_id,
            execution=record.model_dump(),
            ok=result.ok,
            error=excerpt(result.error),
            result=result.content[:RESULT_EXCERPT],
        )

    # -- budget and usage -----------------------------------------------------------------------

    def _check_budget(self) -> None:
        stop_if_expired()  # the run's deadline (budget minus the finish, or a signal)
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

    # -- what people see ------------------------------------------------------------------------

    def snapshot(
        self, status: PassStatus, reason: str, messages: list[str] | None = None
    ) -> PassResult:
        shown = plan_result(self.state(), self.phases.unmade_changes(self), status, reason)
        return shown.model_copy(
            update={
                "usage": self.usage.model_copy(),
                "actions": self.action_counter,
                "messages": list(messages or []),
                "questions": list(self.questions or self.phases.questions()),
                "summary": self.summary,
                "history_path": str(self.store.filepath),
                "notifications": self.phases.notifications(),
                "proceed_after": self._proceed_after(status),
                "verification": verification_note(self.store.entries()),
            }
        )

    def _proceed_after(self, status: PassStatus) -> str:
        """Only a pass that ends waiting for people can go on by itself later."""
        moment = self.phases.proceed_after(self) if status == "needs_human" else None
        return iso(moment) if moment is not None else ""

    def checklist(self, max_chars: int | None = 6_000) -> str:
        """The tracking checklist as it stands, cut to max_chars (None: whole)."""
        return render_checklist(self.snapshot("in_progress", ""), max_chars=max_chars)

    def report(self, result: PassResult) -> None:
        if self.reporter is None:
            return
        try:
            self.reporter.update(result)
        except Exception:  # reporting must never end the pass
            log.exception("progress reporter failed")

    def progress(self, reason: str) -> None:
        """Tell the reporter (the tracking comment) how the pass stands."""
        self.report(self.snapshot("in_progress", reason))

    # -- the rest of the replanning port --------------------------------------------------------

    def issue_state(self) -> IssueState:
        return self.state()

    def snapshot_now(self) -> PassResult:
        return self.snapshot("in_progress", "")


def kept_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """Tool arguments as the history keeps them. A long string (a file's content, a payload
    that was refused) becomes an excerpt that says how much was left out: the file is in the
    workspace, and the history must not grow by the size of everything a model sends."""
    return {key: excerpt(value) for key, value in arguments.items()}


def excerpt(value: Any) -> Any:
    if isinstance(value, str) and len(value) > ARGUMENT_EXCERPT:
        rest = len(value) - ARGUMENT_EXCERPT
        return f"{value[:ARGUMENT_EXCERPT]}… [{rest:,} more characters not kept in the history]"
    if isinstance(value, dict):
        return kept_arguments(value)
    if isinstance(value, list):
        return [excerpt(item) for item in value]
    return value


# -- the phase interface (documented in planner.engine.phase) ------------------------------------

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

    def on_stop(self, run: PassContext, status: PassStatus) -> None:
        """The pass ends with `status` (a budget, a question, completion, a model error): the
        last moment to put the working tree in order before it is summed up and committed.
        Must not raise."""

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

    def unmade_changes(self, run: PassContext) -> set[str]:
        """Tasks with a change this phase holds back (staged, or waiting for a person): not
        done, whatever their status, until the change is made (TaskView.waiting)."""
        return set()


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

    def on_stop(self, run: PassContext, status: PassStatus) -> None:
        for phase in self.all:
            try:
                phase.on_stop(run, status)
            except Exception:  # the pass is over: what it recorded must reach people
                log.exception("phase %s failed as the pass ended", phase.name)

    def questions(self) -> list[str]:
        return [question for phase in self.all for question in phase.questions()]

    def notifications(self) -> list[Notification]:
        return [note for phase in self.all for note in phase.notifications()]

    def proceed_after(self, run: PassContext) -> datetime | None:
        """The earliest moment any phase goes on without an answer."""
        moments = [m for phase in self.all if (m := phase.proceed_after(run)) is not None]
        return min(moments, default=None)

    def unmade_changes(self, run: PassContext) -> set[str]:
        return {task for phase in self.all for task in phase.unmade_changes(run)}


def planning_view(issue: IssueContext) -> dict[str, Any]:
    """The issue as the planning request shows it: its body within ISSUE_TOKENS."""
    view = prompt_view(issue)
    where = "the plan is made from this part; the full text is on the issue"
    return {**view, "body": within_tokens(str(view["body"]), ISSUE_TOKENS, "issue text", where)}
