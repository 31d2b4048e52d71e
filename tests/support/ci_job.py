"""`python entrypoint.py` as a CI system starts it: the environment, the files, the results.

github_action_env() builds what the GitHub runner gives a Docker action: the GITHUB_* variables
and every INPUT_* of action.yml, filled with its defaults (`${{ github.token }}` becomes the
job's token) unless the workflow sets them. gitlab_job_env() builds a GitLab job of the
component: the CI_* variables, the masked CI/CD variables and the job's INPUT_* variables with
the component's `$[[ inputs.x ]]` interpolated. Nothing of the test process's environment leaks
in except PATH.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from planner.testing.scripted_server import DEFAULT_MODEL_ID, ScriptedModelServer
from planner.testing.steps import Step
from tests.fake_forge.github import FakeGitHub
from tests.fake_forge.gitlab import FakeGitLab
from tests.fake_forge.scenario import clone
from tests.plans import REFINEMENT_OFF_ENV

ROOT = Path(__file__).resolve().parent.parent.parent
ACTION = ROOT / "action.yml"
COMPONENT = ROOT / "templates" / "planner" / "template.yml"
ENTRYPOINT = ROOT / "entrypoint.py"
INTERPOLATION = re.compile(r"\$\[\[\s*inputs\.(\w+)\s*\]\]")


def base_env(home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    return {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8"}


# -- GitHub ------------------------------------------------------------------------------------


def action_inputs(token: str, **given: str) -> dict[str, str]:
    """INPUT_* for every input of action.yml, as the runner fills them."""
    action = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    unknown = set(given) - set(action["inputs"])
    assert not unknown, f"not inputs of action.yml: {unknown}"
    values: dict[str, str] = {}
    for name, spec in action["inputs"].items():
        default = str(spec.get("default", "")).replace("${{ github.token }}", token)
        values["INPUT_" + name.replace(" ", "_").upper()] = given.get(name, default)
    return values


def github_action_env(
    *,
    fake: Any,
    workspace: Path,
    files: Path,
    event_name: str,
    payload: dict[str, Any],
    run_id: int,
    **inputs: str,
) -> dict[str, str]:
    """The container environment of one step of a GitHub job."""
    files.mkdir(parents=True, exist_ok=True)
    event_path = files / "event.json"
    event_path.write_text(json.dumps(payload), encoding="utf-8")
    return {
        **base_env(files / "home"),
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_ACTION": "planner",
        "GITHUB_ACTOR": str(payload.get("sender", {}).get("login", "")),
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_REPOSITORY": fake.repository,
        "GITHUB_REPOSITORY_OWNER": fake.repository.split("/")[0],
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_API_URL": fake.api_url,
        "GITHUB_SERVER_URL": fake.base_url,
        "GITHUB_GRAPHQL_URL": f"{fake.base_url}/api/graphql",  # GHES: /api/graphql
        "GITHUB_RUN_ID": str(run_id),
        "GITHUB_RUN_NUMBER": "1",
        "GITHUB_RUN_ATTEMPT": "1",
        "GITHUB_REF": "refs/heads/main",
        "GITHUB_SHA": "0" * 40,
        "GITHUB_WORKFLOW": "planner",
        "GITHUB_WORKFLOW_REF": f"{fake.repository}/.github/workflows/planner.yml@refs/heads/main",
        "GITHUB_JOB": "plan",
        "GITHUB_OUTPUT": str(files / "set_output"),
        "GITHUB_STEP_SUMMARY": str(files / "step_summary"),
        "GITHUB_ENV": str(files / "set_env"),
        "GITHUB_PATH": str(files / "add_path"),
        "RUNNER_OS": "Linux",
        "RUNNER_TEMP": str(files / "runner_temp"),
        **action_inputs(fake.token, **inputs),
    }


def read_outputs(path: Path) -> dict[str, str]:
    """$GITHUB_OUTPUT as the runner reads it: NAME=VALUE lines and NAME<<DELIMITER blocks."""
    values: dict[str, str] = {}
    lines = iter(path.read_text(encoding="utf-8").splitlines())
    for line in lines:
        if "<<" in line:
            name, delimiter = line.split("<<", 1)
            block: list[str] = []
            for inner in lines:
                if inner == delimiter:
                    break
                block.append(inner)
            else:
                raise AssertionError(f"{name}: delimiter {delimiter} never closed")
            values[name] = "\n".join(block)
        elif "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
    return values


# -- GitLab ------------------------------------------------------------------------------------


def component_variables(**given: str) -> dict[str, str]:
    """The planner job's `variables:` with the component's inputs interpolated."""
    spec, jobs = yaml.safe_load_all(COMPONENT.read_text(encoding="utf-8"))
    declared = spec["spec"]["inputs"]
    unknown = set(given) - set(declared)
    assert not unknown, f"not inputs of the component: {unknown}"
    values = {name: str(declared[name].get("default", "")) for name in declared}
    values.update(given)
    variables = jobs["planner"]["variables"]
    return {k: INTERPOLATION.sub(lambda m: values[m[1]], str(v)) for k, v in variables.items()}


def gitlab_job_env(
    *,
    fake: Any,
    workspace: Path,
    files: Path,
    job_id: int,
    payload: dict[str, Any] | None,
    openai_api_key: str,
    **inputs: str,
) -> dict[str, str]:
    """The environment of the component's job in a triggered pipeline."""
    files.mkdir(parents=True, exist_ok=True)
    env = {
        **base_env(files / "home"),
        "CI": "true",
        "GITLAB_CI": "true",
        "CI_JOB_ID": str(job_id),
        "CI_JOB_NAME": "planner",
        "CI_JOB_STAGE": "test",
        "CI_PIPELINE_ID": str(job_id - 4000),
        "CI_PIPELINE_SOURCE": "trigger",
        "CI_PIPELINE_URL": f"{fake.base_url}/{fake.repository}/-/pipelines/{job_id - 4000}",
        "CI_PROJECT_DIR": str(workspace),
        "CI_PROJECT_ID": str(fake.project_id),
        "CI_PROJECT_PATH": fake.repository,
        "CI_PROJECT_URL": f"{fake.base_url}/{fake.repository}",
        "CI_API_V4_URL": fake.api_url,
        "CI_SERVER_URL": fake.base_url,
        "CI_SERVER_HOST": "127.0.0.1",
        "CI_COMMIT_REF_NAME": "main",
        "CI_DEFAULT_BRANCH": "main",
        "GITLAB_USER_LOGIN": "dana",
        "GITLAB_TOKEN": fake.token,
        "OPENAI_API_KEY": openai_api_key,
        **component_variables(**inputs),
    }
    if payload is not None:
        path = files / "TRIGGER_PAYLOAD"  # a file variable: the variable holds the file's path
        path.write_text(json.dumps(payload), encoding="utf-8")
        env["TRIGGER_PAYLOAD"] = str(path)
    return env


