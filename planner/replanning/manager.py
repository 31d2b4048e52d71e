"""ReplanManager: asks the model whether to replan, decides whether it may, and carries it out.

The coordinator calls small hooks at the decision points of replanning.md §3.2:

    review_if_pending()      after the plan exists (goal understanding, task decomposition and
                             action sequence are judged in one call) and after every replan that
                             re-entered a planning phase
    after_action()           at the reflection trigger points (failed action, failed task,
                             every planning.reflection.trigger_interval actions)
    final_evaluation()       when every task has run, before the completion call
    resume()                 at the start of a run: answers, timeouts, interrupted replans

A hook either returns (continue, or "retry" the failed call) or raises PlanChanged (the plan was
revised: pick the next task from the new one) or StopPass (a question for people, or a
replan that cannot run and has no alternative). See docs/replanning.md.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, NoReturn, cast

from pydantic import BaseModel, ValidationError

from planner.config import PlannerConfig
from planner.documents import HumanIntervention, InterventionSummary, PlanningError
from planner.flow import PlanChanged, StopPass
from planner.history import PlanningHistoryStore
from planner.interfaces import ToolCall, ToolResult
from planner.issue import IssueContext, prompt_view
from planner.replanning.controls import ReplanControls, Verdict
from planner.replanning.decision import (
    PLANNING_PHASES,
    DecisionReply,
    Phase,
    ReplanDecision,
    ReviewReply,
)
from planner.replanning.executor import (
    PlanningQuestion,
    ReplanChange,
    ReplanExecutor,
    ReplanFailed,
    Situation,
)
from planner.replanning.facts import (
    ActionFacts,
    action_facts,
    evaluation_facts,
    task_failure_facts,
)
from planner.replanning.levels import LEVELS, QUESTION_LIMIT
from planner.replanning.notices import (
    assumptions_notice,
    clarification_notice,
    escalation_notice,
    revision_notice,
)
from planner.replanning.port import ReplanPort
from planner.replanning.prompt_builder import PlanningInputs, ReplanPromptBuilder
from planner.replanning.state import PendingQuestion, ReplanState
from planner.result import Notification, NotificationKind, format_timestamp
from planner.summaries import history_digest

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]
HookOutcome = Literal["continue", "retry", "changed"]
FENCED = re.compile(r"```[A-Za-z]*\s*\n(.*?)\n\s*```", re.DOTALL)
RAW_CHARS = 2_000


@dataclass
class DecisionContext:
    """Where and why a decision is taken."""

    phase: Phase
    trigger: str
    facts: dict[str, Any] = field(default_factory=dict)
    can_retry: bool = False
    answered: bool = False
    started: float = field(default_factory=time.monotonic)


class ReplanStatistics(BaseModel):
    """§14.2 get_replan_statistics: what replanning did for the current piece of work."""

    decisions: int = 0
    executed: int = 0
    overridden: int = 0
    questions: int = 0
    total_counted: int = 0
    by_phase: dict[str, int] = {}
    by_outcome: dict[str, int] = {}
    counts: dict[str, int] = {}
    remaining: dict[str, int] = {}
    average_confidence: float | None = None


class ReplanManager:
    def __init__(
        self,
        config: PlannerConfig,
        store: PlanningHistoryStore,
        port: ReplanPort,
        issue: IssueContext,
        clock: Clock,
    ) -> None:
        self.settings = config.planning.replanning
        self.store = store
        self.port = port
        self.issue = issue
        self.clock = clock
        self.controls = ReplanControls(self.settings)
        self.prompts = ReplanPromptBuilder(config.planning.max_subtasks)
        self.executor = ReplanExecutor(port, self.prompts)
        self.notifications: list[Notification] = []
        self.questions: list[str] = []
        self._answer = ""
        self._folded_review: Any = None

    @property
    def active(self) -> bool:
        return self.settings.enabled

    @property
    def separate(self) -> bool:
        """Decisions are their own model calls (the seed's design, the default)."""
        return self.active and self.settings.decision_mode == "separate"

    @property
    def folded(self) -> bool:
        return self.active and self.settings.decision_mode == "folded"

    # -- §14.2 API ------------------------------------------------------------------------------

    def request_llm_decision(
        self, kind: str, prompt: str, schema: type[BaseModel] = DecisionReply
    ) -> str:
        """One decision call; the raw reply (parse_decision_response reads it)."""
        return self.port.ask_text(kind, prompt, schema)

    def parse_decision_response(self, text: str) -> ReplanDecision | None:
        """§13.1: JSON, then a fenced code block; None (= no replan) with a warning otherwise."""
        return self._decision_of(_json_of(text), text)

    def parse_review_response(self, text: str, phases: Sequence[str]) -> dict[str, Any]:
        """The combined review: one decision per phase; a missing or bad one is None."""
        value = _json_of(text)
        if not isinstance(value, dict):
            log.warning("replan review unparseable, continuing without a replan: %.200s", text)
            return {}
        return {phase: self._decision_of(value.get(phase), text) for phase in phases}

    def can_replan(self, limit_key: str | None) -> tuple[bool, str]:
        return self.controls.can_replan(limit_key, self._state())

    def should_override(
        self, decision: ReplanDecision, phase: Phase, trigger: str, answered: bool = False
    ) -> Verdict:
        return self.controls.should_override(
            decision, phase, trigger, self._state(), answered=answered
        )

    def execute_replan(
        self, context: DecisionContext, decision: ReplanDecision, verdict: Verdict
    ) -> ReplanChange | None:
        """Carry out an allowed replan; the new plan is recorded as a revision."""
        assert verdict.level is not None
        state = self.port.issue_state()
        assert state.plan is not None
        situation = Situation(
            plan=state.plan,
            completed=[v.id for v in state.tasks() if v.status == "completed"],
            trigger=context.trigger,
            answer=self._take_answer(),
            folded_review=self._folded_instruction(verdict),
        )
        change = self.executor.execute(verdict.level, decision, situation)
        if change is not None:
            self._save_revision(change, state.revision + 1)
        return change

    def record_decision(
        self,
        context: DecisionContext,
        decision: ReplanDecision | None,
        verdict: Verdict,
        **fields: Any,
    ) -> dict[str, Any]:
        """The §10.1 record of one decision (complete once its replan, if any, has run)."""
        record: dict[str, Any] = dict(
            replan_id=_new_id(),
            result="success" if verdict.executes else "skipped",
            phase=context.phase,
            trigger=context.trigger,
            llm_decision=decision.model_dump(mode="json") if decision else None,
            confidence=decision.confidence if decision else None,
            executed=verdict.executes or verdict.action == "ask",
            override_reason=verdict.override_reason,
            outcome=verdict.outcome,
            warning=verdict.warning,
            level=verdict.level.number if verdict.level else None,
            replan_type=decision.replan_type if decision else None,
            limit_key=verdict.limit_key,
            signature=verdict.signature,
            mode=self.settings.decision_mode,
            decided_at=self._now(),
            duration_ms=round((time.monotonic() - context.started) * 1000, 2),
        )
        return self.store.append("replan_decision", **(record | fields))

    def get_replan_statistics(self) -> ReplanStatistics:
        state = self._state()
        decisions = state.decisions
        confidences = [d["confidence"] for d in decisions if d.get("confidence") is not None]
        limits = [key for level in LEVELS.values() if (key := level.limit_key)]
        limits += ["reflection.max_plan_revisions", QUESTION_LIMIT]
        return ReplanStatistics(
            decisions=len(decisions),
            executed=sum(1 for d in decisions if d.get("executed")),
            overridden=sum(1 for d in decisions if d.get("override_reason")),
            questions=state.questions_asked,
            total_counted=state.total,
            by_phase=dict(Counter(str(d.get("phase")) for d in decisions)),
            by_outcome=dict(Counter(str(d.get("outcome")) for d in decisions)),
            counts=dict(state.counts),
            remaining={
                key: max(0, self.controls.limit_of(key) - state.counts[key]) for key in limits
            }
            | {"total": max(0, self.settings.global_.max_total_replans - state.total)},
            average_confidence=sum(confidences) / len(confidences) if confidences else None,
        )

    # -- hooks: planning decision points ---------------------------------------------------------

    def review_if_pending(self, folded_review: Any = None) -> None:
        """Judge the plan at the planning decision points still owed (§4-§6)."""
        if folded_review is not None:
            self._folded_review = folded_review
        while True:
            replan_state = self._state()
            plan = self.port.issue_state().plan
            phases: list[Phase] = [p for p in PLANNING_PHASES if p in replan_state.review_pending]
            if not phases or plan is None or replan_state.pending_question is not None:
                return
            answered = bool(self._answer)
            decisions = self._review_decisions(phases)
            if decisions is None or self._apply_review(phases, decisions, answered) != "changed":
                self.store.append("plan_review", phases=phases, outcome="accepted")
                return

    def _review_decisions(self, phases: list[Phase]) -> dict[str, Any] | None:
        folded, self._folded_review = self._folded_review, None
        if self.folded and folded is not None and not self._answer:
            return self.parse_review_response(json.dumps(folded), list(phases))
        # Separate mode, or folded with nothing to read (the reply omitted its review, the
        # pass resumed after a stop, or a person answered): one review call.
        inputs = PlanningInputs(
            plan=self._plan(),
            issue=prompt_view(self.issue),
            tools=self.port.tool_specs(),
            history=history_digest(self.store.entries()),
        )
        prompt = self.prompts.build_plan_review_prompt(inputs, phases, self._take_answer())
        text = self.request_llm_decision("replan_review", prompt, ReviewReply)
        decisions = self.parse_review_response(text, list(phases))
        if not decisions:
            self._record_unparseable(DecisionContext(phases[0], "review"), text)
            return None
        return decisions

    def _apply_review(
        self, phases: list[Phase], decisions: dict[str, Any], answered: bool
    ) -> HookOutcome:
        """The earliest phase that goes back wins; the later ones are moot."""
        contexts = [DecisionContext(p, "review", answered=answered) for p in phases]
        for index, context in enumerate(contexts):
            decision = decisions.get(context.phase)
            if decision is None:
                self.record_decision(context, None, Verdict("continue", "unparseable"))
                continue
            verdict = self.should_override(decision, context.phase, "review", answered)
            if verdict.action in ("continue", "assume"):
                self._act(context, decision, verdict)
                continue
            for later in contexts[index + 1 :]:
                moot = Verdict(
                    "continue",
                    "superseded",
                    override_reason=f"moot after the {context.phase} decision",
                )
                self.record_decision(later, decisions.get(later.phase), moot)
            return self._act(context, decision, verdict)
        return "continue"

    # -- hooks: execution and final evaluation ----------------------------------------------------

    def after_action(self, task_id: str, call: ToolCall, result: ToolResult) -> HookOutcome:
        """§7: after an evaluated action; "retry" asks the coordinator to run it again."""
        facts = action_facts(self.port.issue_state(), self.store.entries(), task_id, call, result)
        return self._decide_execution(facts, answered=False)

    def after_task_failure(self, task_id: str, summary: str) -> None:
        facts = task_failure_facts(self.port.issue_state(), self.store.entries(), task_id, summary)
        if self._decide_execution(facts, answered=False) == "retry":
            self.store.append("task", task_id=task_id, status="pending", summary="retrying")

    def _decide_execution(self, facts: ActionFacts, answered: bool) -> HookOutcome:
        context = DecisionContext(
            "execution", facts.trigger, facts.to_dict(), facts.can_retry, answered
        )
        prompt = self.prompts.build_execution_prompt(facts, self._take_answer())
        text = self.request_llm_decision("replan_execution", prompt)
        return self._changed_or(self._handle(context, self.parse_decision_response(text), text))

    def final_evaluation(self) -> None:
        """§8: every task has run; revise the plan or let the completion call judge it."""
        state = self.port.issue_state()
        facts = evaluation_facts(state, self.port.snapshot_now())
        context = DecisionContext("reflection", "final evaluation", answered=bool(self._answer))
        prompt = self.prompts.build_reflection_prompt(facts, self._take_answer())
        text = self.request_llm_decision("replan_reflection", prompt)
        self._changed_or(self._handle(context, self.parse_decision_response(text), text))

    # -- hooks: folded mode ------------------------------------------------------------------

    def folded_execution(
        self, task_id: str, arguments: dict[str, Any], last: tuple[ToolCall, ToolResult] | None
    ) -> str:
        """The request_replan tool: the decision came inside the execution reply."""
        state, entries = self.port.issue_state(), self.store.entries()
        if last is not None:
            facts = action_facts(state, entries, task_id, *last)
        else:
            facts = replace(
                task_failure_facts(state, entries, task_id, "the model asked to replan"),
                trigger=f"request_replan during {task_id}",
                executed_action="(no action yet)",
                can_retry=False,
            )
        context = DecisionContext("execution", facts.trigger, facts.to_dict(), facts.can_retry)
        raw = json.dumps(arguments, ensure_ascii=False)
        decision = self._decision_of({"replan_needed": True, **arguments}, raw)
        outcome = self._changed_or(self._handle(context, decision, raw))
        if outcome == "retry":
            return "Retry approved: call the failed tool again with the same arguments."
        return "No replan: continue the task with the current plan, or call finish_task."

    def folded_final(self, value: Any) -> None:
        """The completion reply's replan_decision (folded mode)."""
        if value is None:
            return
        raw = json.dumps(value, ensure_ascii=False)
        context = DecisionContext("reflection", "final evaluation")
        self._changed_or(self._handle(context, self._decision_of(value, raw), raw))

    def folded_planning_instruction(self) -> str:
        return self.prompts.build_folded_review(list(PLANNING_PHASES)) if self.folded else ""

    def folded_completion_instruction(self) -> str:
        if not self.folded:
            return ""
        return self.prompts.build_folded_completion(self._take_answer())

    # -- hooks: questions -------------------------------------------------------------------

    def planning_question(self, error: PlanningError) -> None:
        """The planning reply could not plan at all (§10.1.1): tell people what it asks."""
        self._notify(
            "clarification",
            clarification_notice(
                error.clarification_needed,
                error.message,
                error.assumptions,
                auto_assume_minutes=self._auto_assume_minutes(),
            ),
            _new_id(),
        )

    def resume(self) -> None:
        """Start of a run: finish an interrupted replan, then settle a pending question."""
        try:
            interrupted = self._state().interrupted
            if interrupted is not None:
                self._resume_interrupted(interrupted)
            question = self._state().pending_question
            if question is not None:
                self._settle(question)
        except PlanChanged:
            pass  # the run starts on the new plan anyway

    def _settle(self, question: PendingQuestion) -> None:
        if question.answers:
            return self._on_answer(question)
        if self._timed_out(question):
            return self._assume(question)
        self.questions = list(question.questions)
        raise StopPass(
            "needs_human",
            f"waiting for answers to the questions asked at {question.asked_at}",
            ["Reply on the issue to answer the questions."],
        )

    def _on_answer(self, question: PendingQuestion) -> None:
        answer = "\n\n".join(question.answers)
        self.store.append(
            "clarification_resolved",
            question_id=question.id,
            resolution="answered",
            answer=answer[:4_000],
        )
        if not question.has_plan:
            return  # the planning call that follows sees the answer in its context
        self._answer = answer
        if question.phase == "goal_understanding" and question.kind == "clarification":
            self._recheck_goal(question)
        elif question.phase == "execution" and question.facts:
            self._decide_execution(ActionFacts.from_dict(question.facts), answered=True)

    def _recheck_goal(self, question: PendingQuestion) -> None:
        """An answered goal question re-enters goal understanding (level 5) with the answer."""
        decision = ReplanDecision(
            replan_needed=True,
            confidence=1.0,
            replan_type="goal_revision",
            reasoning="the people on the issue answered the clarification questions",
            issues_found=question.questions,
        )
        verdict = Verdict("execute", "executed", LEVELS[5])
        context = DecisionContext("goal_understanding", "clarification answered")
        self._execute(context, decision, verdict, counted=False)

    def _assume(self, question: PendingQuestion) -> None:
        self.store.append(
            "clarification_resolved",
            question_id=question.id,
            resolution="assumed",
            assumptions=question.assumptions,
            asked_at=question.asked_at,
        )
        asked = format_timestamp(question.asked_at)
        reason = f"Nobody answered the questions asked at {asked}"
        body = assumptions_notice(reason, question.assumptions, self._now())
        self._notify("assumptions", body, question.id)
        if question.has_plan and question.phase in PLANNING_PHASES:
            self.store.append("plan_review", phases=self._state().review_pending, outcome="assumed")

    def _timed_out(self, question: PendingQuestion) -> bool:
        minutes = self._auto_assume_minutes()
        if minutes is None:
            return False
        try:
            asked = datetime.fromisoformat(question.asked_at)
        except ValueError:
            return True
        return self.clock() - asked >= timedelta(minutes=minutes)

    def _auto_assume_minutes(self) -> float | None:
        goal = self.settings.goal_understanding
        return goal.auto_assume_timeout_minutes if goal.auto_assume_on_no_response else None

    def _resume_interrupted(self, started: dict[str, Any]) -> None:
        """§10.2: a replan began in an earlier run and never finished; finish it now."""
        decision = self._decision_of(started.get("llm_decision"), "")
        level = LEVELS.get(int(started.get("level") or 0))
        phase = _phase(started.get("phase"))
        if decision is None or level is None or level.number == 1:
            context = DecisionContext(phase, str(started.get("trigger", "")))
            verdict = Verdict("continue", "failed", override_reason="interrupted; not resumable")
            self.record_decision(context, decision, verdict, replan_id=started["replan_id"])
            return
        verdict = Verdict(
            "execute", "executed", level, started.get("limit_key"), started.get("signature", "")
        )
        context = DecisionContext(phase, str(started.get("trigger", "")))
        self._execute(context, decision, verdict, replan_id=str(started["replan_id"]))

    # -- the decision pipeline ----------------------------------------------------------------

    def _handle(
        self, context: DecisionContext, decision: ReplanDecision | None, raw: str
    ) -> HookOutcome:
        if decision is None:
            self._record_unparseable(context, raw)
            return "continue"
        verdict = self.should_override(decision, context.phase, context.trigger, context.answered)
        return self._act(context, decision, verdict)

    def _act(
        self,
        context: DecisionContext,
        decision: ReplanDecision,
        verdict: Verdict,
        alternative_allowed: bool = True,
    ) -> HookOutcome:
        if verdict.action == "ask":
            self._ask(context, decision, verdict)
        elif verdict.action == "execute":
            return self._execute(context, decision, verdict, alternative_allowed)
        self.record_decision(context, decision, verdict)
        if verdict.outcome == "kept_low_confidence":
            log.warning("replan decision at %s ignored: %s", context.phase, verdict.override_reason)
        if verdict.action == "assume":
            self._notify_assumed(decision, verdict)
        elif verdict.action == "escalate":
            self._notify_decision("replan_override", context, decision, verdict)
            return self._blocked(context, decision, verdict, alternative_allowed)
        return "continue"

    def _execute(
        self,
        context: DecisionContext,
        decision: ReplanDecision,
        verdict: Verdict,
        alternative_allowed: bool = True,
        *,
        replan_id: str | None = None,
        counted: bool = True,
    ) -> HookOutcome:
        assert verdict.level is not None
        if verdict.level.number == 1 and not context.can_retry:
            nothing = replace(
                verdict,
                action="continue",
                outcome="no_replan",
                override_reason="nothing to retry: no failed call is pending",
            )
            self.record_decision(context, decision, nothing)
            return "continue"
        plan_before = self._plan().model_dump(mode="json")
        replan_id = replan_id or self._start(context, decision, verdict, plan_before, counted)
        try:
            change = self.execute_replan(context, decision, verdict)
        except ReplanFailed as failure:
            reason = f"the replacement plan was unusable: {failure}"
            failed = replace(verdict, action="continue", outcome="failed", override_reason=reason)
            self.record_decision(
                context,
                decision,
                failed,
                replan_id=replan_id,
                result="failure",
                executed=True,
                plan_before=plan_before,
            )
            self._notify_decision("replan_override", context, decision, failed, replan_id)
            return self._blocked(context, decision, failed, alternative_allowed)
        except PlanningQuestion as question:
            self.record_decision(
                context,
                decision,
                verdict,
                replan_id=replan_id,
                result="failure",
                plan_before=plan_before,
                override_reason="the goal re-check ended in questions",
            )
            return self._ask_after_recheck(context, question.error)
        plan_after = self._plan().model_dump(mode="json") if change is not None else None
        self.record_decision(
            context,
            decision,
            verdict,
            replan_id=replan_id,
            plan_before=plan_before,
            plan_after=plan_after,
        )
        if change is None:
            return "retry"
        self._folded_review = change.folded_review
        self._notify_decision("plan_revision", context, decision, verdict, replan_id)
        self.port.progress(f"plan revised ({verdict.level.name})")
        return "changed"

    def _start(
        self,
        context: DecisionContext,
        decision: ReplanDecision,
        verdict: Verdict,
        plan_before: dict[str, Any],
        counted: bool,
    ) -> str:
        replan_id = _new_id()
        self.store.append(
            "replan_started",
            replan_id=replan_id,
            phase=context.phase,
            trigger=context.trigger,
            level=verdict.level.number if verdict.level else None,
            limit_key=verdict.limit_key if counted else None,
            signature=verdict.signature if counted else "",
            counted=counted,
            llm_decision=decision.model_dump(mode="json"),
            plan_before=plan_before,
        )
        return replan_id

    def _ask_after_recheck(self, context: DecisionContext, error: PlanningError) -> HookOutcome:
        asked = ReplanDecision(
            replan_needed=True,
            confidence=1.0,
            replan_type="clarification_request",
            reasoning=error.message,
            clarification_questions=error.clarification_needed,
            assumptions_to_make=error.assumptions,
        )
        verdict = self.controls.question_verdict(self._state(), "clarification")
        context = replace(context, phase="goal_understanding")  # its answer re-enters phase 1
        if verdict.action == "ask":
            self._ask(context, asked, verdict)
        self.record_decision(context, asked, verdict)
        self._notify_assumed(asked, verdict)
        return "continue"

    def _ask(
        self, context: DecisionContext, decision: ReplanDecision, verdict: Verdict
    ) -> NoReturn:
        questions, fallback = self._questions(context, decision, verdict)
        replan_id = _new_id()
        self.record_decision(
            context,
            decision,
            verdict,
            replan_id=replan_id,
            counted=True,
            question_kind=verdict.question_kind,
            questions=questions,
            assumptions=decision.assumptions_to_make,
            facts=context.facts,
        )
        body = clarification_notice(
            questions,
            decision.reasoning,
            decision.assumptions_to_make,
            auto_assume_minutes=self._auto_assume_minutes(),
            fallback=fallback,
        )
        self._notify("clarification", body, replan_id)
        self.questions = questions
        raise StopPass(
            "needs_human",
            f"clarification needed at {context.phase}",
            ["The model needs answers from the people on the issue before it continues."],
        )

    def _questions(
        self, context: DecisionContext, decision: ReplanDecision, verdict: Verdict
    ) -> tuple[list[str], str]:
        if verdict.question_kind != "confirmation":
            questions = decision.clarification_questions or [
                decision.reasoning or "Please clarify."
            ]
            return questions, ""
        proposal = f"{decision.replan_type or 'replan'}"
        question = (
            f"I am unsure ({round(decision.confidence * 100)}% confident) whether to revise the "
            f"plan at the {context.phase} phase ({proposal}). Should I?"
        )
        return [question], "I will continue with the current plan"

    def _blocked(
        self,
        context: DecisionContext,
        decision: ReplanDecision,
        verdict: Verdict,
        alternative_allowed: bool,
    ) -> HookOutcome:
        """§9.4 / §13.2 / §13.3: tell the model why, ask for another way, else ask people."""
        reason = verdict.override_reason or "the replan could not run"
        if not alternative_allowed:
            self._escalate(context, reason, [])
        blocked = verdict.level.name if verdict.level else "the same replan"
        prompt = self.prompts.build_alternative_prompt(context.phase, decision, reason, blocked)
        text = self.request_llm_decision("replan_alternative", prompt)
        alternative = self.parse_decision_response(text)
        context = replace(context, trigger=context.trigger, started=time.monotonic())
        if alternative is None:
            self._record_unparseable(context, text)
            self._escalate(context, reason, [])
        assert alternative is not None
        if alternative.asks_people:
            moot = Verdict("continue", "no_replan", override_reason="no alternative: asked people")
            self.record_decision(context, alternative, moot, alternative=True)
            self._escalate(context, reason, alternative.clarification_questions)
        verdict = self.should_override(alternative, context.phase, context.trigger)
        return self._act(context, alternative, verdict, alternative_allowed=False)

    def _escalate(self, context: DecisionContext, reason: str, questions: list[str]) -> NoReturn:
        state = self.port.issue_state()
        done, total = state.progress()
        failed = sum(1 for status in state.task_status.values() if status == "failed")
        document = HumanIntervention(
            summary=InterventionSummary(
                tasks_completed=done,
                tasks_failed=failed,
                revision_attempts=self._state().total,
                reason=f"replanning at {context.phase}: {reason}",
                current_state=f"{done}/{total} tasks complete",
                recommendations=[*questions, "Reply on the issue with guidance to continue."],
            ),
            comment="Replanning is stuck and found no alternative, so a person needs to step in.",
        )
        self.store.append("human_intervention", document=document.model_dump(), phase=context.phase)
        self._notify("escalation", escalation_notice(context.phase, reason, questions, self._now()))
        self.questions = questions
        raise StopPass("needs_human", document.summary.reason, [document.comment])

    # -- recording and notifications ------------------------------------------------------------

    def _record_unparseable(self, context: DecisionContext, raw: str) -> None:
        log.warning("replan decision at %s unparseable; continuing without a replan", context.phase)
        verdict = Verdict(
            "continue",
            "unparseable",
            override_reason="the decision could not be parsed; no replan",
        )
        self.record_decision(context, None, verdict, raw=raw[:RAW_CHARS], result="skipped")

    def _save_revision(self, change: ReplanChange, number: int) -> None:
        self.store.append(
            "revision",
            revision=number,
            reason=change.reason,
            changes=[c.model_dump() if isinstance(c, BaseModel) else c for c in change.changes],
            updated_plan=change.plan.model_dump(mode="json"),
            carry_progress=change.level.carry_progress,
            review_phases=change.level.review_phases,
            level=change.level.number,
            source="replanning",
        )

    def _notify_decision(
        self,
        kind: NotificationKind,
        context: DecisionContext,
        decision: ReplanDecision,
        verdict: Verdict,
        key: str | None = None,
    ) -> None:
        body = revision_notice(context.phase, decision, verdict, self._now())
        self._notify(kind, body, key)

    def _notify_assumed(self, decision: ReplanDecision, verdict: Verdict) -> None:
        reason = f"I would ask the people on the issue, but {verdict.override_reason}"
        body = assumptions_notice(reason, decision.assumptions_to_make, self._now())
        self._notify("assumptions", body)

    def _notify(self, kind: NotificationKind, body: str, key: str | None = None) -> None:
        notification = Notification(
            id=f"{key or _new_id()}-{kind}", kind=kind, body=body, timestamp=self._now()
        )
        self.store.append("notification", id=notification.id, kind=kind, body=body)
        self.notifications.append(notification)

    # -- small helpers ----------------------------------------------------------------------------

    def _state(self) -> ReplanState:
        return ReplanState.from_entries(self.store.entries())

    def _plan(self) -> Any:
        plan = self.port.issue_state().plan
        assert plan is not None
        return plan

    def _take_answer(self) -> str:
        answer, self._answer = self._answer, ""
        return answer

    def _changed_or(self, outcome: HookOutcome) -> HookOutcome:
        if outcome == "changed":
            raise PlanChanged
        return outcome

    def _folded_instruction(self, verdict: Verdict) -> str:
        phases = verdict.level.review_phases if verdict.level else []
        return self.prompts.build_folded_review(phases) if self.folded and phases else ""

    def _decision_of(self, value: Any, raw: str) -> ReplanDecision | None:
        if isinstance(value, dict) and isinstance(value.get("replan_decision"), dict):
            value = value["replan_decision"]
        if not isinstance(value, dict):
            return None
        try:
            return ReplanDecision.model_validate(value)
        except ValidationError as exc:
            log.warning("replan decision unusable (%s): %.200s", exc.error_count(), raw)
            return None

    def _now(self) -> str:
        moment = self.clock().astimezone(UTC)
        return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def _json_of(text: str) -> Any:
    """§13.1 steps 1 and 2: the whole reply as JSON, else the first fenced block that parses."""
    for candidate in [text.strip(), *FENCED.findall(text)]:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    log.warning("replan decision is not JSON; continuing without a replan: %.200s", text)
    return None


def _phase(value: Any) -> Phase:
    known = (*PLANNING_PHASES, "execution", "reflection")
    return cast(Phase, value) if value in known else "execution"


def _new_id() -> str:
    return uuid.uuid4().hex[:12]
