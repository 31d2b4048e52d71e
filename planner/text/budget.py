"""Token budgets for what grows with the issue and the plan in a prompt.

planning-process.md §13.4 sets planner's own share of a prompt (templates, the plan and the
transcript as planner summarises them): planning < 2,000 tokens, each reflection or decision
< 500. What grows with the issue and the work is cut to a budget here, at a line ending, and
the prompt says so, so that a long issue or a long plan cannot take those requests past it.
Counted with planner's estimate of a tokenizer (`estimate`), which the context window uses too.
"""

from __future__ import annotations

import math

CHARS_PER_TOKEN = 3.5
"""Below the map's 3.8 (planner.grounding.repo_map): code and JSON cost more tokens per
character than prose, and an estimate too low is the one that overflows."""

ISSUE_TOKENS = 1_500
"""The issue's body in the planning request, where the plan is made from it: a 20-line issue
is about 400 tokens; a longer one (a pasted log) keeps its start."""
ISSUE_REREAD_TOKENS = 400
"""The issue's body where the plan or the work is judged against it (the plan review, the
quality judgements): those requests also read the plan's goal and success criteria."""
TASK_LIST_TOKENS = 200
"""The tasks still to do in an execution decision (the current one first, with its actions)."""
ACTIONS_TOKENS = 150
"""The actions of the whole run in the final evaluation, newest kept (the task results come
first and stay whole)."""
PLAN_OUTLINE_TOKENS = 700
"""The plan's outline (goal, criteria, tasks with their actions) where it is judged or
reflected on: a six-task plan is about 450 tokens."""
PLAN_WHERE = "the whole plan is in the issue's history"


def estimate(text: str) -> int:
    """Tokens of `text`: a digit is a token (Qwen's tokenizer), the rest CHARS_PER_TOKEN."""
    digits = sum(character.isdigit() for character in text)
    return digits + math.ceil((len(text) - digits) / CHARS_PER_TOKEN)


def plan_within_budget(outline: str) -> str:
    """The plan's outline within PLAN_OUTLINE_TOKENS (a template filter)."""
    return within_tokens(outline, PLAN_OUTLINE_TOKENS, "plan outline", PLAN_WHERE)


def within_tokens(text: str, tokens: int, what: str, where: str, *, newest: bool = False) -> str:
    """`text` within about `tokens`, cut at a line ending (its start kept, or its end with
    `newest`), with a note saying what was cut and `where` the whole of it is."""
    if estimate(text) <= tokens:
        return text
    lines = text.split("\n")
    ordered = list(reversed(lines)) if newest else lines
    kept: list[str] = []
    used = 0
    for line in ordered:
        used += estimate(line) + 1
        if used > tokens:
            break
        kept.append(line)
    if not kept:  # one long line: its characters
        chars = max(0, tokens * 3)
        kept = [ordered[0][-chars:] if newest else ordered[0][:chars]]
    left = len(lines) - len(kept)
    note = f"[planner: {what} cut to {tokens:,} tokens here ({left} more lines); {where}]"
    return "\n".join([note, *reversed(kept)] if newest else [*kept, note])