def read_dotenv(path: Path) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in path.read_text(encoding="utf-8").splitlines() if line)
    return {name: value for name, value in pairs}


# -- running -----------------------------------------------------------------------------------


@dataclass
class Finished:
    returncode: int
    stdout: str
    stderr: str

    @property
    def lines(self) -> list[str]:
        """Lines as the log has them (a GitLab section marker holds a carriage return)."""
        return self.stdout.removesuffix("\n").split("\n") if self.stdout else []

    def log_lines(self) -> list[str]:
        """What a person sees in the log: every line but the mask commands."""
        return [line for line in self.lines if not line.startswith("::add-mask::")]


def run_entrypoint(env: dict[str, str], workspace: Path) -> Finished:
    """`python entrypoint.py` in the workspace, as the image's ENTRYPOINT runs it."""
    done = subprocess.run(
        [sys.executable, str(ENTRYPOINT)], cwd=workspace, env=env, capture_output=True, timeout=120
    )
    # Bytes, decoded by hand: text mode would turn the carriage returns of GitLab's section
    # markers into line breaks.
    return Finished(done.returncode, done.stdout.decode(), done.stderr.decode())


def zip_directory(directory: Path, prefix: str = "") -> bytes:
    """The files under `directory` as a zip, names relative to it (with `prefix` in front)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(directory.rglob("*")):
            if path.is_file():
                archive.write(path, prefix + path.relative_to(directory).as_posix())
    return buffer.getvalue()


SCRIPTED_API_KEY = "sk-scriptedTestKey0123456789abcdef"
"""The model API key the CI tests give planner (a secret to find nowhere it is posted)."""


class GitLabPipelines:
    """planner's job (entrypoint.py, as the component runs it) on the fake GitLab, each on a
    runner without cache: a fresh clone and nothing else."""

    def __init__(self, fake: FakeGitLab, tmp: Path) -> None:
        self.fake = fake
        self.tmp = tmp
        self.count = 0
        self.kinds: list[str | None] = []
        """The kinds of the model requests of the last job."""

    def job(
        self, payload: dict[str, Any] | None, script: list[Step], **inputs: str
    ) -> tuple[Finished, Path]:
        """One job; its script must be used up and it writes nothing to stderr."""
        self.count += 1
        workspace = clone(self.fake.bare, self.tmp / f"builds-{self.count}")
        with ScriptedModelServer(script) as model:
            env = gitlab_job_env(
                fake=self.fake,
                workspace=workspace,
                files=self.tmp / f"job-{self.count}",
                job_id=6000 + self.count,
                payload=payload,
                openai_api_key=SCRIPTED_API_KEY,
                **{"openai_base_url": model.base_url, "model": "scripted", **inputs},
            )
            finished = run_entrypoint({**env, **REFINEMENT_OFF_ENV}, workspace)
            self.kinds = [request.kind for request in model.requests]
            assert finished.stderr == "", finished.stderr
            model.assert_consumed()
        return finished, workspace


HISTORY_DIR = "planning_history"
"""The history folder the example workflow keeps inside the checkout."""


class GitHubWorkflow:
    """Runs of planner's action (entrypoint.py, as action.yml runs it) on the fake GitHub: each
    job gets its own runner files directory and, unless given one, a fresh clone."""

    first_run_id = 7000

    def __init__(self, fake: FakeGitHub, tmp: Path) -> None:
        self.fake = fake
        self.tmp = tmp
        self.count = 0
        self.kinds: list[str | None] = []
        """The kinds of the model requests of the last job (`bodies`, `headers`: the same)."""
        self.bodies: list[Any] = []
        self.headers: list[Any] = []

    def job(
        self,
        event_name: str,
        payload: dict[str, Any],
        script: list[Step],
        *,
        workspace: Path | None = None,
        served: str = DEFAULT_MODEL_ID,
        **inputs: str,
    ) -> tuple[Finished, Path, Path]:
        """(the finished process, its workspace, its runner files directory); `served`: the
        model the stand-in endpoint lists. The script must be used up; nothing on stderr."""
        self.count += 1
        workspace = workspace or clone(self.fake.bare, self.tmp / f"workspace-{self.count}")
        files = self.tmp / f"runner-{self.count}"
        with ScriptedModelServer(script, model=served) as model:
            defaults = {
                "openai_api_key": SCRIPTED_API_KEY,
                "openai_base_url": model.base_url,
                "model": "scripted",
                "history_dir": HISTORY_DIR,
            }
            env = github_action_env(
                fake=self.fake,
                workspace=workspace,
                files=files,
                event_name=event_name,
                payload=payload,
                run_id=self.first_run_id + self.count,
                **{**defaults, **inputs},
            )
            finished = run_entrypoint({**env, **REFINEMENT_OFF_ENV}, workspace)
            self.kinds = [request.kind for request in model.requests]
            self.bodies = [request.body for request in model.requests]
            self.headers = [request.headers for request in model.requests]
            assert finished.stderr == "", finished.stderr
            model.assert_consumed()
        return finished, workspace, files
