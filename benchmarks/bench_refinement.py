"""What refinement costs: model calls and prompt tokens per pass, quality judge on and off.

    .venv/bin/python benchmarks/bench_refinement.py

One pass of 5 tasks x 2 actions against the scripted model server, default config otherwise
(replanning on, separate decisions, a checkpoint every 3 actions). Scenarios:
  accepted   the judge accepts the plan and the finished work at once
  refined    the first plan scores 40 (not acceptable), one replan with the feedback, 85
  gap        the finished work scores 50; one task is added for the finding, then 90
Refinement off runs the same work without the judge (and, for "refined", with the first plan;
for "gap", without the added task). Prompt tokens are the usage the server reports (about 4
characters per token, the same estimate for every row).
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.scripted_pass import TASKS, print_cases, scripted_pass
from planner.testing.steps import Step
from tests.plans import (
    completion,
    evaluation,
    execution_decision,
    finish,
    follow_up,
    judge_plan,
    judge_result,
    planning,
    refined,
    review,
    subtask,
    write,
)

SCENARIOS = ("accepted", "refined", "gap")


class Script:
    """The scripted conversation of one pass (the order the pass loop asks in)."""

    def __init__(self, refinement: bool) -> None:
        self.on = refinement
        self.actions = 0
        self.steps: list[Step] = []

    def judge(self, step: Step) -> None:
        if self.on:
            self.steps.append(step)

    def action(self, path: str) -> None:
        self.steps.append(write(path))
        self.actions += 1
        if self.actions % 3 == 0:
            self.steps.append(execution_decision(False))

    def task(self, task_id: str) -> None:
        self.action(f"{task_id}-a.txt")
        self.action(f"{task_id}-b.txt")
        self.steps.append(finish())


def build(scenario: str, refinement: bool) -> list[Step]:
    script = Script(refinement)
    script.steps += [planning(*TASKS), review()]
    if scenario == "refined" and refinement:
        script.steps += [
            judge_plan(40, False, "nothing checks the files"),
            refined(*TASKS, chain=False),
        ]
    script.judge(judge_plan(85, True))
    for task in TASKS:
        script.task(task)
    script.steps.append(evaluation())
    if scenario == "gap" and refinement:
        extra = {**subtask("task_6", "task_5"), "description": "List the files in README"}
        script.steps += [judge_result(50, False, "README does not list the files")]
        script.steps += [follow_up(extra)]
        script.task("task_6")
        script.steps.append(evaluation())
    script.judge(judge_result(90, True))
    script.steps.append(completion(completed=len(TASKS)))
    return script.steps


def measure(scenario: str, refinement: bool, root: Path) -> dict[str, Any]:
    overrides = {"planning.refinement.enabled": refinement}
    _, _, calls = scripted_pass(build(scenario, refinement), overrides, root)
    judged = [c for c in calls if str(c["kind"]).startswith("refinement_")]
    return {
        "calls": len(calls),
        "refinement_calls": len(judged),
        "prompt_tokens": sum(c["prompt_tokens"] for c in calls),
        "refinement_tokens": sum(c["prompt_tokens"] for c in judged),
    }


COLUMNS = (
    ("scenario", "<9"),
    ("refinement", "<10"),
    ("calls", ">5"),
    ("judge+replan", ">12"),
    ("prompt tok", ">10,"),
    ("of which refinement", ">19,"),
)
FIGURES = ("calls", "refinement_calls", "prompt_tokens", "refinement_tokens")
"""measure()'s figures in COLUMNS' order, after the scenario and the label."""


def main() -> None:
    cases = (
        (scenario, "on" if refinement else "off", partial(measure, scenario, refinement))
        for scenario in SCENARIOS
        for refinement in (False, True)
    )
    print_cases(COLUMNS, FIGURES, cases)


if __name__ == "__main__":
    main()
