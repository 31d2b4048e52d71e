"""People's replies to a session, as typed on an issue or in a terminal.

Answers:    `q-2: text`, `2. text`, `2) text`, `**q-2**: text` (one per line; an answer runs on
            until the next item, and a numbered list after `q-N:` stays in q-N's answer unless
            its numbers come after N), or free text when exactly one question is open. Only
            lines at the top level count (read with CommonMark, as the forge renders them): an
            item of a nested list, a quote or a code block is part of the answer it is in. An
            answer that is an option's number (`2`, `option 2`) or its text picks that option.
Decisions:  `d-1: opt-b because …`, `d-1: b, …`, `1. option 2 since …`, or `opt-b because …`
            when exactly one decision point is open.
Commands:   `plan <instruction>`, `approve`, `reject <why>`, `cancel` (the text after the phrase).

Replies are untrusted: nothing here executes or follows them; they are capped in length and the
ids they name must exist. Whatever could not be used is returned as a problem for the person.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from planner.interactive.model import DecisionPoint, PlanningSession, Question
from planner.text.markdown import outline

ANSWER_CHARS = 4_000
ITEM = re.compile(
    r"^[ \t]*(?:[-*+][ \t]+)?(?:\*\*|__)?(?P<ref>[qd]-?\d{1,3}|\d{1,3})(?:\*\*|__)?"
    r"[ \t]*(?:[:.)]|[ \t]-[ \t])[ \t]*(?P<rest>.*)$",
    re.IGNORECASE | re.MULTILINE,
)
OPTION_NUMBER = re.compile(r"^(?:option[ \t]*|#)?(\d{1,2})[.)]?$", re.IGNORECASE)
OPTION_REF = re.compile(
    r"^(?:opt-?(?P<id>[a-z]{1,2})\b|(?P<letter>[a-z])(?=$|[,.;:)]|\s+(?:because|since|as)\b)"
    r"|(?:option[ \t]*)?(?P<n>\d{1,2})\b)",
    re.IGNORECASE,
)
RATIONALE_LEAD = re.compile(r"^[\s,;:.\-–—)]*(?:(?:because|since|as|reason:?)\b)?[\s,:]*", re.I)
CommandName = Literal["plan", "approve", "reject", "cancel"]
COMMAND_NAMES: tuple[CommandName, ...] = ("plan", "approve", "reject", "cancel")


@dataclass
class Parsed:
    """What a reply gave: answers (question id -> text) or choices, and what was not usable."""

    answers: dict[str, str] = field(default_factory=dict)
    choices: dict[str, tuple[str, str]] = field(default_factory=dict)
    """decision id -> (option id, rationale)."""
    problems: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.answers and not self.choices


@dataclass(frozen=True)
class SessionCommand:
    name: CommandName
    argument: str = ""


def parse_command(text: str) -> SessionCommand | None:
    """`approve`, `reject <why>`, `cancel`, `plan <instruction>` as the first word; else None."""
    parts = text.strip().split(maxsplit=1)
    word = parts[0].lower().rstrip(":.,!") if parts else ""
    if word not in COMMAND_NAMES:
        return None
    argument = parts[1].strip() if len(parts) > 1 else ""
    return SessionCommand(word, argument[:ANSWER_CHARS])


# -- items -------------------------------------------------------------------------------------


def _items(text: str, letter: str, open_numbers: set[str]) -> list[tuple[str, str]] | None:
    """(reference number, text) for each item; None when the reply has no item at all.

    `q-2:` always starts an item, and owns what follows up to the next item. A bare `2.` starts
    one only when it names a question still open that this reply has not answered yet and, after
    a `q-N:`, comes after N (answers follow in order: `q-2: two stores:` then `1. …` is a list
    inside q-2's answer); otherwise it is a numbered list inside the answer before it, and so are
    the numbers that continue that list."""
    starts: list[re.Match[str]] = []
    taken: set[str] = set()
    listed = labelled = 0
    inside_list: int | None = None  # the top-level list whose items stay in the answer before
    lines = outline(text)
    for match in ITEM.finditer(text):
        reference = match.group("ref")
        line = text.count("\n", 0, match.start())
        if not _kind_fits(reference, letter) or line in lines.deeper:
            continue
        number = re.sub(r"\D", "", reference)
        in_list = lines.top_items.get(line)
        same_list = in_list is not None and in_list == inside_list
        if reference[0].isdigit() and (
            same_list or _inside_answer(int(number), listed, labelled, open_numbers - taken)
        ):
            listed, inside_list = int(number), in_list
            continue
        listed, inside_list = 0, None
        labelled = labelled if reference[0].isdigit() else int(number)
        taken.add(number)
        starts.append(match)
    return _bodies(text, starts) if starts else None


def _inside_answer(number: int, listed: int, labelled: int, still_open: set[str]) -> bool:
    """Whether a bare number belongs to the answer before it: it continues a list there, it is
    not after the last explicit label, or it names no question still open."""
    continues = bool(listed) and number == listed + 1
    return continues or number <= labelled or str(number) not in still_open


def _bodies(text: str, starts: list[re.Match[str]]) -> list[tuple[str, str]]:
    items = []
    for index, match in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(text)
        body = (match.group("rest") + text[match.end() : end]).strip()
        items.append((re.sub(r"\D", "", match.group("ref")), body))
    return items


def _kind_fits(reference: str, letter: str) -> bool:
    head = reference[0].lower()
    return head.isdigit() or head == letter


def _capped(text: str) -> str:
    text = text.strip()
    return text if len(text) <= ANSWER_CHARS else text[:ANSWER_CHARS] + " …(cut)"


# -- answers -----------------------------------------------------------------------------------


def parse_answers(text: str, session: PlanningSession) -> Parsed:
    parsed = Parsed()
    still_open = {q.id.removeprefix("q-") for q in session.open_questions()}
    items = _items(text, "q", still_open)
    if items is None:
        return _free_answer(text, session, parsed)
    by_number = {q.id.removeprefix("q-"): q for q in session.questions}
    for number, body in items:
        question = by_number.get(number)
        if question is None:
            parsed.problems.append(f"there is no question q-{number}")
        elif not body:
            parsed.problems.append(f"the answer to {question.id} is empty")
        else:
            parsed.answers[question.id] = _answer_text(body, question)
    return parsed


def _free_answer(text: str, session: PlanningSession, parsed: Parsed) -> Parsed:
    open_questions = session.open_questions()
    if not text.strip():
        parsed.problems.append("the reply is empty")
    elif len(open_questions) == 1:
        question = open_questions[0]
        parsed.answers[question.id] = _answer_text(text, question)
    else:
        ids = ", ".join(q.id for q in open_questions) or "none"
        parsed.problems.append(
            f"the reply names no question, and more than one is open ({ids}): "
            "start each answer with its id, like `q-1: …`"
        )
    return parsed


def _answer_text(body: str, question: Question) -> str:
    """The option a bare number or an option's text picks, else the answer as written."""
    options = question.options or []
    stripped = body.strip()
    number = OPTION_NUMBER.match(stripped)
    if number and 1 <= int(number.group(1)) <= len(options):
        return options[int(number.group(1)) - 1]
    exact = next((o for o in options if o.strip().lower() == stripped.lower()), None)
    return exact if exact is not None else _capped(body)


# -- decisions ---------------------------------------------------------------------------------


def parse_decisions(text: str, session: PlanningSession) -> Parsed:
    parsed = Parsed()
    still_open = {d.id.removeprefix("d-") for d in session.open_decisions()}
    items = _items(text, "d", still_open)
    if items is None:
        open_points = session.open_decisions()
        if len(open_points) == 1 and text.strip():
            _choose(open_points[0], text, parsed)
        else:
            ids = ", ".join(d.id for d in open_points) or "none"
            parsed.problems.append(
                f"the reply names no decision point, and {len(open_points)} are open ({ids}): "
                "write `d-1: opt-b because …`"
            )
        return parsed
    by_number = {d.id.removeprefix("d-"): d for d in session.decisions}
    for number, body in items:
        decision = by_number.get(number)
        if decision is None:
            parsed.problems.append(f"there is no decision point d-{number}")
        else:
            _choose(decision, body, parsed)
    return parsed


def _choose(decision: DecisionPoint, body: str, parsed: Parsed) -> None:
    found = _option(decision, body.strip())
    if found is None:
        known = ", ".join(f"{o.id} ({o.name})" for o in decision.options)
        parsed.problems.append(f"{decision.id}: name one of the options: {known}")
        return
    option_id, rest = found
    parsed.choices[decision.id] = (option_id, _capped(RATIONALE_LEAD.sub("", rest, count=1)))


def _option(decision: DecisionPoint, body: str) -> tuple[str, str] | None:
    """(option id, the rest of the text) for `opt-b …`, `b …`, `2 …` or an option's name."""
    match = OPTION_REF.match(body)
    if match:
        chosen = _by_reference(decision, match)
        if chosen is not None:
            return chosen, body[match.end() :]
    for option in sorted(decision.options, key=lambda o: -len(o.name)):
        if body.lower().startswith(option.name.lower()):
            return option.id, body[len(option.name) :]
    return None


def _by_reference(decision: DecisionPoint, match: re.Match[str]) -> str | None:
    ids = [o.id for o in decision.options]
    if match.group("n"):
        number = int(match.group("n"))
        return ids[number - 1] if 1 <= number <= len(ids) else None
    letters = (match.group("id") or match.group("letter") or "").lower()
    wanted = f"opt-{letters}"
    return wanted if wanted in ids else None
