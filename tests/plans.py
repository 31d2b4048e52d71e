"""Builders for scripted model conversations used across tests."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from planner.testing.scripted_server import Step, reply_json, reply_tool_calls


def subtask(task_id: str, *deps: str, tool: str = "write_file") -> dict[str, Any]:
    return {
        "id": task_id,
        "description": f"Do {task_id}",
        "dependencies": list(deps),
        "estimated_complexity": "low",
        "required_tools": [tool],
    }


def plan_doc(*task_ids: str, chain: bool = True, tool: str = "write_file") -> dict[str, Any]:
    subtasks = [
        subtask(t, *([task_ids[i - 1]] if chain and i else []), tool=tool)
        for i, t in enumerate(task_ids)
    ]
    return {
        "phase": "planning",
        "goal_understanding": {
            "main_objective": "Write the files",
            "success_criteria": ["files exist"],
        },
        "task_decomposition": {"reasoning": "one file per task", "subtasks": subtasks},
        "action_plan": {
            "execution_order": list(task_ids),
            "actions": [{"task_id": t, "tool": tool, "purpose": f"write {t}"} for t in task_ids],
        },
        "comment": "Plan completed. Starting execution.",
    }


def planning(*task_ids: str, **kwargs: Any) -> Step:
    return reply_json("planning", plan_doc(*task_ids, **kwargs))


def write(path: str, content: str = "hello\n") -> Step:
    return reply_tool_calls("execute", [("write_file", {"path": path, "content": content})])


def finish(status: str = "completed", summary: str = "done") -> Step:
    return reply_tool_calls("execute", [("finish_task", {"status": status, "summary": summary})])


def completion(done: bool = True, completed: int = 1) -> Step:
    return reply_json(
        "completion",
        {
            "phase": "completion",
            "done": done,
            "comment": "All tasks completed",
            "summary": {
                "goal_achieved": done,
                "tasks_completed": completed,
                "tasks_failed": 0,
                "key_outcomes": ["files written"],
            },
        },
    )


def reflection(
    needed: bool, revision: dict[str, Any] | None = None, status: str = "failure"
) -> Step:
    document: dict[str, Any] = {
        "phase": "reflection",
        "reflection": {
            "action_evaluated": "last action",
            "status": status,
            "evaluation": "evaluated",
            "issues_identified": [],
            "plan_revision_needed": needed,
        },
        "comment": "reflected",
    }
    if revision is not None:
        document["plan_revision"] = revision
    return reply_json("reflection", document)


def revision(
    order: list[str],
    subtasks: list[dict[str, Any]] | None = None,
    reason: str = "the file was missing",
) -> dict[str, Any]:
    revised: dict[str, Any] = {
        "reason": reason,
        "changes": [{"type": "modify_action", "details": "use another file"}],
        "updated_action_plan": {"execution_order": order, "actions": []},
    }
    if subtasks is not None:
        revised["updated_subtasks"] = subtasks
    return revised


def git_repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text("# demo\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run(["git", "add", "."], cwd=root, check=True)
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "commit",
            "-q",
            "-m",
            "init",
        ],
        cwd=root,
        check=True,
    )
    return root
