"""ReplanManager: the decision points of replanning.md §3.2 (ReplanningPhase, phase.py, calls them).

    review_if_pending()      after the plan exists (goal understanding, task decomposition and
                             action sequence are judged in one call) and after every replan that
                             re-entered a planning phase
    after_action()           at the reflection trigger points (failed action, every
    after_task_failure()     planning.reflection.trigger_interval actions, failed task)
    final_evaluation()       when every task has run, before the completion call
    folded_*()               the same decisions when they ride in the phases' own replies
    resume()                 at the start of a run: interrupted replans, answers, timeouts

A hook returns (continue, or "retry" the failed call), raises PlanChanged (the plan was revised:
pick the next task from the new one) or StopPass (a question for people, or a replan that
cannot run and has no alternative). The deciding itself is the pipeline's (pipeline.py); the
§14.2 API (request_llm_decision, parse_decision_response, execute_replan, can_replan,
should_override, record_decision, get_replan_statistics) is defined there. See
docs/replanning.md.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel, create_model

from planner.core.interfaces import ToolCall, ToolResult
from planner.engine.phase import ReviewSection
from planner.memory.summaries import history_digest
from planner.outcome.flow import PlanChanged, StopPass
from planner.outcome.result import format_timestamp
from planner.plan.documents import PlanningError
from planner.replanning.execution.notices import assumptions_notice, clarification_notice
from planner.replanning.execution.pipeline import (
    DecisionPipeline,
    HookOutcome,
    decision_of,
    json_of,
    phase_of,
)
from planner.replanning.execution.recorder import DecisionContext, new_id
from planner.replanning.limits.controls import Verdict
from planner.replanning.limits.levels import LEVELS, QUESTION_LIMIT
from planner.replanning.limits.state import PendingQuestion
from planner.replanning.prompting.decision import (
    PLANNING_PHASES,
    Phase,
    ReplanDecision,
    ReviewReply,
)
from planner.replanning.prompting.facts import (
    ActionFacts,
    action_facts,
    evaluation_facts,
    task_failure_facts,
)
from planner.replanning.prompting.prompt_builder import PlanningInputs
from planner.text.issue import prompt_view, sanitize_untrusted

QUESTIONS_SPENT = "The limit of questions for this issue is reached"


class ReplanManager(DecisionPipeline):
    # -- planning decision points (§4-§6) --------------------------------------------------------

    def review_if_pending(self, folded_review: Any = None) -> None:
        """Judge the plan at the planning decision points still owed."""
        if folded_review is not None:
            self._folded_review = folded_review
        while True:
            replan_state = self.replan_state()
            plan = self.port.issue_state().plan
            phases = [p for p in PLANNING_PHASES if p in replan_state.review_pending]
            if not phases or plan is None or replan_state.pending_question is not None:
                return
            if not self.decompose:  # the issue as one task: nothing the model planned to judge
                self.store.append("plan_review", phases=phases, outcome="not_reviewed")
                return
            answered = bool(self._answer)
            decisions = self._review_decisions(phases)
            if decisions is None or self._apply_review(phases, decisions, answered) != "changed":
                self.store.append("plan_review", phases=phases, outcome="accepted")
                return

    def _review_decisions(self, phases: list[Phase]) -> dict[str, Any] | None:
        folded, self._folded_review = self._folded_review, None
        if self.folded and folded is not None and not self._answer:
            return self.parse_review_response(json.dumps(folded), phases)
        # Separate mode, or folded with nothing to read (the reply omitted its review, the
        # pass resumed after a stop, or a person answered): one review call.
        inputs = PlanningInputs(
            plan=self._plan(),
            issue=prompt_view(self.issue),
            tools=self.port.tool_specs(),
            history=history_digest(_before_the_plan(self.store.entries())),
        )
        extras = self.review_sections()
        answer = self._take_answer()
        prompt = self.prompts.build_plan_review_prompt(inputs, phases, answer, extras)
        text = self.request_llm_decision("replan_review", prompt, review_schema(extras))
        if extras:
            self.reviewed(_object_of(text))
        decisions = self.parse_review_response(text, phases)
        if not decisions:
            self.recorder.unparseable(DecisionContext(phases[0], "review"), text)
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
                self.recorder.unparseable(context, "(no decision for this phase)")
                continue
            if decision.asks_people:
                decision = self._only_real_questions(context, decision)
            verdict = self.should_override(decision, context.phase, "review", answered)
            if verdict.action in ("continue", "assume"):
                self._act(context, decision, verdict)
                continue
            for later in contexts[index + 1 :]:
                why = f"moot after the {context.phase} decision"
                moot = Verdict("continue", "superseded", override_reason=why)
                self.record_decision(later, decisions.get(later.phase), moot)
            return self._act(context, decision, verdict)
        return "continue"

    # -- execution (§7) and the final evaluation (§8) ---------------------------------------------

    def after_action(self, task_id: str, call: ToolCall, result: ToolResult) -> HookOutcome:
        """After an evaluated action; "retry" asks the phase to run it again."""
        facts = action_facts(self.port.issue_state(), self.store.entries(), task_id, call, result)
        return self._decide_execution(facts, answered=False)

    def after_task_failure(self, task_id: str, summary: str) -> None:
        entries = self.store.entries()
        facts = task_failure_facts(self.port.issue_state(), entries, task_id, summary)
        if self._decide_execution(facts, answered=False) == "retry":
            self.store.append("task", task_id=task_id, status="pending", summary="retrying")

    def _decide_execution(self, facts: ActionFacts, answered: bool) -> HookOutcome:
        context = DecisionContext(
            "execution", facts.trigger, facts.to_dict(), facts.can_retry, answered
        )
        goal = self._plan().goal_understanding.main_objective
        prompt = self.prompts.build_execution_prompt(
            facts, self._take_answer(), goal=goal, replans=self.replan_history()
        )
        text = self.request_llm_decision("replan_execution", prompt)
        return self._changed_or(self._handle(context, self.parse_decision_response(text), text))

    def answer_pending(self) -> bool:
        """A person's answer to a question is waiting for the decision point that asked it (the
        final evaluation, say): the run must not start a new plan instead."""
        return bool(self._answer)

    def final_evaluation(self) -> None:
        """Every task has run: revise the plan, or let the completion call judge it."""
        facts = evaluation_facts(self.port.issue_state(), self.port.snapshot_now())
        context = DecisionContext("reflection", "final evaluation", answered=bool(self._answer))
        prompt = self.prompts.build_reflection_prompt(
            facts, self._take_answer(), replans=self.replan_history()
        )
        text = self.request_llm_decision("replan_reflection", prompt)
        self._changed_or(self._handle(context, self.parse_decision_response(text), text))

    # -- folded mode: the decision came inside the phase's own reply ------------------------------

    def folded_execution(
        self, task_id: str, arguments: dict[str, Any], last: tuple[ToolCall, ToolResult] | None
    ) -> str:
        """The request_replan tool; its answer goes back to the model as the tool result."""
        facts = self._folded_facts(task_id, last)
        context = DecisionContext("execution", facts.trigger, facts.to_dict(), facts.can_retry)
        raw = json.dumps(arguments, ensure_ascii=False)
        decision = decision_of({"replan_needed": True, **arguments}, raw)
        outcome = self._changed_or(self._handle(context, decision, raw))
        if outcome == "retry":
            return "Retry approved: call the failed tool again with the same arguments."
        return "No replan: continue the task with the current plan, or call finish_task."

    def _folded_facts(self, task_id: str, last: tuple[ToolCall, ToolResult] | None) -> ActionFacts:
        state, entries = self.port.issue_state(), self.store.entries()
        if last is not None:
            return action_facts(state, entries, task_id, *last)
        return task_failure_facts(state, entries, task_id, "the model asked to replan").model_copy(
            update={
                "trigger": f"request_replan during {task_id}",
                "executed_action": "(no action yet)",
                "can_retry": False,
            }
        )

    def folded_final(self, value: Any) -> None:
        """The completion reply's replan_decision; a missing one means no replan."""
        if value is None:
            return
        raw = json.dumps(value, ensure_ascii=False)
        context = DecisionContext("reflection", "final evaluation")
        self._changed_or(self._handle(context, decision_of(value, raw), raw))

    def folded_planning_instruction(self) -> str:
        return self.prompts.build_folded_review(PLANNING_PHASES) if self.folded else ""

    def folded_completion_instruction(self) -> str:
        return self.prompts.build_folded_completion(self._take_answer()) if self.folded else ""

    # -- questions and resuming -----------------------------------------------------------------

    def planning_question(self, error: PlanningError) -> None:
        """The planning reply could not plan at all (§10.1.1): tell people what it asks."""
        body = clarification_notice(
            error.clarification_needed,
            error.message,
            error.assumptions,
            auto_assume_minutes=self._auto_assume_minutes(),
            asked_at=self.recorder.now(),
        )
        self.recorder.notify("clarification", body, new_id())

    def no_more_questions(self) -> str:
        """Why people may not be asked now: questions count against the replanning limits
        (max_clarification_requests and global.max_total_replans) wherever they are asked."""
        allowed, why = self.controls.can_replan(QUESTION_LIMIT, self.replan_state())
        return "" if allowed else why

    def planning_assumed(self, assumptions: list[str]) -> None:
        """No more questions allowed: the plan is made on these assumptions; people are told."""
        why = self.no_more_questions()
        reason = f"No more questions may be asked: {why}" if why else QUESTIONS_SPENT
        body = assumptions_notice(reason, assumptions, self.recorder.now())
        self.recorder.notify("assumptions", body, new_id())

    def resume(self) -> None:
        """Start of a run: finish an interrupted replan, then settle a pending question."""
        try:
            interrupted = self.replan_state().interrupted
            if interrupted is not None:
                self._resume_interrupted(interrupted)
            question = self.replan_state().pending_question
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
        answer = sanitize_untrusted("\n\n".join(question.answers), 20_000)
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
        # a planning-phase or final-evaluation question: that decision point runs next with it

    def _recheck_goal(self, question: PendingQuestion) -> None:
        """An answered goal question re-enters goal understanding (level 5) with the answer;
        the question was counted, so this replan is not counted again."""
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
        reason = f"Nobody answered the questions asked at {format_timestamp(question.asked_at)}"
        body = assumptions_notice(reason, question.assumptions, self.recorder.now())
        self.recorder.notify("assumptions", body, question.id)
        if question.has_plan and question.phase in PLANNING_PHASES:
            pending = self.replan_state().review_pending
            self.store.append("plan_review", phases=pending, outcome="assumed")

    def _timed_out(self, question: PendingQuestion) -> bool:
        due = self._due(question)
        return due is not None and self.clock() >= due

    def proceed_after(self) -> datetime | None:
        """When the pending question is assumed at the next run (None: no question, or it
        waits for an answer however long it takes)."""
        question = self.replan_state().pending_question
        return None if question is None or question.answers else self._due(question)

    def _due(self, question: PendingQuestion) -> datetime | None:
        minutes = self._auto_assume_minutes()
        if minutes is None:
            return None
        try:
            asked = datetime.fromisoformat(question.asked_at)
        except ValueError:
            return self.clock()  # an unreadable time must not block the issue forever
        asked = asked if asked.tzinfo else asked.replace(tzinfo=UTC)
        return asked + timedelta(minutes=minutes)

    def _resume_interrupted(self, started: dict[str, Any]) -> None:
        """§10.2: a replan began in an earlier run and never finished; finish it now."""
        decision = decision_of(started.get("llm_decision"), "")
        level = LEVELS.get(int(started.get("level") or 0))
        context = DecisionContext(phase_of(started.get("phase")), str(started.get("trigger", "")))
        replan_id = str(started["replan_id"])
        if decision is None or level is None or level.number == 1:
            verdict = Verdict("continue", "failed", override_reason="interrupted; not resumable")
            self.record_decision(context, decision, verdict, replan_id=replan_id)
            return
        limit_key, signature = started.get("limit_key"), str(started.get("signature", ""))
        verdict = Verdict("execute", "executed", level, limit_key, signature)
        self._execute(context, decision, verdict, replan_id=replan_id)


def review_schema(extras: list[ReviewSection]) -> type[BaseModel]:
    """ReviewReply with one optional object per section another phase added."""
    if not extras:
        return ReviewReply
    fields: dict[str, Any] = {extra.name: (dict[str, Any] | None, None) for extra in extras}
    model: type[BaseModel] = create_model("ReviewReply", __base__=ReviewReply, **fields)
    return model


def _object_of(text: str) -> dict[str, Any]:
    value = json_of(text)
    return value if isinstance(value, dict) else {}


def _before_the_plan(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history without the entry of the plan under review (the review shows the plan)."""
    made = [i for i, entry in enumerate(entries) if entry.get("type") in ("plan", "revision")]
    return entries[: made[-1]] + entries[made[-1] + 1 :] if made else entries
