"""The core operations (seed: planning-operations): the model calls of each phase, the moves
between phases that need no person, and the hand-over to a pass (approve_plan).

`advance` runs the model wherever the session does not wait for a person: questions for a new
session, options for a design phase without decision points, the summary when every decision
is made. A model or API failure moves the session to failed with the error message (and the
traceback in the phase log).
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from planner.core.errors import ApiError, ModelBehaviourError
from planner.interactive import transitions as move
from planner.interactive.documents import (
    MAX_DECISIONS,
    MAX_OPTIONS,
    MAX_QUESTIONS,
    DesignReply,
    DiscoveryReply,
    ReviewReply,
)
from planner.interactive.model import (
    CRITICAL_TYPES,
    ConversationMessage,
    DecisionOption,
    DecisionPoint,
    Phase,
    PlanningSession,
    PlanningSessionStatus,
    Question,
    Tradeoffs,
    now_iso,
    option_id,
)
from planner.interactive.storage import SessionStore, dump_for_log
from planner.text.issue import sanitize_untrusted
from planner.text.prompts import render

log = logging.getLogger(__name__)
S = PlanningSessionStatus
ReplyT = TypeVar("ReplyT", bound=BaseModel)
REJECTED = "REJECTED: "
"""Prefix of the conversation message that records a rejection and its reason."""
TEXT_LIMIT = 4_000


@dataclass
class Usage:
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    kinds: list[str] = field(default_factory=list)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, record: Any) -> None:
        self.model_calls += 1
        self.prompt_tokens += int(getattr(record, "prompt_tokens", 0))
        self.completion_tokens += int(getattr(record, "completion_tokens", 0))
        self.kinds.append(str(getattr(record, "kind", "")))


class PlanningOperations:
    """The model side of a session; saving is the caller's (after every change it makes)."""

    def __init__(
        self,
        model: Any,
        store: SessionStore,
        repository: str,
        clock: Callable[[], str] = now_iso,
    ) -> None:
        self.model = model
        self.store = store
        self.repository = repository
        self.clock = clock
        self.usage = Usage()
        model.on_call = self.usage.add

    def advance(self, session: PlanningSession) -> None:
        """Call the model until the session waits for a person or has ended."""
        try:
            while self._step(session):
                pass
        except (ApiError, ModelBehaviourError) as exc:
            phase = session.status.value if session.active else "review"
            self.store.append_log(session, phase, traceback.format_exc())  # type: ignore[arg-type]
            move.fail(session, f"{type(exc).__name__}: {exc}", self.clock())
        self.store.save(session)

    def _step(self, session: PlanningSession) -> bool:
        """One move; False when a person must act next (or the session ended)."""
        status = session.status
        if status == S.DISCOVERY and not session.questions:
            self.ask_questions(session)
            return True
        if status == S.DISCOVERY:
            return move.finish_discovery(session, self.clock())
        if status == S.DESIGN and not session.decisions:
            self.propose_design(session)
            return True
        if status == S.DESIGN:
            return move.finish_design(session, self.clock())
        if status == S.REVIEW and session.design_summary is None:
            self.write_summary(session)
            return True
        return False

    # -- the three phases

    def ask_questions(self, session: PlanningSession) -> None:
        variables = {"max_questions": MAX_QUESTIONS}
        reply = self._call(session, "discovery", DiscoveryReply, variables)
        session.questions = [
            Question(
                id=f"q-{number}",
                type=proposed.type,
                question=proposed.question,
                context=proposed.context or None,
                options=proposed.options or None,
            )
            for number, proposed in enumerate(reply.questions, start=1)
        ]
        session.current_question_index = 0
        if not session.questions:
            move.finish_discovery(session, self.clock())

    def propose_design(self, session: PlanningSession) -> None:
        variables = {
            "questions": self._questions(session),
            "rejections": rejections(session),
            "max_decisions": MAX_DECISIONS,
            "max_options": MAX_OPTIONS,
        }
        reply = self._call(session, "design", DesignReply, variables)
        session.decisions = [
            DecisionPoint(
                id=f"d-{number}",
                topic=proposed.topic,
                options=options_with_ids(proposed.options),
            )
            for number, proposed in enumerate(reply.decisions, start=1)
        ]
        session.current_decision_index = 0

    def write_summary(self, session: PlanningSession) -> None:
        chosen = [
            {
                "topic": _safe(d.topic),
                "choice": _safe(option.name),
                "description": _safe(option.description),
                "rationale": _safe(d.rationale or ""),
            }
            for d in session.decisions
            if (option := d.option(d.selected_option_id)) is not None
        ]
        variables = {"questions": self._questions(session), "decisions": chosen}
        reply = self._call(session, "review", ReviewReply, variables)
        session.design_summary = reply.design_summary.strip() or ""
        move.require_summary(session, self.clock())

    # -- the model

    def _call(
        self,
        session: PlanningSession,
        phase: Phase,
        schema: type[ReplyT],
        variables: dict[str, Any],
    ) -> ReplyT:
        prompt = render(
            f"interactive_{phase}.md.j2",
            repository=self.repository,
            instruction=_safe(session.instruction, 20_000),
            **variables,
        )
        messages = [
            {"role": "system", "content": render("interactive_system.md.j2")},
            {"role": "user", "content": prompt},
        ]
        self.remember(session, "user", phase, prompt)
        self.store.append_log(session, phase, f"request interactive_{phase}:\n{prompt}")
        reply: ReplyT = self.model.structured(f"interactive_{phase}", messages, schema)
        text = reply.model_dump_json()
        self.remember(session, "assistant", phase, text)
        self.store.append_log(session, phase, f"reply:\n{dump_for_log(reply.model_dump())}")
        return reply

    def remember(self, session: PlanningSession, role: Any, phase: Any, content: str) -> None:
        remember(session, role, phase, content, self.clock())

    def _questions(self, session: PlanningSession) -> list[dict[str, Any]]:
        return [
            {
                "type": q.type,
                "question": _safe(q.question),
                "answer": None if q.answer is None else _safe(q.answer),
            }
            for q in session.questions
        ]


