"""QualityJudge: a separate model call that scores a plan, or the finished work, against the goal.

The judge sees the request and the plan's outline (planner/prompts/plan_outline.md.j2: goal, tasks
with their dependencies and planned actions) with the tools' names (for the finished work: the
goal, the task results and the branch's diff instead), never the conversation that produced
them, so it reviews rather than agrees.
"""

from __future__ import annotations

import logging
from typing import Any

from planner.core.errors import ModelBehaviourError
from planner.engine.context import PassContext
from planner.outcome.evidence import evidence_text
from planner.outcome.result import TaskView
from planner.plan.documents import Plan
from planner.refinement.judgement import QualityJudgement
from planner.refinement.port import WorkDiff
from planner.text.budget import ISSUE_REREAD_TOKENS, within_tokens
from planner.text.issue import IssueContext, fence_untrusted, prompt_view, sanitize_untrusted
from planner.text.prompts import render

log = logging.getLogger(__name__)

ISSUE_BODY_BYTES = 8_000
"""The request as the judge reads it: enough to judge against, not the whole thread."""
DIFF_BYTES = 40_000
"""A longer diff is cut (with a note): the judge also has the task results."""
SUMMARY_BYTES = 4_000
"""One task's summary as the judge reads it."""
SYSTEM = "quality_judge"


class QualityJudge:
    def __init__(self, port: PassContext, diff: WorkDiff | None) -> None:
        self.port = port
        self.diff = diff

    def judge_plan(self, plan: Plan) -> QualityJudgement | None:
        """None when the judge gave no usable reply (recorded by the caller)."""
        prompt = render(
            "refinement_judge_plan.md.j2",
            issue=judge_view(self.port.issue),
            plan=plan,
            tools=self.port.tool_specs(),
        )
        return self._ask("refinement_judge_plan", prompt)

    def judge_result(self, plan: Plan, tasks: list[TaskView]) -> QualityJudgement | None:
        prompt = render(
            "refinement_judge_result.md.j2",
            issue=judge_view(self.port.issue),
            plan=plan,
            tasks=[task_view(task) for task in tasks],
            diff=self._diff(),
            tests=sanitize_untrusted(evidence_text(self.port.store.entries()), DIFF_BYTES),
        )
        return self._ask("refinement_judge_result", prompt)

    def _ask(self, kind: str, prompt: str) -> QualityJudgement | None:
        try:
            return self.port.ask_document(kind, prompt, QualityJudgement, system=SYSTEM)
        except ModelBehaviourError as exc:
            log.warning("quality judge gave no usable reply: %s", exc)
            return None

    def _diff(self) -> str:
        if self.diff is None:
            return "(the diff is not available; judge from the task results)"
        return fence_untrusted(compact_diff(self.diff()), DIFF_BYTES)


def compact_diff(diff: str) -> str:
    """The diff without what its `---`/`+++` lines already say: `index` lines, and `diff --git`
    lines followed by a file's lines (one that is not, a link or a binary file, names it)."""
    lines = diff.split("\n")
    kept = []
    for number, line in enumerate(lines):
        if line.startswith("index "):
            continue
        if line.startswith("diff --git ") and any(
            later.startswith("+++ ") for later in lines[number + 1 : number + 4]
        ):
            continue
        kept.append(line)
    return "\n".join(kept)


def task_view(task: TaskView) -> dict[str, str]:
    """A task's result as the judge reads it: the model wrote it, so it is fenced data."""
    return {
        "id": task.id,
        "status": task.status,
        "summary": fence_untrusted(task.summary or "no summary", SUMMARY_BYTES),
    }


def judge_view(issue: IssueContext) -> dict[str, Any]:
    """The issue as the judge sees it: title, a bounded body and the run's instruction."""
    view = prompt_view(issue)
    body = sanitize_untrusted(str(view["body"]), ISSUE_BODY_BYTES)
    where = "the plan was made from the full text"
    return {**view, "body": within_tokens(body, ISSUE_REREAD_TOKENS, "issue text", where)}
