"""Scripted stand-in models for `planner eval` (no LLM involved; they prove the harness).

`reference`: writes the hidden check's test as the issue's test, plans one task, writes the
task's reference solution file by file with `write_file` (a real-repository task's with
`edit_file`, undoing its recorded edits), finishes, approves every review,
decision and quality judgement, and reports completion. Whatever it claims, the check decides.
For a task with an answer (a clarification task) it first asks a question, and plans once the
answer is in the issue's comments.
`nonsense`: answers every request with prose that is neither a document nor a tool call;
the harness must report it as resolving nothing.
"""

from __future__ import annotations

from typing import Any

from planner.evaluation.suite import Task, solution_files
from planner.model.hunks import edits_between
from planner.testing.scripted_server import Responder, ScriptedModelServer
from planner.testing.steps import Step, reply_json, reply_text, reply_tool_calls

SCRIPTED_MODELS = ("reference", "nonsense")
NONSENSE = "Sure! I love this issue. The weather is nice today; bananas are yellow."
NO = {"replan_needed": False, "confidence": 0.9, "reasoning": "on track"}


def scripted_server(model: str, task: Task, download: bool = True) -> ScriptedModelServer:
    """A started-on-enter server answering as `model` for `task`."""
    responder = reference_responder(task, download) if model == "reference" else nonsense_responder
    return ScriptedModelServer(model=f"scripted-{model}", responder=responder)


def nonsense_responder(kind: str | None, body: dict[str, Any]) -> Step:
    return reply_text(kind, NONSENSE)


def reference_responder(task: Task, download: bool = True) -> Responder:
    writes = _solution_calls(task, download)

    def respond(kind: str | None, body: dict[str, Any]) -> Step:
        if kind in ("execute", "legacy"):
            return _next_write(kind, body, writes)
        if kind == "issue_test":
            return reply_text(kind, _check_test(task))
        if kind == "planning" and task.answer and not _mentions(body, task.answer):
            return reply_json(kind, QUESTION)  # a clarification task: ask, as a person would
        return reply_json(kind, DOCUMENTS.get(kind or "", {"replan_decision": NO}))

    return respond


def _check_test(task: Task) -> str:
    """The issue's test, as a model that knew the hidden check would write it."""
    tests = sorted(task.check_files.rglob("test_*.py"))
    return f"```python\n{tests[0].read_text()}```\n" if tests else "No test."


def _mentions(body: dict[str, Any], answer: str) -> bool:
    first_line = answer.strip().splitlines()[0]
    return any(first_line in str(message.get("content")) for message in body["messages"])


def _solution_calls(task: Task, download: bool) -> list[tuple[str, dict[str, Any]]]:
    """The reference solution as tool calls: write_file per file; for a real-repository task,
    edit_file undoing its recorded edits (a module of 150 kB written whole is a high-risk
    overwrite that waits for a person)."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for path, content in solution_files(task, download):
        bugged = content
        for edit in task.edits:
            if edit.path == path:
                bugged = bugged.replace(edit.old, edit.new, 1)
        edits = edits_between(bugged, content) if task.source is not None else None
        if edits:
            calls.append(("edit_file", {"path": path, "edits": edits}))
        else:
            calls.append(("write_file", {"path": path, "content": content}))
    return calls


def _next_write(kind: str, body: dict[str, Any], writes: list[tuple[str, dict[str, Any]]]) -> Step:
    done = sum(
        1
        for message in body["messages"]
        for call in message.get("tool_calls") or []
        if call["function"]["name"] in ("write_file", "edit_file")
    )
    if done < len(writes):
        return reply_tool_calls(kind, [writes[done]])
    summary = {"status": "completed", "summary": "wrote the reference solution"}
    return reply_tool_calls(kind, [("finish_task", summary)])


PLAN = {
    "phase": "planning",
    "goal_understanding": {
        "main_objective": "Apply the reference solution",
        "success_criteria": ["the check passes"],
    },
    "task_decomposition": {
        "reasoning": "one change",
        "subtasks": [
            {
                "id": "task_1",
                "description": "Write the reference solution",
                "dependencies": [],
                "estimated_complexity": "low",
                "required_tools": ["write_file"],
            }
        ],
    },
    "action_plan": {
        "execution_order": ["task_1"],
        "actions": [{"task_id": "task_1", "tool": "write_file", "purpose": "write the files"}],
    },
    "comment": "Plan completed. Starting execution.",
}
QUESTION = {
    "phase": "planning",
    "error": {
        "type": "unclear_goal",
        "message": "The issue does not say which rule to follow.",
        "clarification_needed": ["Which rule exactly should the change follow?"],
        "assumptions": ["the most common rule"],
    },
    "comment": "I need one answer before planning.",
}
ACCEPTED = {"score": 90, "is_acceptable": True, "issues": [], "suggestions": []}
"""The refinement judge's word on the plan and on the finished work: acceptable."""
DOCUMENTS: dict[str, dict[str, Any]] = {
    "planning": PLAN,
    "refinement_judge_plan": ACCEPTED,
    "refinement_judge_result": ACCEPTED,
    "replan_review": {
        **{phase: NO for phase in ("goal_understanding", "task_decomposition", "action_sequence")},
        "quality_judgement": ACCEPTED,  # the plan judgement rides in the review (refinement on)
    },
    "replan_execution": {"replan_decision": NO},
    "replan_reflection": {"replan_decision": {**NO, "evaluation_result": "success"}},
    "reflection": {
        "phase": "reflection",
        "reflection": {
            "action_evaluated": "last action",
            "status": "success",
            "evaluation": "the file was written",
            "issues_identified": [],
            "plan_revision_needed": False,
        },
        "comment": "on track",
    },
    "completion": {
        "phase": "completion",
        "done": True,
        "comment": "All tasks completed",
        "summary": {
            "goal_achieved": True,
            "tasks_completed": 1,
            "tasks_failed": 0,
            "key_outcomes": ["reference solution written"],
        },
    },
}
