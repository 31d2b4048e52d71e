"""Is a planning clarification a real question for people, or a model failure?

Small models take the error object the planning schema offers: an empty question list, the
schema's own placeholders ("question", "what you would otherwise assume"), planner's re-ask
text echoed back, or a question about nothing in the issue ("What would you like to do with
this plan?"). None of these may reach the issue; the model is asked to plan on its stated
assumptions instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from planner.text.issue import IssueContext, sanitize_untrusted
from planner.text.prompts import prompts_dir
from planner.text.words import words_of

PLACEHOLDERS = frozenset(
    {"", "question", "questions", "...", "…", "message", "assumption", "assumptions", "string"}
)
OWN_PHRASES = (
    "what you would otherwise assume",
    "could not be used",
    "is not executable",
    "is too unclear to plan",
    "reply again with",
    "reply with the planning json",
    "clarification_needed",
    "goal_understanding",
    "names a tool that does not exist",
    "there is no tool",
    "not a subtask",
    "unclear_goal",
)
"""planner's own wording (schema, re-ask and validation messages) that no person wrote."""
GENERIC_WORDS = words_of(
    """plan plans planning goal goals task tasks want like would please clarify clarification
    provide details detail information info specific specifics more about what which where how
    why who user users requirement requirements expected expect do does done this that it
    happen next step steps proceed approach help exactly mean meant further context given
    additional desired outcome intended purpose scope work change changes specify explain
    tool tools available repository repo list"""
)
"""Words any question may use; a question made only of these asks nothing about the issue
(a question about planner's own tools, "What are the available tools in the repository?", is
one of these)."""
SHINGLE = 6


@dataclass(frozen=True)
class QuestionCheck:
    problem: str | None
    """Why the clarification must not reach people (None: it may)."""
    questions: tuple[str, ...]
    """The questions that are real, the others dropped."""


def check_clarification(message: str, questions: list[str], reference: str | None) -> QuestionCheck:
    """`reference` is the text the questions should be about (issue, repository map); None
    skips that test."""
    known = words_of(reference[:200_000]) if reference is not None else None
    real = tuple(q for q in questions if not echoes_planner(q) and _about(q, known))
    if echoes_planner(message) and not real:
        return QuestionCheck("its message repeats planner's own instructions", real)
    if not [q for q in questions if q.strip()]:
        return QuestionCheck("it asks no question", real)
    if not real:
        return QuestionCheck(
            "its questions repeat the schema's wording or ask nothing about the issue", real
        )
    return QuestionCheck(None, real)


def issue_reference(issue: IssueContext) -> str:
    """The issue's words as people see them (hidden text removed): what questions may be
    about, and what the repository map is ranked by."""
    parts = [issue.title, issue.body, *(c.body for c in issue.comments), issue.instruction]
    return sanitize_untrusted("\n".join(parts), 200_000)


def echoes_planner(text: str) -> bool:
    """True for placeholders and text copied from planner's prompts or messages."""
    normal = _normal(text)
    if normal.strip(" .?!:") in PLACEHOLDERS:
        return True
    if any(phrase in normal for phrase in OWN_PHRASES):
        return True
    words = normal.split()
    shingles = {" ".join(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)}
    return bool(shingles) and len(shingles & _prompt_shingles()) * 2 >= len(shingles)


def _about(question: str, known: frozenset[str] | None) -> bool:
    asked = words_of(question) - GENERIC_WORDS
    return bool(asked) and (known is None or bool(_stems(asked) & _stems(known)))


def _stems(words: frozenset[str]) -> set[str]:
    """Four-letter stems: "writing" is about "write". Lenient on purpose: a false match lets a
    question through, a false miss would hide a real one."""
    return {word[:4] for word in words}


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9_' ]+", " ", text.lower()).split())


@cache
def _prompt_shingles() -> frozenset[str]:
    """Every run of SHINGLE words in planner's prompt files (template syntax removed)."""
    found: set[str] = set()
    for template in sorted(Path(prompts_dir()).glob("*.j2")):
        literal = re.sub(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", " ", template.read_text("utf-8"))
        words = _normal(literal).split()
        found.update(" ".join(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1))
    return frozenset(found)
