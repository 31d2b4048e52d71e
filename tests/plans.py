"""Builders for scripted model conversations used across tests."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from planner.testing.steps import Step, reply_json, reply_tool_calls

REFINEMENT_OFF: dict[str, Any] = {"planning.refinement.enabled": False}
"""The default test config: refinement (issue 11) adds a quality-judge call after every plan,
and the scripted conversations written before it have no judge replies. Refinement's own tests
(test_refinement_*.py) turn it on; everything else keeps the conversations it asserts."""
REFINEMENT_OFF_ENV = {"REFINEMENT_ENABLED": "false"}
"""The same for tests that configure a subprocess through its environment."""
ROOT_TOOLS: dict[str, Any] = {"tools.sandbox_user": "off"}
"""For tests whose tools use what only root may reach (the test's own interpreter, whose checkout
may lie in a mode-700 directory; files the test keeps outside the workspace; planner's saved
copies; `.git`): tools run as planner's user. Run as root, planner otherwise starts them as the
sandbox user wherever the workspace is."""


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


def wrote(*paths: str) -> list[Step]:
    """One task after another, each writing its file (`hello`) and finishing."""
    return [step for path in paths for step in (write(path), finish())]


def completion(
    done: bool = True, completed: int = 1, outcomes: tuple[str, ...] = ("files written",)
) -> Step:
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
                "key_outcomes": list(outcomes),
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


CHECKOUT = Path(__file__).resolve().parent.parent
"""This checkout of planner."""


def copy_checkout(into: Path) -> Path:
    """This working tree's files as they are: the tracked ones and the new ones git does not
    ignore (what a clone of it with the change committed would hold)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=CHECKOUT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        if (CHECKOUT / name).is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(CHECKOUT / name, into / name)
    return into


def write_files(root: Path, contents: dict[str, str]) -> Path:
    """Write each relative path's text under `root` (folders made as needed)."""
    for name, text in contents.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def committed_repo(root: Path, contents: dict[str, str]) -> Path:
    """A git repository on `main` whose one commit holds `contents`."""
    return init_repo(write_files(root, contents))


def init_repo(root: Path) -> Path:
    """Make the folder a git repository on `main` whose one commit holds what it has."""
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    commit_all(root, "init")
    return root


def git_repo(root: Path) -> Path:
    return committed_repo(root, {"README.md": "# demo\n"})


def commit_all(root: Path, message: str = "files") -> None:
    """Commit the working tree: what the repository has before planner changes it."""
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", *identity, "commit", "-q", "-m", message], cwd=root, check=True)


# -- replanning decisions (replanning.md §2.4) ---------------------------------------------------


def decision(
    needed: bool = False, confidence: float = 0.9, reasoning: str = "looks fine", **fields: Any
) -> dict[str, Any]:
    """One replan decision object; extra fields (replan_type, replan_level, ...) pass through."""
    return {"replan_needed": needed, "confidence": confidence, "reasoning": reasoning, **fields}


def review(**phases: dict[str, Any]) -> Step:
    """The combined planning review; phases not given are judged fine."""
    document = {
        phase: phases.get(phase, decision())
        for phase in ("goal_understanding", "task_decomposition", "action_sequence")
    }
    return reply_json("replan_review", document)


def review_only(**phases: dict[str, Any]) -> Step:
    """A review covering only the phases given (after a level 3/4 replan)."""
    return reply_json("replan_review", phases)


def review_ok() -> Step:
    return review()


def execution_decision(needed: bool = False, **fields: Any) -> Step:
    return reply_json("replan_execution", {"replan_decision": decision(needed, **fields)})


def evaluation(needed: bool = False, **fields: Any) -> Step:
    """The §8 final-evaluation decision (before the completion call)."""
    fields.setdefault("evaluation_result", "failure" if needed else "success")
    return reply_json("replan_reflection", {"replan_decision": decision(needed, **fields)})


def evaluation_ok() -> Step:
    return evaluation()


