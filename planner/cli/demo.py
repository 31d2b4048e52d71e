"""`planner demo`: one real pass on a throwaway repository.

Without OPENAI_API_KEY the model is the scripted stand-in server (clearly labelled): the
conversation is canned, but everything else — HTTP, tool calls, history, checklist — is real.
With OPENAI_API_KEY set, the same issue goes to the real model (OPENAI_MODEL, OPENAI_BASE_URL).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from planner.cli.describe import describe
from planner.engine.config import load_config
from planner.engine.issue import IssueContext
from planner.run.runner import PassSetup, run_pass
from planner.testing.scripted_server import ScriptedModelServer, Step, reply_json, reply_tool_calls

ISSUE = IssueContext(
    repository="demo/greeter",
    number="1",
    title="Add a CONTRIBUTING.md",
    body="New contributors do not know how to run the tests. Please add a CONTRIBUTING.md that "
    "explains it, based on what the README says.",
    author="maintainer",
)

README = (
    "# greeter\n\nSays hello.\n\n## Tests\n\nRun `python -m unittest` from the repository root.\n"
)
CONTRIBUTING = (
    "# Contributing to greeter\n\nThanks for helping!\n\n## Running the tests\n\n"
    "From the repository root run:\n\n    python -m unittest\n"
)

BANNER = (
    "=" * 72 + "\n"
    "SCRIPTED MODEL: no LLM is involved. A local stand-in server replays a canned\n"
    "conversation; set OPENAI_API_KEY to send this issue to a real model instead.\n" + "=" * 72
)


SCRIPTED_OVERRIDES = {"verification.issue_test": False}
"""The scripted demo writes documentation: no test of the issue is asked for."""


def demo_script() -> list[Step]:
    plan = {
        "phase": "planning",
        "goal_understanding": {
            "main_objective": "Document how to run the tests in a new CONTRIBUTING.md",
            "success_criteria": [
                "CONTRIBUTING.md exists",
                "it gives the test command from the README",
            ],
            "constraints": ["do not change code"],
            "context": "The README mentions the test command.",
        },
        "task_decomposition": {
            "reasoning": "First learn the test command from the README, then write the guide.",
            "subtasks": [
                {
                    "id": "task_1",
                    "description": "Read the README to find the test command",
                    "dependencies": [],
                    "estimated_complexity": "low",
                    "required_tools": ["read_file"],
                },
                {
                    "id": "task_2",
                    "description": "Write CONTRIBUTING.md with the test instructions",
                    "dependencies": ["task_1"],
                    "estimated_complexity": "low",
                    "required_tools": ["write_file"],
                },
            ],
        },
        "action_plan": {
            "execution_order": ["task_1", "task_2"],
            "actions": [
                {
                    "task_id": "task_1",
                    "action_type": "tool_call",
                    "tool": "read_file",
                    "purpose": "find the test command",
                    "expected_outcome": "README text",
                },
                {
                    "task_id": "task_2",
                    "action_type": "tool_call",
                    "tool": "write_file",
                    "purpose": "create the guide",
                    "expected_outcome": "CONTRIBUTING.md written",
                },
            ],
        },
        "comment": "Plan completed. Starting execution.",
    }
    done = {
        "phase": "completion",
        "done": True,
        "comment": "All tasks completed",
        "summary": {
            "goal_achieved": True,
            "tasks_completed": 2,
            "tasks_failed": 0,
            "key_outcomes": ["CONTRIBUTING.md explains `python -m unittest`"],
        },
    }
    fine = {"replan_needed": False, "confidence": 0.9, "reasoning": "The plan is sound."}
    return [
        reply_json("planning", plan),
        reply_json(
            "replan_review",
            {"goal_understanding": fine, "task_decomposition": fine, "action_sequence": fine},
        ),
        reply_json(
            "refinement_judge_plan",
            {
                "score": 86,
                "is_acceptable": True,
                "issues": [],
                "suggestions": ["Mention where new tests go."],
            },
        ),
        reply_tool_calls("execute", [("read_file", {"path": "README.md"})]),
        reply_tool_calls(
            "execute",
            [
                (
                    "finish_task",
                    {"status": "completed", "summary": "The tests run with python -m unittest."},
                )
            ],
        ),
        reply_tool_calls(
            "execute", [("write_file", {"path": "CONTRIBUTING.md", "content": CONTRIBUTING})]
        ),
        reply_tool_calls(
            "execute",
            [("finish_task", {"status": "completed", "summary": "Wrote CONTRIBUTING.md."})],
        ),
        reply_json(
            "replan_reflection",
            {"replan_decision": {**fine, "evaluation_result": "success", "achievement_rate": 100}},
        ),
        reply_json(
            "refinement_judge_result",
            {
                "score": 90,
                "is_acceptable": True,
                "issues": [],
                "suggestions": ["Link CONTRIBUTING.md from the README."],
            },
        ),
        reply_json("completion", done),
    ]


def make_repository(root: Path) -> None:
    (root / "README.md").write_text(README, encoding="utf-8")
    (root / "greeter.py").write_text(
        'def greet(name):\n    return f"Hello, {name}!"\n', encoding="utf-8"
    )
    for command in (
        ["init", "-q", "-b", "main"],
        ["add", "."],
        [
            "-c",
            "user.name=demo",
            "-c",
            "user.email=demo@example.invalid",
            "commit",
            "-q",
            "-m",
            "Initial commit",
        ],
    ):
        subprocess.run(["git", *command], cwd=root, check=True)


def run_demo(keep: bool = False) -> int:
    root = Path(tempfile.mkdtemp(prefix="planner-demo-"))
    try:
        make_repository(root)
        if os.environ.get("OPENAI_API_KEY"):
            print(f"Real model: {os.environ.get('OPENAI_MODEL', 'default model')}")
            return _show(
                root,
                run_pass(
                    PassSetup(config=load_config(None, env=os.environ), workspace=root), ISSUE
                ),
                keep,
            )
        print(BANNER)
        with ScriptedModelServer(demo_script()) as server:
            env = {
                "OPENAI_API_KEY": "scripted",
                "OPENAI_BASE_URL": server.base_url,
                "OPENAI_MODEL": "scripted-demo",
            }
            # The scripted model answers the plan, not a test of the issue (its own demo).
            config = load_config(None, env=env, overrides=SCRIPTED_OVERRIDES)
            result = run_pass(PassSetup(config=config, workspace=root), ISSUE)
            server.assert_consumed()
        return _show(root, result, keep)
    finally:
        if keep:
            print(f"Repository kept at {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def _show(root: Path, result: object, keep: bool) -> int:
    from planner.engine.result import PassResult

    assert isinstance(result, PassResult)
    print(f"Issue #{ISSUE.number}: {ISSUE.title}\n")
    print(_history_line(describe(result), keep))
    status = subprocess.run(
        ["git", "status", "--short"], cwd=root, capture_output=True, text=True
    ).stdout
    print("\nWorking tree changes:\n" + (status or "(none)"))
    contributing = root / "CONTRIBUTING.md"
    if contributing.exists():
        print("CONTRIBUTING.md:\n" + contributing.read_text(encoding="utf-8"))
    return 1 if result.status == "failed" else 0


def _history_line(text: str, keep: bool) -> str:
    """The history lives in the temporary repository: without --keep it is deleted at exit,
    so its path would point at nothing."""
    if keep:
        return text
    gone = "History: deleted with the temporary repository (run `planner demo --keep` to keep it)"
    return "\n".join(gone if line.startswith("History: ") else line for line in text.splitlines())
