"""The session in a terminal (`planner plan`): plain prompts on stdin/stdout, piped or not.

Questions are numbered; an option is picked by its number, a decision's option by its number or
id; a rationale is free text; an empty answer skips a question (recorded as answer null). End of
input saves the session where it stands, to be continued with `planner plan --resume ID`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

from planner.interactive import transitions as move
from planner.interactive.model import DecisionPoint, PlanningSession, PlanningSessionStatus
from planner.interactive.operations import (
    REJECTED,
    PlanningOperations,
    build_enhanced_instruction,
    remember,
)
from planner.interactive.replies import parse_decisions
from planner.interactive.storage import SessionStore

S = PlanningSessionStatus


class EndOfInput(Exception):
    """stdin ended: the session stays saved where it is."""


@dataclass
class Console:
    stdin: TextIO
    stdout: TextIO

    def say(self, text: str = "") -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def ask(self, prompt: str) -> str:
        self.stdout.write(prompt)
        self.stdout.flush()
        line = self.stdin.readline()
        if not line:
            self.say()
            raise EndOfInput
        return line.strip()


@dataclass
class TerminalSession:
    """One session driven from a console. `execute` runs a pass on the instruction (its id)."""

    operations: PlanningOperations
    store: SessionStore
    console: Console
    execute: Callable[[str], str]
    later_command: str
    """How to execute later, shown when the person answers no."""

    def run(self, session: PlanningSession, *, execute_now: bool | None = None) -> int:
        """0 when approved (executed or not), cancelled or left for later; 1 when failed."""
        move.check_resume_position(session)
        self.console.say(f"Planning session {session.session_id}")
        try:
            while self._turn(session):
                self.store.save(session)
        except EndOfInput:
            self.store.save(session)
            self.console.say(f"Saved. Continue with: planner plan --resume {session.session_id}")
            return 0
        return self._end(session, execute_now)

    def _turn(self, session: PlanningSession) -> bool:
        self.operations.advance(session)
        turns = {S.DISCOVERY: self._discovery, S.DESIGN: self._design, S.REVIEW: self._review}
        turn = turns.get(session.status)
        if turn is None:
            return False
        turn(session)
        return True

    # -- phases

    def _discovery(self, session: PlanningSession) -> None:
        total = len(session.questions)
        for number, question in enumerate(session.questions, start=1):
            if not question.open:
                continue
            self.console.say(
                f"\n[{number}/{total}] {question.id} ({question.type}) {question.question}"
            )
            if question.context:
                self.console.say(f"    why it matters: {question.context}")
            for index, option in enumerate(question.options or [], start=1):
                self.console.say(f"    {index}) {option}")
            answer = self.console.ask("  answer (an option's number or text; empty skips): ")
            self._record(session, question.id, answer, question.options or [])
            self.store.save(session)

    def _record(
        self, session: PlanningSession, question_id: str, answer: str, options: list[str]
    ) -> None:
        if not answer:
            move.skip_question(session, question_id)
            return
        if answer.isdigit() and 1 <= int(answer) <= len(options):
            answer = options[int(answer) - 1]
        move.record_answer(session, question_id, answer)

    def _design(self, session: PlanningSession) -> None:
        for decision in session.open_decisions():
            self._show_decision(decision)
            option_id = self._pick(session, decision)
            rationale = self.console.ask("  why? (free text, optional): ")
            move.record_decision(session, decision.id, option_id, rationale or None)
            self.store.save(session)

    def _show_decision(self, decision: DecisionPoint) -> None:
        self.console.say(f"\n{decision.id}: {decision.topic}")
        for index, option in enumerate(decision.options, start=1):
            mark = "  (recommended)" if option.recommendation else ""
            self.console.say(f"  {index}) {option.id} {option.name}{mark}")
            self.console.say(f"       {option.description}")
            for pro in option.tradeoffs.pros:
                self.console.say(f"       + {pro}")
            for con in option.tradeoffs.cons:
                self.console.say(f"       - {con}")

    def _pick(self, session: PlanningSession, decision: DecisionPoint) -> str:
        recommended = next((o for o in decision.options if o.recommendation), None)
        default = f" [{recommended.id}]" if recommended else ""
        while True:
            typed = self.console.ask(f"  choose an option (number or id){default}: ")
            if not typed and recommended:
                return recommended.id
            parsed = parse_decisions(f"{decision.id}: {typed}", session)
            if decision.id in parsed.choices:
                return parsed.choices[decision.id][0]
            self.console.say(f"  not an option of {decision.id}: {typed!r}")

    def _review(self, session: PlanningSession) -> None:
        self.console.say("\nDesign summary:\n" + (session.design_summary or ""))
        self.console.say("\nThe instruction that will be planned:\n")
        self.console.say(build_enhanced_instruction(session))
        while True:
            typed = self.console.ask("\napprove, reject or cancel? [a/r/c]: ").lower()
            if typed in ("a", "approve"):
                move.approve(session)
                return
            if typed in ("c", "cancel"):
                move.cancel(session)
                return
            if typed in ("r", "reject"):
                reason = self.console.ask("  why? (feedback for the revised design): ")
                remember(session, "user", "review", REJECTED + reason, author="terminal")
                move.reject(session)
                return

    # -- the end

    def _end(self, session: PlanningSession, execute_now: bool | None) -> int:
        self.store.save(session)
        if session.status == S.FAILED:
            self.console.say(f"The session failed: {session.error_message}")
            return 1
        if session.status == S.CANCELLED:
            self.console.say(f"Session {session.session_id} cancelled.")
            return 0
        instruction = build_enhanced_instruction(session)
        again = self._warn_if_executed(session)
        if execute_now is None:
            answer = self._optional_ask(f"\nexecute {'again' if again else 'now'}? [y/N]: ")
            execute_now = answer.lower() in ("y", "yes")
        if not execute_now:
            self.console.say(f"Not executed. Run it later with:\n  {self.later_command}")
            return 0
        session.planner_session_id = self.execute(instruction)
        self.store.save(session)
        return 0

    def _warn_if_executed(self, session: PlanningSession) -> bool:
        """A session already handed to a pass: executing it again starts another pass on the
        same instruction (its work may already be in the repository)."""
        if not session.planner_session_id:
            return False
        self.console.say(
            f"\nWarning: this session was already executed (pass {session.planner_session_id}). "
            "Executing it again runs another pass on the same instruction."
        )
        return True

    def _optional_ask(self, prompt: str) -> str:
        try:
            return self.console.ask(prompt)
        except EndOfInput:
            return ""