def planned(*task_ids: str, **kwargs: Any) -> list[Step]:
    """The planning reply and its (approving) review: the start of every default pass."""
    return [planning(*task_ids, **kwargs), review_ok()]


def completed(done: bool = True, completed: int = 1) -> list[Step]:
    """The final evaluation (no revision) and the completion reply: the end of a pass."""
    return [evaluation_ok(), completion(done=done, completed=completed)]


def revise_reply(order: list[str], subtasks: list[dict[str, Any]] | None = None) -> Step:
    """The level-2 replacement (a plan revision of the remaining work)."""
    return reply_json("replan_revise", revision(order, subtasks, reason="route around the error"))


def actions_reply(*task_ids: str, tool: str = "write_file") -> Step:
    """The level-3 replacement: a new action plan for the same subtasks."""
    actions = [{"task_id": t, "tool": tool, "purpose": f"again {t}"} for t in task_ids]
    return reply_json(
        "replan_actions",
        {"action_plan": {"execution_order": list(task_ids), "actions": actions}, "comment": "ok"},
    )


def tasks_reply(*task_ids: str) -> Step:
    """The level-4 replacement: subtasks decomposed again with their action plan."""
    document = plan_doc(*task_ids)
    return reply_json(
        "replan_tasks",
        {
            "task_decomposition": document["task_decomposition"],
            "action_plan": document["action_plan"],
        },
    )


def goal_reply(*task_ids: str) -> Step:
    """The level-5 replacement: a whole new plan."""
    return reply_json("replan_goal", plan_doc(*task_ids))


def partial_replan_steps() -> list[Step]:
    """A whole pass: an action fails, the model decides a level-2 partial replan, the revised
    plan runs to completion (the issue-6 end-to-end scenario)."""
    return [
        *planned("task_1", "task_2"),
        write("a.txt"),
        finish(),
        write("../outside.txt"),  # refused by path confinement: a failed action
        execution_decision(
            True,
            confidence=0.9,
            replan_type="partial_replan",
            replan_level=2,
            reasoning="the path is outside the workspace; write inside it instead",
            issues_found=["task_2 writes outside the workspace"],
            recommended_actions=["write docs/b.txt instead"],
            error_classification="persistent",
        ),
        revise_reply(["task_1", "task_2b"], [subtask("task_1"), subtask("task_2b", "task_1")]),
        write("b.txt"),  # the third action: the periodic checkpoint (trigger_interval 3)
        execution_decision(False, reasoning="on track"),
        finish(),
        *completed(completed=2),
    ]


# -- refinement (task-refinement.md) ---------------------------------------------------------------

REFINEMENT_ON: dict[str, Any] = {"planning.refinement.enabled": True}


def judgement(
    score: int | None, ok: bool, issues: tuple[str, ...] = (), suggestions: tuple[str, ...] = ()
) -> dict[str, Any]:
    return {
        "score": score,
        "is_acceptable": ok,
        "issues": list(issues),
        "suggestions": list(suggestions),
    }


def judge_plan(
    score: int | None, ok: bool, *issues: str, suggestions: tuple[str, ...] = ()
) -> Step:
    """The quality judge on a plan."""
    return reply_json("refinement_judge_plan", judgement(score, ok, issues, suggestions))


def judge_result(
    score: int | None, ok: bool, *issues: str, suggestions: tuple[str, ...] = ()
) -> Step:
    """The quality judge on the finished work."""
    return reply_json("refinement_judge_result", judgement(score, ok, issues, suggestions))


def refined(*task_ids: str, **kwargs: Any) -> Step:
    """The planning call again, with the judge's feedback: a whole new plan."""
    return reply_json("refinement_replan", plan_doc(*task_ids, **kwargs))


def follow_up(*tasks: dict[str, Any]) -> Step:
    """New tasks for the judge's findings on the finished work."""
    actions = [{"task_id": t["id"], "tool": "write_file", "purpose": "fix"} for t in tasks]
    return reply_json(
        "refinement_follow_up", {"subtasks": list(tasks), "actions": actions, "comment": "added"}
    )
