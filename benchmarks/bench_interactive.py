"""What an interactive planning session costs before the pass: model calls and tokens.

    .venv/bin/python benchmarks/bench_interactive.py

One session of 3 questions and 2 decision points (tests/support/planning_session.py) against the
scripted model server, answered the way people would (the replies go through the reply parser):
  approved       discovery -> design -> review -> approve
  one rejection  ... review -> reject -> a revised design -> review -> approve
Then the first planning request of the pass, with and without the session's enhanced
instruction, to show what the hand-over adds to the prompt. Tokens are the usage the scripted
server reports (its estimate is ~4 characters per token); prompt characters count every message.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from planner.config import LLMConfig
from planner.interactive import transitions as move
from planner.interactive.model import PlanningSession, new_session
from planner.interactive.operations import (
    REJECTED,
    PlanningOperations,
    build_enhanced_instruction,
    remember,
)
from planner.interactive.replies import parse_answers, parse_decisions
from planner.interactive.storage import SessionStore
from planner.model.llm import OpenAIModel
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import Step
from tests.support.planning_session import (
    REVISED,
    REVISED_SUMMARY,
    design_step,
    discovery_step,
    review_step,
)

INSTRUCTION = "Add a login for staff to the admin area"


def run_session(steps: list[Step], rejections: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as scratch, ScriptedModelServer(steps) as server:
        model = OpenAIModel(LLMConfig(api_key="k", base_url=server.base_url, max_retries=0))
        operations = PlanningOperations(model, SessionStore(Path(scratch)), "bench/repo")
        session = new_session(INSTRUCTION)
        operations.advance(session)
        answer(session, "q-1: staff only\n2. 2\nq-3: speed of delivery")
        operations.advance(session)
        for _ in range(rejections):
            decide(session, "d-1: opt-b because cookies are simpler\nd-2: opt-b")
            operations.advance(session)
            remember(session, "user", "review", REJECTED + "too heavy", author="bench")
            move.reject(session)
            operations.advance(session)
        decide(session, "d-1: opt-a because fewer moving parts\nd-2: opt-a")
        operations.advance(session)
        move.approve(session)
        server.assert_consumed()
        characters = sum(len(m["content"]) for r in server.requests for m in r.body["messages"])
    usage = operations.usage
    return {
        "calls": usage.model_calls,
        "prompt": usage.prompt_tokens,
        "completion": usage.completion_tokens,
        "characters": characters,
        "handover": len(build_enhanced_instruction(session)),
    }


def answer(session: PlanningSession, text: str) -> None:
    for question_id, value in parse_answers(text, session).answers.items():
        move.record_answer(session, question_id, value)


def decide(session: PlanningSession, text: str) -> None:
    for decision_id, (option_id, why) in parse_decisions(text, session).choices.items():
        move.record_decision(session, decision_id, option_id, why or None)


def main() -> None:
    scenarios = {
        "approved": ([discovery_step(), design_step(), review_step()], 0),
        "one rejection": (
            [
                discovery_step(),
                design_step(),
                review_step(),
                design_step(REVISED),
                review_step(REVISED_SUMMARY),
            ],
            1,
        ),
    }
    print(
        "| session (3 questions, 2 decision points) | model calls | prompt tokens | "
        "completion tokens | prompt characters | enhanced instruction (chars) |"
    )
    print("|---|---|---|---|---|---|")
    for name, (steps, rejections) in scenarios.items():
        row = run_session(steps, rejections)
        print(
            f"| {name} | {row['calls']} | {row['prompt']:,} | {row['completion']:,} | "
            f"{row['characters']:,} | {row['handover']:,} |"
        )


if __name__ == "__main__":
    main()
