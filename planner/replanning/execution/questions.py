"""Questions a replan decision wants to ask people: only real ones reach the issue.

At every phase the test of planning's questions applies (planner.plan.clarifications): no
question, the schema's own words, planner's text echoed, or nothing about the issue. At every
phase these are the model's to settle too, never posted: asking what named code is "supposed to
do" when the issue says it; a question naming one of planner's tools; one asking for the plan
itself (its objective, criteria, subtasks); one asking what the code does now (reading it
answers); and one whose answer a sentence of the issue states with a value ("What is the
expected behavior of add?" of "`add(2, 3)` returns -1; it must return 5"). At execution and
reflection, a question after a tool error is about the model's own call ("Can you provide the
full input data for the edit_file action?"). Each was seen posted to an issue, ending the pass
as needs_human.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from planner.plan.clarifications import GENERIC_WORDS, check_clarification
from planner.plan.documents import PlanRules
from planner.replanning.execution.recorder import DecisionContext
from planner.replanning.prompting.decision import ReplanDecision
from planner.text.words import words_of

GENERIC_EXECUTION_WORDS = words_of(
    """expected behavior behaviour correct correctly input inputs output outputs data full value
    values function functions method file files result results format content contents return
    returns should supposed actual actually current currently code implementation implement
    edit action arguments argument parameter parameters example examples case cases"""
)
"""Words a question about a step of the work uses whatever it asks."""
ASKING_PHASES = ("execution", "reflection")
NAME = re.compile(r"[\w.-]+")


def refused_question(
    context: DecisionContext, decision: ReplanDecision, rules: PlanRules
) -> str | None:
    """Why this decision's questions must not reach people (None: they may)."""
    check = check_clarification(
        decision.reasoning, decision.clarification_questions, rules.question_reference
    )
    if check.problem is not None:
        return check.problem
    known = words_of(rules.question_reference or "")
    if all(_asks_what_the_issue_states(q, known) for q in check.questions):
        return "the issue already says what the named code should do"
    tools = {name.casefold() for name in rules.tool_names or ()}
    asked = list(check.questions)
    for asks_it, reason in _model_work(tools):
        asked = [q for q in asked if not asks_it(q)]
        if not asked:
            return reason
    failed = context.trigger.startswith("action ") and " failed: " in context.trigger
    if context.phase in ASKING_PHASES and failed:
        return "a tool call failed: correcting the call is the model's work, not a question"
    issue = rules.issue_text if rules.issue_text is not None else rules.question_reference
    if all(_stated(q, issue or "") for q in asked):
        return "the issue already says what the questions ask"
    return None


VALUE = re.compile(r"`[^`]+`|\d|\"[^\"]+\"")
"""A number, `code` or a quoted string: what a statement of fact holds."""
PARAGRAPH = re.compile(r"\n\s*\n")
CLAUSE = re.compile(r"(?<=[.;!?])\s+")


def _stated(question: str, reference: str) -> bool:
    """Some sentence of the issue holds the question's specific words (all but one of three or
    more) and a value: it states the answer ("`add(2, 3)` returns -1; it must return 5"). A
    sentence that only refers to a thing states nothing: "change the rounding in invoice.py to
    the rule our accounting department uses" does not say the rule, and "What is the
    accounting rule?" is a real question (the 1.5B asked it; it was refused for its words)."""
    wanted = _specific_words(question)
    allowed = 1 if len(wanted) >= 3 else 0  # "What command should be used to run greet.py?"
    paragraphs = PARAGRAPH.split(reference[:200_000])
    clauses = [c for p in paragraphs for c in CLAUSE.split(" ".join(p.split()))]
    return any(
        VALUE.search(clause) and len(wanted - words_of(clause)) <= allowed for clause in clauses
    )


PLAN_PARTS = re.compile(
    r"\b(objectives?|success criteri\w*|expected outcomes?|sub-?tasks?|complexity|"
    r"granularity|decompos\w*|action plan|break\w* (it|this|that|the \w+)( \w+)? down|"
    r"(break|split)\w* down)\b",
    re.IGNORECASE,
)
"""A question that asks for a part of the plan: planning is the model's work, not people's."""
CURRENT_BEHAVIOUR = re.compile(
    r"\b(current(ly)?|existing|right now|at (the|this) moment|today)\b.*"
    r"\b(behaviou?r|do|does|work|works|return|returns|handle|handles|output|outputs)\b|"
    r"\b(behaviou?r|do|does|work|works|return|returns|handle|handles)\b.*\b(currently|now)\b",
    re.IGNORECASE,
)
"""A question about what the code does now."""
SUPPOSED = re.compile(
    r"\b(supposed to|meant to|expected (behaviou?r|output|result|value)|what (is|does|should)\b"
    r".*\b(do|return|behave))\b",
    re.IGNORECASE,
)
"""'What is to_fahrenheit supposed to do?' asked of an issue that says what it returns."""


def _model_work(tools: set[str]) -> list[tuple[Callable[[str], object], str]]:
    """Questions that are the model's to settle at any phase, and why, each seen posted by the
    1.5B: about planner's own tools ("Are combined units correctly handled by the `edit_file`
    tool?"), the plan itself ("What is the main objective of this task?"), or what the code
    does now ("What is the current behavior of the script when `--reverse` is not used?")."""
    return [
        (lambda q: _names_a_tool(q, tools), "the questions are about planner's own tools"),
        (
            PLAN_PARTS.search,
            "the questions ask for the plan itself (objective, criteria, subtasks)",
        ),
        (
            CURRENT_BEHAVIOUR.search,
            "the questions ask what the code does now, which reading it answers",
        ),
    ]


def _asks_what_the_issue_states(question: str, known: frozenset[str]) -> bool:
    return bool(SUPPOSED.search(question)) and _specific_words(question) <= known


def _names_a_tool(question: str, tools: set[str]) -> bool:
    return bool(set(NAME.findall(question.casefold())) & tools)


def _specific_words(question: str) -> frozenset[str]:
    return words_of(question) - GENERIC_WORDS - GENERIC_EXECUTION_WORDS
