"""`planner demo`: one real pass on a throwaway repository.

Without OPENAI_API_KEY the model is the scripted stand-in server (clearly labelled): the
conversation is canned, but everything else — HTTP, tool calls, history, checklist, the
repository's tests — is real. With OPENAI_API_KEY set, the same issue goes to the real model
(OPENAI_MODEL, OPENAI_BASE_URL).

The repository has a test, so the pass runs it before and after the change. Where planner's
own interpreter has pytest, the tests run with it and the model also writes the issue's own
test first (docs/verification.md): it fails before the change, passes after it and joins the
change; elsewhere the test runs with unittest.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sysconfig
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from planner.cli.describe import describe
from planner.config import PlannerConfig, load_config
from planner.outcome.evidence import VerificationNote
from planner.run.runner import PassSetup, run_pass
from planner.testing.scripted_server import (
    ScriptedModelServer,
    Step,
    reply_json,
    reply_text,
    reply_tool_calls,
)
from planner.text.issue import IssueContext

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

TEST = """import unittest

from greeter import greet


class GreetTest(unittest.TestCase):
    def test_greets_by_name(self):
        self.assertEqual(greet("Ada"), "Hello, Ada!")


if __name__ == "__main__":
    unittest.main()
"""
PYTEST_MARKER = "[pytest]\n"
"""pytest.ini: the repository's tests run with pytest (unittest tests, which pytest runs too)."""
WITHOUT_PYTEST = (
    "With pytest installed beside planner, the demo also has the model write the issue's own "
    "test first and runs it with the repository's."
)
ISSUE_TEST = """from pathlib import Path


def test_contributing_md_exists():
    assert Path("CONTRIBUTING.md").is_file()
"""
"""The issue's own test the scripted model writes: it fails before the change."""

BANNER = (
    "=" * 72 + "\n"
    "SCRIPTED MODEL: no LLM is involved. A local stand-in server replays a canned\n"
    "conversation; set OPENAI_API_KEY to send this issue to a real model instead.\n" + "=" * 72
)


def demo_script(issue_test: bool = False) -> list[Step]:
    """The scripted model's replies; `issue_test`: the repository's tests run with pytest, so the
    model is asked for the issue's own test right after the plan."""
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
    written = [reply_text("issue_test", f"```python\n{ISSUE_TEST}```")] if issue_test else []
    return [
        reply_json("planning", plan),
        *written,
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


PYTEST = "pytest -q"


def pytest_scripts() -> Path | None:
    """The folder of planner's own `pytest` command, when its interpreter has pytest (the
    issue's own test needs it); None: the tests run with unittest, which every Python has."""
    scripts = Path(sysconfig.get_path("scripts"))
    found = importlib.util.find_spec("pytest") is not None and (scripts / "pytest").is_file()
    return scripts if found else None


def pytest_command() -> str | None:
    """The demo's test command: `pytest -q` where pytest_scripts() has it, else None
    (detected: unittest)."""
    return PYTEST if pytest_scripts() is not None else None


@contextmanager
def pytest_on_path() -> Iterator[None]:
    """planner's `pytest` first on PATH while a pass runs (the tests' own virtual environment
    comes before it and has none)."""
    scripts, before = pytest_scripts(), os.environ.get("PATH", os.defpath)
    if scripts is None:
        yield
        return
    os.environ["PATH"] = f"{scripts}{os.pathsep}{before}"
    try:
        yield
    finally:
        os.environ["PATH"] = before


def demo_config(
    env: Mapping[str, str], pytest: str | None, overrides: Mapping[str, Any] | None = None
) -> PlannerConfig:
    """The default configuration, with the demo's test command when it runs pytest. Without
    pytest the scripted model is asked for no test of the issue (the demo says what pytest adds)."""
    tests = {"verification.command": pytest} if pytest else {"verification.issue_test": False}
    return load_config(None, env=env, overrides={**tests, **(overrides or {})})


def make_repository(root: Path, pytest: bool = False) -> None:
    """greeter: a README, the code and its test (a pytest project with `pytest`)."""
    (root / "README.md").write_text(README, encoding="utf-8")
    (root / "greeter.py").write_text(
        'def greet(name):\n    return f"Hello, {name}!"\n', encoding="utf-8"
    )
    (root / "test_greeter.py").write_text(TEST, encoding="utf-8")
    if pytest:
        (root / "pytest.ini").write_text(PYTEST_MARKER, encoding="utf-8")
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
    pytest = pytest_command()
    try:
        make_repository(root, pytest=pytest is not None)
        if os.environ.get("OPENAI_API_KEY"):
            print(f"Real model: {os.environ.get('OPENAI_MODEL', 'default model')}")
            config = demo_config(os.environ, pytest)
            with pytest_on_path():
                result = run_pass(PassSetup(config=config, workspace=root), ISSUE)
            return _show(root, result, keep)
        print(BANNER)
        with ScriptedModelServer(demo_script(issue_test=pytest is not None)) as server:
            env = {
                "OPENAI_API_KEY": "scripted",
                "OPENAI_BASE_URL": server.base_url,
                "OPENAI_MODEL": "scripted-demo",
            }
            # The scripted model's commands are the demo's own, so its tools run as this user:
            # a sandbox user may not reach planner's pytest (a Python under a closed folder).
            config = demo_config(env, pytest, {"tools.sandbox_user": "off"})
            with pytest_on_path():
                result = run_pass(PassSetup(config=config, workspace=root), ISSUE)
            server.assert_consumed()
        return _show(root, result, keep)
    finally:
        if keep:
            print(f"Repository kept at {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def _show(root: Path, result: object, keep: bool) -> int:
    from planner.outcome.result import PassResult

    assert isinstance(result, PassResult)
    print(f"Issue #{ISSUE.number}: {ISSUE.title}\n")
    print(_history_line(describe(result), keep))
    print("\n" + "\n".join(_tests(result.verification)))
    status = subprocess.run(
        ["git", "status", "--short"], cwd=root, capture_output=True, text=True
    ).stdout
    print("\nWorking tree changes:\n" + (status or "(none)"))
    contributing = root / "CONTRIBUTING.md"
    if contributing.exists():
        print("CONTRIBUTING.md:\n" + contributing.read_text(encoding="utf-8"))
    return 1 if result.status == "failed" else 0


def _tests(note: VerificationNote | None) -> list[str]:
    """The tests' line of the tracking comment, with what became of the issue's own test."""
    if note is None:
        return ["Tests: not run"]
    shown = [note.line(), *note.details()]
    return shown + ([] if "pytest" in note.command else [WITHOUT_PYTEST])


def _history_line(text: str, keep: bool) -> str:
    """The history lives in the temporary repository: without --keep it is deleted at exit,
    so its path would point at nothing."""
    if keep:
        return text
    gone = "History: deleted with the temporary repository (run `planner demo --keep` to keep it)"
    return "\n".join(gone if line.startswith("History: ") else line for line in text.splitlines())
