"""An approved design survives a long issue: the instruction's 20,000-byte cut drops the
oldest issue text, never the design decisions, summary or task list appended after it.

The session's instruction is the issue's title and body; the hand-over (the seed's
buildEnhancedInstruction) appends the clarified requirements, the design decisions and the
design summary. With a 22 KB issue body the cut used to keep the start and drop the design,
so the pass planned from the issue alone, as if nobody had approved anything.
"""

from __future__ import annotations

from planner.interactive.model import DecisionOption, DecisionPoint, new_session
from planner.interactive.operations import build_enhanced_instruction
from planner.text.issue import IssueContext
from tests.harness import Harness
from tests.plans import completion, finish, planning, write

OLDEST = "OLDEST-PARAGRAPH-OF-THE-ISSUE"
BODY = OLDEST + " " + "The export is slow and should be rewritten. " * 500  # ~22 KB
SUMMARY = "Stream rows with a server-side cursor; task list: 1. cursor 2. CSV writer 3. tests"


def approved_instruction() -> str:
    session = new_session(f"Faster CSV export\n\n{BODY}")
    session.decisions = [
        DecisionPoint(
            id="d1",
            topic="Where rows are read",
            options=[DecisionOption(id="o1", name="server-side cursor", description="stream")],
            selected_option_id="o1",
            rationale="memory stays flat",
        )
    ]
    session.design_summary = SUMMARY
    return build_enhanced_instruction(session)


def test_the_approved_design_reaches_the_planning_prompt_of_a_22_kb_issue(
    harness: Harness,
) -> None:
    instruction = approved_instruction()
    assert len(instruction.encode()) > 22_000
    issue = IssueContext(
        repository="octo/repo",
        number="7",
        title="Faster CSV export",
        body=BODY,
        instruction=instruction,
    )
    harness.server.add(planning("task_1"), write("a.txt"), finish(), completion())

    harness.run(
        issue, **{"planning.replanning.enabled": False, "planning.reflection.enabled": False}
    )

    prompt = "\n".join(
        str(message["content"]) for message in harness.server.requests[0].body["messages"]
    )
    assert SUMMARY in prompt
    assert "Where rows are read: server-side cursor" in prompt
    assert "Reason: memory stays flat" in prompt
    [note] = [line for line in prompt.splitlines() if "bytes of this instruction" in line]
    assert "(the oldest issue text) were left out to keep it within 20,000 bytes" in note
    assert f"Original Instruction: Faster CSV export\n\n{OLDEST}" not in prompt
