"""What replanning costs: model calls and prompt size per pass, off / separate / folded.

    .venv/bin/python benchmarks/bench_replanning.py

One pass of 5 tasks x 2 actions against the scripted model server, with the default config
(reflection every 3 actions). Two scenarios:
  clean    every action succeeds
  failure  task_3's first action fails and the model revises the remaining plan (level 2)
Modes:
  off       planning.replanning.enabled: false (the core's reflection/revision path)
  separate  replanning on, each decision its own call (the default)
  folded    replanning on, decision_mode: folded (decisions inside the phases' own replies)
Prompt size counts every character of every message sent; tokens are the usage the server
reports (its estimate is ~4 characters per token, the same for every mode).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.scripted_pass import TASKS, print_cases, scripted_pass
from planner.testing.steps import Step, reply_json, reply_tool_calls
from tests.plans import (
    completion,
    decision,
    evaluation,
    execution_decision,
    finish,
    plan_doc,
    reflection,
    review,
    revise_reply,
    revision,
    write,
)

REFINEMENT_OFF = {"planning.refinement.enabled": False}
"""Replanning alone: the quality judge's calls are measured by bench_refinement.py."""
MODES = {
    "off": {"planning.replanning.enabled": False, **REFINEMENT_OFF},
    "separate": {**REFINEMENT_OFF},
    "folded": {"planning.replanning.decision_mode": "folded", **REFINEMENT_OFF},
}
PARTIAL = {"confidence": 0.9, "replan_type": "partial_replan", "replan_level": 2}


class Script:
    """Builds the scripted conversation of one pass for one mode."""

    def __init__(self, mode: str, interval: int = 3) -> None:
        self.mode, self.interval = mode, interval
        self.actions = 0
        self.steps: list[Step] = []

    def plan(self) -> None:
        document = plan_doc(*TASKS)
        if self.mode == "folded":
            fine = {
                p: decision()
                for p in ("goal_understanding", "task_decomposition", "action_sequence")
            }
            document["replan_review"] = fine
        self.steps.append(reply_json("planning", document))
        if self.mode == "separate":
            self.steps.append(review())

    def action(self, path: str) -> None:
        self.steps.append(write(path))
        self.actions += 1
        if self.interval and self.actions % self.interval == 0:
            checkpoint = {
                "off": reflection(False, status="success"),
                "separate": execution_decision(False),
            }
            if self.mode in checkpoint:
                self.steps.append(checkpoint[self.mode])

    def failed_action(self) -> None:
        self.steps.append(write("../refused"))
        self.actions += 1
        if self.mode == "off":
            self.steps.append(reflection(True, revision(TASKS, reason="write inside")))
            return
        if self.mode == "separate":
            self.steps.append(execution_decision(True, **PARTIAL))
        else:
            call = {"reasoning": "write inside", **PARTIAL}
            self.steps.append(reply_tool_calls("execute", [("request_replan", call)]))
        self.steps.append(revise_reply(TASKS))

    def task(self, task_id: str) -> None:
        self.action(f"{task_id}-a.txt")
        self.action(f"{task_id}-b.txt")
        self.steps.append(finish())

    def complete(self) -> None:
        done = completion(completed=len(TASKS))
        if self.mode == "separate":
            self.steps.append(evaluation())
        if self.mode == "folded":
            body = json.loads(done.content or "{}")
            body["replan_decision"] = decision(evaluation_result="success")
            done = reply_json("completion", body)
        self.steps.append(done)


def clean(script: Script) -> None:
    script.plan()
    for task in TASKS:
        script.task(task)
    script.complete()


def failure(script: Script) -> None:
    script.plan()
    for task in TASKS:
        if task == "task_3":
            script.failed_action()  # the plan is revised; task_3 starts again
        script.task(task)
    script.complete()


def measure(scenario: Callable[[Script], None], mode: str, root: Path) -> dict[str, Any]:
    script = Script(mode)
    scenario(script)
    result, requests, calls = scripted_pass(script.steps, MODES[mode], root)
    chars = [_chars(r.body) for r in requests]
    kinds = [r.kind or "" for r in requests]
    decision_calls = [k for k in kinds if k.startswith("replan_") and k != "replan_revise"]
    return {
        "calls": result.usage.model_calls,
        "decision_calls": len(decision_calls),
        "prompt_chars": sum(chars),
        "decision_chars": sum(c for c, k in zip(chars, kinds, strict=True) if k in decision_calls),
        "prompt_tokens": sum(c["prompt_tokens"] for c in calls),
        "completion_tokens": sum(c["completion_tokens"] for c in calls),
    }


def _chars(body: dict[str, Any]) -> int:
    return sum(len(str(m.get("content") or "")) for m in body["messages"])


COLUMNS = (
    ("scenario", "<9"),
    ("mode", "<9"),
    ("calls", ">5"),
    ("decis.", ">6"),
    ("prompt chars", ">12,"),
    ("in decis.", ">9,"),
    ("prompt tok", ">10,"),
    ("compl. tok", ">10,"),
)
FIGURES = (
    "calls",
    "decision_calls",
    "prompt_chars",
    "decision_chars",
    "prompt_tokens",
    "completion_tokens",
)
"""measure()'s figures in COLUMNS' order, after the scenario and the mode."""


def main() -> None:
    scenarios = (("clean", clean), ("failure", failure))
    cases = (
        (name, mode, partial(measure, scenario, mode))
        for name, scenario in scenarios
        for mode in MODES
    )
    print_cases(COLUMNS, FIGURES, cases)


if __name__ == "__main__":
    main()