def remember(
    session: PlanningSession,
    role: Any,
    phase: Any,
    content: str,
    at: str = "",
    author: str | None = None,
) -> None:
    """One message of the session's conversation (a prompt, a reply or a person's words)."""
    message = ConversationMessage(
        role=role, phase=phase, content=content, timestamp=at or now_iso(), author=author
    )
    session.conversation_history.append(message)


def options_with_ids(proposed: list[Any]) -> list[DecisionOption]:
    """Options with planner's ids; exactly one recommendation (the first marked, else none)."""
    recommended = next((i for i, o in enumerate(proposed) if o.recommended), None)
    return [
        DecisionOption(
            id=option_id(index),
            name=option.name,
            description=option.description,
            tradeoffs=Tradeoffs(pros=list(option.pros), cons=list(option.cons)),
            recommendation=index == recommended,
        )
        for index, option in enumerate(proposed)
    ]


def rejections(session: PlanningSession) -> list[dict[str, str]]:
    """Each rejection with the summary it rejected, from the conversation."""
    found: list[dict[str, str]] = []
    design = ""
    for message in session.conversation_history:
        if message.phase == "review" and message.role == "assistant":
            design = _summary_of(message.content)
        elif message.phase == "review" and message.content.startswith(REJECTED):
            reason = message.content.removeprefix(REJECTED)
            found.append({"design": _safe(design, 2_000), "reason": _safe(reason)})
    return found


def _summary_of(reply_json: str) -> str:
    try:
        return ReviewReply.model_validate_json(reply_json).design_summary
    except ValueError:
        return reply_json


def _safe(text: str, limit: int = TEXT_LIMIT) -> str:
    return sanitize_untrusted(text, limit)


# -- the hand-over -------------------------------------------------------------------------------


def build_enhanced_instruction(session: PlanningSession) -> str:
    """The seed's buildEnhancedInstruction: the pass's instruction after approval."""
    critical = "\n".join(
        f"- {q.question}\n  Answer: {q.answer if q.answer is not None else '(skipped)'}"
        for q in session.questions
        if q.type in CRITICAL_TYPES
    )
    decisions = "\n".join(
        f"- {d.topic}: {_chosen_name(d)}\n  Reason: {d.rationale or 'N/A'}"
        for d in session.decisions
    )
    return (
        f"Original Instruction: {session.instruction}\n\n"
        f"## Clarified Requirements\n{critical}\n\n"
        f"## Design Decisions\n{decisions}\n\n"
        f"## Design Summary\n{session.design_summary}"
    ).strip()


def _chosen_name(decision: DecisionPoint) -> str:
    option = decision.option(decision.selected_option_id)
    return option.name if option else "(none)"


def approve_plan(
    session: PlanningSession,
    store: SessionStore,
    run_pass: Callable[[str], str],
    at: str = "",
) -> str:
    """Approve, hand the enhanced instruction to a pass and link its id (planner_session_id).

    `run_pass` takes the instruction and returns the pass id. The session is saved approved
    before the pass runs, so a pass that dies does not leave a session waiting for approval.
    """
    move.approve(session, at)
    instruction = build_enhanced_instruction(session)
    store.append_log(session, "review", f"approved; hand-over instruction:\n{instruction}")
    store.save(session)
    session.planner_session_id = run_pass(instruction)
    store.save(session)
    return instruction
