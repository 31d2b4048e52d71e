"""The decision pipeline: parse a decision, apply the controls, carry out or escalate.

    decision -> should_override -> continue | ask people | assume | execute | escalate
    execute  -> replan_started, the executor writes the new plan, revision, replan_decision
    escalate -> one alternative call (§9.4/§13.2/§13.3) -> its verdict, once -> else a person

ReplanManager (manager.py) adds the decision points the replanning phase calls.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Literal, NoReturn, cast

from pydantic import BaseModel, ValidationError

from planner.config import PlannerConfig
from planner.engine.phase import ReviewSection
from planner.memory.history import PlanningHistoryStore
from planner.outcome.flow import PlanChanged, StopPass
from planner.outcome.result import Notification
from planner.plan.documents import HumanIntervention, InterventionSummary, Plan, PlanningError
from planner.replanning.execution.executor import (
    PlanningQuestion,
    ReplanChange,
    ReplanExecutor,
    ReplanFailed,
    Situation,
)
from planner.replanning.execution.notices import clarification_notice, escalation_notice
from planner.replanning.execution.questions import refused_question
from planner.replanning.execution.recorder import Clock, DecisionContext, ReplanRecorder, new_id
from planner.replanning.limits.controls import ReplanControls, Verdict
from planner.replanning.limits.state import ReplanState
from planner.replanning.limits.statistics import ReplanStatistics, statistics_of
from planner.replanning.port import ReplanPort
from planner.replanning.prompting.decision import (
    PLANNING_PHASES,
    DecisionReply,
    Phase,
    ReplanDecision,
)
from planner.replanning.prompting.prompt_builder import ReplanPromptBuilder, replan_history_line
from planner.text.issue import IssueContext

log = logging.getLogger(__name__)

HookOutcome = Literal["continue", "retry", "changed"]
FENCED = re.compile(r"```[A-Za-z]*\s*\n(.*?)\n\s*```", re.DOTALL)


class DecisionPipeline:
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
        self.planning_enabled = config.planning.enabled
        self.decompose = config.planning.decompose
        revision = config.planning.revision
        explicit = "max_revisions" in revision.model_fields_set
        self.controls = ReplanControls(self.settings, revision.max_revisions if explicit else None)
        self.prompts = ReplanPromptBuilder(config.planning.max_subtasks)
        self.executor = ReplanExecutor(port, self.prompts)
        self.recorder = ReplanRecorder(store, clock, self.settings.decision_mode)
        self.questions: list[str] = []
        self._answer = ""
        """A person's answer, for the next decision or replacement prompt (used once)."""
        self._folded_review: Any = None
        """Folded mode: the review that came inside the last planning-type reply."""
        self.review_sections: Callable[[], list[ReviewSection]] = list
        """Questions other phases add to the plan review call (planner.engine.phase)."""
        self.reviewed: Callable[[dict[str, Any]], None] = lambda answers: None
        """Hands the review call's reply to those phases."""

    @property
    def active(self) -> bool:
        # Without a plan (legacy mode) there is nothing to send back to an earlier phase.
        return self.settings.enabled and self.planning_enabled

    @property
    def separate(self) -> bool:
        """Decisions are their own model calls (the seed's design, the default)."""
        return self.active and self.settings.decision_mode == "separate"

    @property
    def folded(self) -> bool:
        return self.active and self.settings.decision_mode == "folded"

    @property
    def notifications(self) -> list[Notification]:
        return self.recorder.notifications

    # -- §14.2 API ------------------------------------------------------------------------------

    def request_llm_decision(
        self, kind: str, prompt: str, schema: type[BaseModel] = DecisionReply
    ) -> str:
        """One decision call; the raw reply (parse_decision_response reads it)."""
        return self.port.ask_text(kind, prompt, schema)

    def parse_decision_response(self, text: str) -> ReplanDecision | None:
        """§13.1: JSON, then a fenced code block; None (= no replan) with a warning otherwise."""
        return decision_of(json_of(text), text)

    def parse_review_response(self, text: str, phases: Sequence[str]) -> dict[str, Any]:
        """The combined review: one decision per phase; a missing or bad one is None."""
        value = json_of(text)
        if not isinstance(value, dict):
            return {}
        return {phase: decision_of(value.get(phase), text) for phase in phases}

    def replan_history(self) -> str:
        """The replans of this piece of work so far, for a decision prompt (§2.3)."""
        state = self.replan_state()
        limit = self.settings.global_.max_total_replans
        return replan_history_line(state.decisions, state.total, limit)

    def can_replan(self, limit_key: str | None) -> tuple[bool, str]:
        return self.controls.can_replan(limit_key, self.replan_state())

    def should_override(
        self, decision: ReplanDecision, phase: Phase, trigger: str, answered: bool = False
    ) -> Verdict:
        return self.controls.should_override(
            decision, phase, trigger, self.replan_state(), answered=answered
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
            self.recorder.revision(change, state.revision + 1)
        return change

    def record_decision(
        self,
        context: DecisionContext,
        decision: ReplanDecision | None,
        verdict: Verdict,
        **fields: Any,
    ) -> dict[str, Any]:
        return self.recorder.decision(context, decision, verdict, **fields)

    def get_replan_statistics(self) -> ReplanStatistics:
        return statistics_of(self.replan_state(), self.controls)

    # -- the pipeline -----------------------------------------------------------------------------

    def _handle(
        self, context: DecisionContext, decision: ReplanDecision | None, raw: str
    ) -> HookOutcome:
        if decision is None:
            self.recorder.unparseable(context, raw)
            return "continue"
        if decision.asks_people:
            decision = self._only_real_questions(context, decision)
        verdict = self.should_override(decision, context.phase, context.trigger, context.answered)
        return self._act(context, decision, verdict)

    def _only_real_questions(
        self, context: DecisionContext, decision: ReplanDecision
    ) -> ReplanDecision:
        """A question that is the model's to settle never reaches people: it is recorded and
        the decision goes on as if it had not asked."""
        reason = refused_question(context, decision, self.port.plan_rules(None))
        if reason is None:
            return decision
        self.store.append(
            "question_refused",
            phase=context.phase,
            trigger=context.trigger,
            questions=decision.clarification_questions,
            reason=reason,
        )
        log.warning("replanning question at %s not asked: %s", context.phase, reason)
        # A decision that named no other kind of replan only wanted to ask.
        asked_only = decision.replan_type in (None, "clarification_request")
        return decision.model_copy(
            update={
                "clarification_needed": False,
                "clarification_questions": [],
                "replan_type": None if asked_only else decision.replan_type,
                "replan_needed": decision.replan_needed and not asked_only,
            }
        )

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
            self.recorder.notify_assumed(decision, verdict)
        elif verdict.action == "escalate":
            self.recorder.notify_decision("replan_override", context, decision, verdict)
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
            return self._nothing_to_retry(context, decision, verdict)
        plan_before = self._plan().model_dump(mode="json")
        replan_id = replan_id or self.recorder.started(
            context, decision, verdict, plan_before, counted
        )
        done = {"replan_id": replan_id, "plan_before": plan_before}
        try:
            change = self.execute_replan(context, decision, verdict)
        except ReplanFailed as failure:
            return self._failed(context, decision, verdict, str(failure), alternative_allowed, done)
        except PlanningQuestion as question:
            reason = "the goal re-check ended in questions"
            self.record_decision(
                context, decision, verdict, result="failure", override_reason=reason, **done
            )
            return self._ask_after_recheck(context, question.error)
        return self._executed(context, decision, verdict, change, done)

    def _executed(
        self,
        context: DecisionContext,
        decision: ReplanDecision,
        verdict: Verdict,
        change: ReplanChange | None,
        done: dict[str, Any],
    ) -> HookOutcome:
        plan_after = self._plan().model_dump(mode="json") if change is not None else None
        self.record_decision(context, decision, verdict, plan_after=plan_after, **done)
        if verdict.warning:
            log.warning("replan at %s %s", context.phase, verdict.warning)
        if change is None:
            return "retry"  # a retry changes neither plan nor checklist: nothing to announce
        self._folded_review = change.folded_review
        self.recorder.notify_decision(
            "plan_revision", context, decision, verdict, done["replan_id"]
        )
        assert verdict.level is not None
        self.port.progress(f"plan revised ({verdict.level.name})")
        return "changed"

    def _failed(
        self,
        context: DecisionContext,
        decision: ReplanDecision,
        verdict: Verdict,
        problem: str,
        alternative_allowed: bool,
        done: dict[str, Any],
    ) -> HookOutcome:
        """§13.2: the replacement plan stayed unusable after a re-ask."""
        reason = f"the replacement plan was unusable: {problem}"
        failed = replace(verdict, action="continue", outcome="failed", override_reason=reason)
        self.record_decision(context, decision, failed, result="failure", executed=True, **done)
        self.recorder.notify_decision(
            "replan_override", context, decision, failed, done["replan_id"]
        )
        return self._blocked(context, decision, failed, alternative_allowed)

    def _nothing_to_retry(
        self, context: DecisionContext, decision: ReplanDecision, verdict: Verdict
    ) -> HookOutcome:
        reason = "nothing to retry: no failed call is pending"
        nothing = replace(verdict, action="continue", outcome="no_replan", override_reason=reason)
        self.record_decision(context, decision, nothing)
        return "continue"

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
        context = replace(context, started=time.monotonic())
        alternative = self.parse_decision_response(text)
        if alternative is None:
            self.recorder.unparseable(context, text)
            self._escalate(context, reason, [])
        if alternative.asks_people:
            moot = Verdict("continue", "no_replan", override_reason="no alternative: asked people")
            self.record_decision(context, alternative, moot, alternative=True)
            self._escalate(context, reason, alternative.clarification_questions)
        verdict = self.should_override(alternative, context.phase, context.trigger)
        return self._act(context, alternative, verdict, alternative_allowed=False)

    def _escalate(self, context: DecisionContext, reason: str, questions: list[str]) -> NoReturn:
        """§9.4 steps 3-4: tell the people and wait for them (counts restart on their reply)."""
        state = self.port.issue_state()
        done, total = state.progress()
        failed = sum(1 for status in state.task_status.values() if status == "failed")
        document = HumanIntervention(
            summary=InterventionSummary(
                tasks_completed=done,
                tasks_failed=failed,
                revision_attempts=self.replan_state().total,
                reason=f"replanning at {context.phase}: {reason}",
                current_state=f"{done}/{total} tasks complete",
                recommendations=[*questions, "Reply on the issue with guidance to continue."],
            ),
            comment="Replanning is stuck and found no alternative, so a person needs to step in.",
        )
        self.store.append("human_intervention", document=document.model_dump(), phase=context.phase)
        body = escalation_notice(context.phase, reason, questions, self.recorder.now())
        self.recorder.notify("escalation", body)
        self.questions = questions
        raise StopPass("needs_human", document.summary.reason, [document.comment])

    # -- questions to people ----------------------------------------------------------------------

    def _ask(
        self, context: DecisionContext, decision: ReplanDecision, verdict: Verdict
    ) -> NoReturn:
        questions, fallback = self._questions(context, decision, verdict)
        replan_id = new_id()
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
            asked_at=self.recorder.now(),
        )
        self.recorder.notify("clarification", body, replan_id)
        self.questions = questions
        raise StopPass(
            "needs_human",
            f"clarification needed at {context.phase}",
            ["The model needs answers from the people on the issue before it continues."],
        )

    def _questions(
        self, context: DecisionContext, decision: ReplanDecision, verdict: Verdict
    ) -> tuple[list[str], str]:
        """The questions, and what happens without an answer ("" = the stated assumptions)."""
        if verdict.question_kind != "confirmation":
            return decision.clarification_questions or [decision.reasoning or "Please clarify."], ""
        question = (
            f"I am unsure ({round(decision.confidence * 100)}% confident) whether to revise the "
            f"plan at the {context.phase} phase ({decision.replan_type or 'replan'}): "
            f"{decision.reasoning} Should I?"
        )
        return [question], "I will continue with the current plan"

    def _ask_after_recheck(self, context: DecisionContext, error: PlanningError) -> HookOutcome:
        asked = ReplanDecision(
            replan_needed=True,
            confidence=1.0,
            replan_type="clarification_request",
            reasoning=error.message,
            clarification_questions=error.clarification_needed,
            assumptions_to_make=error.assumptions,
        )
        verdict = self.controls.question_verdict(self.replan_state(), "clarification")
        context = replace(context, phase="goal_understanding")  # its answer re-enters phase 1
        if verdict.action == "ask":
            self._ask(context, asked, verdict)
        self.record_decision(context, asked, verdict)
        self.recorder.notify_assumed(asked, verdict)
        return "continue"

    def _auto_assume_minutes(self) -> float | None:
        goal = self.settings.goal_understanding
        return goal.auto_assume_timeout_minutes if goal.auto_assume_on_no_response else None

    # -- small helpers ----------------------------------------------------------------------------

    def replan_state(self) -> ReplanState:
        return ReplanState.from_entries(self.store.entries())

    def _plan(self) -> Plan:
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


def decision_of(value: Any, raw: str) -> ReplanDecision | None:
    """A decision from parsed JSON: {"replan_decision": {...}} or the bare object."""
    if isinstance(value, dict) and isinstance(value.get("replan_decision"), dict):
        value = value["replan_decision"]
    if not isinstance(value, dict):
        return None
    try:
        return ReplanDecision.model_validate(value)
    except ValidationError as exc:
        log.warning("replan decision unusable (%s): %.200s", exc.error_count(), raw)
        return None


def json_of(text: str) -> Any:
    """§13.1 steps 1 and 2: the whole reply as JSON, else the first fenced block that parses."""
    for candidate in [text.strip(), *FENCED.findall(text)]:
        try:
            return json.loads(candidate)
        except (ValueError, RecursionError):  # also huge numbers and deep nesting
            continue
    log.warning("replan decision is not JSON; continuing without a replan: %.200s", text)
    return None


def phase_of(value: Any) -> Phase:
    known = (*PLANNING_PHASES, "execution", "reflection")
    return cast(Phase, value) if value in known else "execution"
