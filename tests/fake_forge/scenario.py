"""Building blocks for forge tests: scripted passes, payload variants, workspaces, configs."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from planner.ci.forges.base import TRACKING_MARKER
from planner.ci.job import run_for_event
from planner.ci.outcome import CiOutcome
from planner.cli.demo import demo_script
from planner.config import PlannerConfig, load_config
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import Step, reply_json
from tests.fake_forge.core import git
from tests.plans import (
    REFINEMENT_OFF,
    committed_repo,
    completion,
    evaluation_ok,
    finish,
    review_ok,
    write,
    write_files,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
WEBHOOKS = FIXTURES / "github" / "webhooks"
GITLAB = FIXTURES / "gitlab"


def github_payload(name: str) -> dict[str, Any]:
    """A real @octokit/webhooks-examples payload (deep copy, safe to edit)."""
    return copy.deepcopy(json.loads((WEBHOOKS / f"{name}.json").read_text(encoding="utf-8")))


def gitlab_payload(name: str) -> dict[str, Any]:
    return copy.deepcopy(json.loads((GITLAB / f"{name}.json").read_text(encoding="utf-8")))


def labeled_event(label: str = "planner", number: int = 1) -> dict[str, Any]:
    payload = github_payload("issues.labeled")
    payload["label"]["name"] = label
    payload["issue"]["number"] = number
    return payload


def comment_event(
    body: str, comment: dict[str, Any] | None = None, number: int = 1
) -> dict[str, Any]:
    """issue_comment.created with our body; `comment` (from the fake) supplies id and time."""
    payload = github_payload("issue_comment.created")
    payload["issue"]["number"] = number
    payload["comment"]["body"] = body
    if comment is not None:
        payload["comment"]["id"] = comment["id"]
        payload["comment"]["created_at"] = comment["created_at"]
    return payload


def clone(bare: Path, into: Path) -> Path:
    """A checkout of the default branch, as a CI job starts with (origin without credentials)."""
    git(bare.parent, "clone", "-q", str(bare), str(into))
    return into


def local_repository(root: Path, issue: str) -> Path:
    """A committed repository whose local forge holds issue 3 (`issue`: its markdown file,
    left untracked as a person writes it)."""
    committed_repo(root, {"README.md": "# repo\n"})
    return write_files(root, {".planner/issues/3.md": issue})


def run_local_issue(
    repo: Path, history: Path, steps: list[Step], instruction: str = "", **overrides: Any
) -> CiOutcome:
    """`planner run --issue 3` on the local forge of `repo`, against a scripted model whose
    steps must all be used."""
    with ScriptedModelServer(steps) as model:
        outcome = run_for_event(
            "local",
            workspace=repo,
            config=model_config(model.base_url, history, **overrides),
            env={},
            event={"issue": "3", "instruction": instruction, "actor": "me"},
        )
        model.assert_consumed()
    return outcome


def model_config(base_url: str, history: Path, **overrides: Any) -> PlannerConfig:
    env = {"OPENAI_API_KEY": "scripted", "OPENAI_BASE_URL": base_url, "OPENAI_MODEL": "scripted"}
    values = {
        "planning.history.directory": str(history),
        "llm.max_retries": 0,
        **REFINEMENT_OFF,
        **overrides,
    }
    return load_config(None, env=env, overrides=values)


def demo_script_unjudged() -> list[Step]:
    """The demo's conversation as the tests' default config asks it on the fake forges'
    repository: without the quality judge's replies (refinement is off in
    tests/plans.REFINEMENT_OFF; the demo itself runs the default config and tests/test_cli.py
    checks the judged version), and without the issue's test (that repository holds no Python
    tests, so no issue test is asked for)."""
    left_out = ("refinement_", "issue_test")
    return [step for step in demo_script() if not (step.kind or "").startswith(left_out)]


def one_file_plan(path: str, content: str, goal: str) -> list[Step]:
    """A whole pass: plan one task, write one file, finish, complete."""
    plan = {
        "phase": "planning",
        "goal_understanding": {
            "main_objective": goal,
            "success_criteria": [f"{path} exists"],
            "constraints": [],
            "context": "",
        },
        "task_decomposition": {
            "reasoning": "One file is enough.",
            "subtasks": [
                {
                    "id": "task_1",
                    "description": f"Write {path}",
                    "dependencies": [],
                    "estimated_complexity": "low",
                    "required_tools": ["write_file"],
                }
            ],
        },
        "action_plan": {
            "execution_order": ["task_1"],
            "actions": [
                {
                    "task_id": "task_1",
                    "action_type": "tool_call",
                    "tool": "write_file",
                    "purpose": f"create {path}",
                    "expected_outcome": f"{path} written",
                }
            ],
        },
        "comment": "Plan ready.",
    }
    return [
        reply_json("planning", plan),
        review_ok(),
        write(path, content),
        finish(summary=f"Wrote {path}."),
        evaluation_ok(),
        completion(outcomes=(f"{path} added",)),
    ]


def branch_log(bare: Path, branch: str, base: str = "main") -> list[str]:
    """Subjects of the commits on `branch` that `base` does not have, newest first."""
    out = git(bare, "log", "--format=%s", f"{base}..{branch}")
    return out.splitlines()


def commit_message(bare: Path, ref: str) -> str:
    return git(bare, "log", "-1", "--format=%B", ref)


def commit_author(bare: Path, ref: str) -> str:
    return git(bare, "log", "-1", "--format=%an <%ae>", ref)


def file_on(bare: Path, ref: str, path: str) -> str:
    return git(bare, "show", f"{ref}:{path}")


def tracking(fake: Any, number: int = 1) -> str:
    """The body of planner's one tracking comment on issue `number` of a fake forge."""
    [body] = [c.body for c in fake.comments_on(number) if TRACKING_MARKER in c.body]
    return str(body)
