"""Snapshots of what people and models read: prompts and checklists."""

from __future__ import annotations

import pytest

from planner.core.interfaces import ToolSpec
from planner.memory.summaries import history_digest
from planner.outcome.result import PassResult, TaskView, render_checklist
from planner.plan.documents import PlanningReply
from planner.text.issue import Comment, IssueContext, prompt_view
from planner.text.prompts import render
from tests.plans import plan_doc
from tests.snapshot import assert_snapshot

ISSUE = IssueContext(
    repository="octo/repo",
    number="7",
    title="Add a changelog",
    body="Please add CHANGELOG.md.<!-- hidden -->",
    labels=["planner"],
    comments=[
        Comment(author="alice", created_at="2026-11-01T10:00:00Z", body="Use Keep a Changelog.")
    ],
    instruction="also mention v0.1",
)
HISTORY = [
    {"type": "plan", "timestamp": "2026-11-01T10:00:00Z", "plan": plan_doc("task_1")},
    {
        "type": "task",
        "timestamp": "2026-11-01T10:01:00Z",
        "task_id": "task_1",
        "status": "failed",
        "summary": "permission denied",
    },
    {"type": "human_input", "timestamp": "2026-11-02T09:00:00Z", "text": "try again"},
]


def test_planning_request_prompt() -> None:
    tools = [
        ToolSpec(name="read_file", description="Read a file."),
        ToolSpec(name="write_file", description="Write a file."),
    ]
    prompt = render(
        "planning_request.md.j2",
        issue=prompt_view(ISSUE),
        tools=tools,
        history=history_digest(HISTORY),
        max_subtasks=100,
    )
    assert_snapshot("planning_request.txt", prompt)


def test_system_prompts_per_phase() -> None:
    rendered = [
        render(
            "system_planning.md.j2",
            phase=phase,
            strategy="chain_of_thought",
            decomposition_level="moderate",
            reflection_interval=3,
        )
        for phase in ("planning", "execution", "reflection", "completion", "legacy")
    ]
    assert_snapshot("system_prompts.txt", "\n=====\n".join(rendered))


@pytest.mark.parametrize("whole_file", [True, False], ids=["whole_file", "edit_file"])
def test_legacy_system_prompt(whole_file: bool) -> None:
    """planning.enabled: false sends the base system prompt without the planning section."""
    name = "system_prompt_legacy.txt" if whole_file else "system_prompt_legacy_edit_file.txt"
    assert_snapshot(name, render("system_legacy.md.j2", whole_file=whole_file))


SHOWN_FILES = {
    True: "guide.md\n```markdown\n# Guide\nStart here.\n```",
    False: "=== guide.md (2 lines) ===\n1| # Guide\n2| Start here.\n=== end of guide.md ===",
}


@pytest.mark.parametrize("whole_file", [True, False], ids=["whole_file", "edit_file"])
def test_execute_task_prompt(whole_file: bool) -> None:
    plan = PlanningReply.model_validate(plan_doc("task_1", "task_2")).plan()
    prompt = render(
        "execute_task.md.j2",
        issue=prompt_view(ISSUE),
        plan=plan,
        checklist="- [ ] **task_1**: Do task_1\n",
        task=plan.subtask("task_2"),
        actions=plan.actions_for("task_2"),
        files=SHOWN_FILES[whole_file],
        whole_file=whole_file,
        windows=False,
        looks=False,
        numbered=not whole_file,
        earlier="- write_file(...) -> ok",
        assumptions=["the guide is for first-time contributors"],
    )
    assert_snapshot("execute_task.txt" if whole_file else "execute_task_edit_file.txt", prompt)


def test_checklists() -> None:
    tasks = [
        TaskView(id="task_1", description="Read the code", status="completed"),
        TaskView(id="task_2", description="Fix  the\nbug", status="in_progress"),
        TaskView(id="task_3", description="Add a test", status="failed"),
        TaskView(id="task_4", description="Update docs"),
    ]
    plain = PassResult(status="in_progress", goal="Fix the bug", tasks=tasks)
    revised = plain.model_copy(
        update={"revision": 2, "revision_reason": "tests were missing", "previous_progress": (1, 3)}
    )
    assert_snapshot("checklist_plain.md", render_checklist(plain))
    assert_snapshot("checklist_revised.md", render_checklist(revised))
    assert "*Progress: 1/4 (25%) complete*" in render_checklist(plain)
