"""`planner demo`: one real pass on a throwaway repository.

Without OPENAI_API_KEY the model is the scripted stand-in server (clearly labelled): the
conversation is canned, but everything else — HTTP, tool calls, history, checklist, the
repository's tests — is real. With OPENAI_API_KEY set, the same issue goes to the real model
(OPENAI_MODEL, OPENAI_BASE_URL).

The repository has a test and says it runs with pytest (pytest.ini), so the pass runs it before
and after the change, and the model writes the issue's own test first (docs/verification.md): it
fails before the change, passes after it and joins the change. The same whatever is installed:
where planner's own interpreter has pytest, the tests use it; elsewhere planner installs pytest
into the tests' own environment, as it does for any repository (pip, with the user's pip
configuration: an index or a folder of wheels).
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
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import Step, reply_json, reply_text, reply_tool_calls
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


def demo_script() -> list[Step]:
    """The scripted model's replies; the issue's own test is asked for right after the plan."""
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
                    "id": "read_readme",
                    "description": "Read the README to find the test command",
                    "dependencies": [],
                    "estimated_complexity": "low",
                    "required_tools": ["read_file"],
                },
                {
                    "id": "write_guide",
                    "description": "Write CONTRIBUTING.md with the test command",
                    "dependencies": ["read_readme"],
                    "estimated_complexity": "low",
                    "required_tools": ["write_file"],
                },
            ],
        },
        "action_plan": {
            "execution_order": ["read_readme", "write_guide"],
            "actions": [
                {
                    "task_id": "read_readme",
                    "action_type": "tool_call",
                    "tool": "read_file",
                    "purpose": "find the test command",
                    "expected_outcome": "README text",
                },
                {
                    "task_id": "write_guide",
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
        reply_text("issue_test", f"```python\n{ISSUE_TEST}```"),
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
"""The demo's test command: planner's own pytest when its interpreter has one, else the one
verification installs into the tests' environment (which comes first on their PATH)."""


def pytest_scripts() -> Path | None:
    """The folder of planner's own `pytest` command, when its interpreter has pytest; None:
    verification installs pytest for the tests."""
    scripts = Path(sysconfig.get_path("scripts"))
    found = importlib.util.find_spec("pytest") is not None and (scripts / "pytest").is_file()
    return scripts if found else None


@contextmanager
def pytest_on_path() -> Iterator[None]:
    """planner's `pytest` first on PATH while a pass runs, when it has one (the tests' own
    virtual environment comes before it and has none): nothing to install then."""
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
    env: Mapping[str, str], overrides: Mapping[str, Any] | None = None
) -> PlannerConfig:
    """The default configuration with the demo's test command."""
    return load_config(
        None, env=env, overrides={"verification.command": PYTEST, **(overrides or {})}
    )


def make_repository(root: Path) -> None:
    """greeter: a README, the code and its test, run with pytest."""
    (root / "README.md").write_text(README, encoding="utf-8")
    (root / "greeter.py").write_text(
        'def greet(name):\n    return f"Hello, {name}!"\n', encoding="utf-8"
    )
    (root / "test_greeter.py").write_text(TEST, encoding="utf-8")
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
    try:
        make_repository(root)
        if os.environ.get("OPENAI_API_KEY"):
            print(f"Real model: {os.environ.get('OPENAI_MODEL', 'default model')}")
            config = demo_config(os.environ)
            with pytest_on_path():
                result = run_pass(PassSetup(config=config, workspace=root), ISSUE)
            return _show(root, result, keep)
        print(BANNER)
        with ScriptedModelServer(demo_script()) as server:
            env = {
                "OPENAI_API_KEY": "scripted",
                "OPENAI_BASE_URL": server.base_url,
                "OPENAI_MODEL": "scripted-demo",
            }
            # The scripted model's commands are the demo's own, so its tools run as this user:
            # a sandbox user may not reach planner's pytest (a Python under a closed folder).
            config = demo_config(env, {"tools.sandbox_user": "off"})
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
    return [note.line(), *note.details()]


def _history_line(text: str, keep: bool) -> str:
    """The history lives in the temporary repository: without --keep it is deleted at exit,
    so its path would point at nothing."""
    if keep:
        return text
    gone = "History: deleted with the temporary repository (run `planner demo --keep` to keep it)"
    return "\n".join(gone if line.startswith("History: ") else line for line in text.splitlines())
