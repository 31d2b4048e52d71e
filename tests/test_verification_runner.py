"""planner on the runner itself, after the workflow's own setup steps (issue 23): the installed
`planner action` command handles the event with the toolchain those steps put on PATH, and a
toolchain that is missing gets a clear line instead of a pretended verification.

The toolchain is a real program (`calc-test`, which runs pytest) in a directory that only the
"setup step" adds to PATH; the job is the installed CLI in a subprocess with the runner's
variables, against the fake GitHub and the scripted model.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from planner.ci.inputs import INPUT_NAMES
from planner.config import ENV_KEYS
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_tool_calls
from tests.fake_forge import FakeGitHub
from tests.fake_forge.core import git
from tests.fake_forge.scenario import clone, github_payload
from tests.plans import REFINEMENT_OFF_ENV, completion, finish, planning
from tests.support.ci_job import github_action_env
from tests.test_verification_ci import push_calc_project
from tests.test_verification_pass import GOOD

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "github" / "planner-on-runner.yml"
PLANNER = Path(sys.executable).with_name("planner")
QUIET = {"PLANNING_ENABLED": "true", "REPLANNING_ENABLED": "false", "REFLECTION_ENABLED": "false"}


def test_the_example_runs_the_installed_planner_after_the_projects_setup() -> None:
    steps = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))["jobs"]["plan"]["steps"]
    names = [step["name"] for step in steps]
    [planner] = [step for step in steps if step.get("id") == "planner"]
    position = steps.index(planner)
    assert names.index("Install the dependencies") < position
    assert names.index("Install planner") < position
    assert shlex.split(planner["run"])[-1] == "action"
    inputs = {name.removeprefix("INPUT_").lower() for name in planner["env"] if "INPUT_" in name}
    assert inputs <= set(INPUT_NAMES)
    others = {name for name in planner["env"] if not name.startswith("INPUT_")}
    assert others <= set(ENV_KEYS)
    install = next(step for step in steps if step["name"] == "Install planner")
    assert "-m venv" in install["run"]  # planner's packages stay apart from the project's


@pytest.fixture
def fake(fake_github: FakeGitHub) -> FakeGitHub:
    fake_github.add_issue(
        1, "sub adds", "calc.sub adds instead of subtracting.", labels=["planner"]
    )
    fake_github.permissions["Codertocat"] = "write"
    push_calc_project(fake_github)
    return fake_github


def toolchain(tmp_path: Path) -> Path:
    """What the workflow's setup step installs: a test runner only found through PATH."""
    bin_dir = tmp_path / "toolchain" / "bin"
    bin_dir.mkdir(parents=True)
    runner = bin_dir / "calc-test"
    runner.write_text(
        f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider\n",
        encoding="utf-8",
    )
    runner.chmod(0o755)
    return bin_dir


def run_tools_as_root(workspace: Path, bare: Path) -> None:
    """The toolchain runs the test's own interpreter, which only root reaches (under /root, say):
    the repository's config turns the sandbox user off."""
    config = workspace / ".github" / "planner.yml"
    config.parent.mkdir(parents=True, exist_ok=True)
    # The issue's own test asks the model once more: tests/test_issue_test.py
    settings = "tools:\n  sandbox_user: 'off'\nverification:\n  issue_test: false\n"
    config.write_text(settings, encoding="utf-8")
    identity = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@x"}  # fmt: skip
    git(workspace, "add", ".github/planner.yml")
    git(workspace, "commit", "-q", "-m", "planner config", env=identity)
    git(workspace, "push", "-q", str(bare), "HEAD:main")


def run_job(fake: FakeGitHub, tmp_path: Path, path: str) -> tuple[Any, str]:
    workspace = clone(fake.bare, tmp_path / "workspace")
    run_tools_as_root(workspace, fake.bare)
    payload = github_payload("issues.labeled")
    payload["label"]["name"] = "planner"
    payload["issue"]["number"] = 1
    payload["repository"]["full_name"] = fake.repository
    write = reply_tool_calls("execute", [("write_file", {"path": "calc.py", "content": GOOD})])
    with ScriptedModelServer([planning("task_1"), write, finish(), completion()]) as model:
        env = github_action_env(
            fake=fake,
            workspace=workspace,
            files=tmp_path / "files",
            event_name="issues",
            payload=payload,
            run_id=9001,
            openai_api_key="sk-scripted",
            openai_base_url=model.base_url,
            model="scripted",
            verification_command="calc-test",
        )
        env = {**env, **REFINEMENT_OFF_ENV, **QUIET, "PATH": path}
        done = subprocess.run(
            [str(PLANNER), "action"], cwd=workspace, env=env, capture_output=True, timeout=300
        )
        assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
        model.assert_consumed()
    [pull] = fake.pulls.values()
    summary = (tmp_path / "files" / "step_summary").read_text(encoding="utf-8")
    return pull, summary


def test_the_tests_run_with_the_toolchain_the_setup_steps_installed(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    path = f"{toolchain(tmp_path)}{os.pathsep}{os.environ['PATH']}"
    pull, summary = run_job(fake, tmp_path, path)

    line = "Tests (`calc-test`): 2 passed, 0 failed — 1 failing before"
    assert line in pull.body
    assert line in summary


def test_a_missing_toolchain_says_why_the_tests_did_not_run(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    pull, summary = run_job(fake, tmp_path, os.environ["PATH"])

    line = "Tests: not run — `calc-test` is not installed where planner runs"
    assert line in pull.body
    assert line in summary
    assert "docs/verification.md" in pull.body
