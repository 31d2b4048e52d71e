"""Jobs of the real entry point that can be killed, signalled or raced (issue 15 tests).

`CiJobs` starts `python entrypoint.py` as a GitHub runner or a GitLab job would, on a fresh
clone of the fake forge's repository, with the scripted model. The history directory is
carried from job to job like a cache (copied back even after a kill, as an `if: always()`
save step does after a cancellation). `hooks` run inside the scripted model server when the
request with that index arrives, before it is answered: they kill the job, push a commit as
a person would, or send a signal, at an exact point of the pass.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from planner.ci.forges.base import TRACKING_MARKER
from planner.memory.history import read_entries, task_uuid
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import Step, reply_json
from tests.fake_forge.scenario import clone, comment_event, github_payload, gitlab_payload
from tests.plans import completion, finish, write
from tests.support.ci_job import (
    ENTRYPOINT,
    HISTORY_DIR,
    SCRIPTED_API_KEY,
    Finished,
    github_action_env,
    gitlab_job_env,
)

API_KEY = SCRIPTED_API_KEY
QUIET = {
    "REPLANNING_ENABLED": "false",
    "REFLECTION_ENABLED": "false",
    "REFINEMENT_ENABLED": "false",
}
"""Fewer model calls per pass: each request of a script is then a phase boundary of its own."""

Hook = Callable[[subprocess.Popen[bytes]], None]


def kill(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the job and wait until it is gone (the request it made is never answered)."""
    process.send_signal(signal.SIGKILL)
    process.wait()


class CiJobs:
    def __init__(self, platform: str, fake: Any, tmp: Path, number: int) -> None:
        self.platform = platform
        self.fake = fake
        self.tmp = tmp
        self.number = number
        self.count = 0
        self.cache = tmp / "history-cache"
        self.kinds: list[str | None] = []
        self.workspace = tmp
        self.duration = 0.0
        """Seconds from the job's start to its exit."""

    def run(
        self,
        payload: dict[str, Any] | None,
        script: Sequence[Step],
        *,
        hooks: dict[int, Hook] | None = None,
        started: Hook | None = None,
        env: dict[str, str] | None = None,
        cache: bool = True,
        event_name: str = "",
        timeout: float = 110,
        **inputs: str,
    ) -> Finished:
        """One job; `hooks[i]` runs when request i arrives, `started` once the job's process
        exists. The script must be used up.
        `payload` None: a GitLab pipeline without TRIGGER_PAYLOAD (its `env` says what it is);
        `event_name`: the GitHub event when it is not an issue label or a comment."""
        self.count += 1
        workspace = self.workspace = clone(self.fake.bare, self.tmp / f"ws-{self.count}")
        if cache and self.cache.exists():
            shutil.copytree(self.cache, workspace / HISTORY_DIR)
        holder: dict[str, subprocess.Popen[bytes]] = {}
        steps = [
            _hooked(step, hooks.get(i), holder) if hooks else step for i, step in enumerate(script)
        ]
        with ScriptedModelServer(steps) as model:
            job_env = {
                **self._env(workspace, payload, model.base_url, inputs, event_name),
                **(env or {}),
            }
            process = subprocess.Popen(
                [sys.executable, str(ENTRYPOINT)],
                cwd=workspace,
                env=job_env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            holder["process"] = process
            if started is not None:
                started(process)
            started = time.monotonic()
            out, err = process.communicate(timeout=timeout)
            self.duration = time.monotonic() - started
            self.kinds = [request.kind for request in model.requests]
            try:
                model.assert_consumed()
            except AssertionError as exc:  # the job's own words say why it asked otherwise
                said = out.decode()[-3000:]
                raise AssertionError(f"{exc}\n--- the job printed ---\n{said}") from None
        self._save_cache(workspace)
        return Finished(process.returncode, out.decode(), err.decode())

    def _save_cache(self, workspace: Path) -> None:
        if (workspace / HISTORY_DIR).is_dir():
            shutil.rmtree(self.cache, ignore_errors=True)
            shutil.copytree(workspace / HISTORY_DIR, self.cache)

    def _env(
        self,
        workspace: Path,
        payload: dict[str, Any] | None,
        base_url: str,
        inputs: dict[str, str],
        event_name: str = "",
    ) -> dict[str, str]:
        job: dict[str, Any] = {  # what a job on either forge is given
            "fake": self.fake,
            "workspace": workspace,
            "files": self.tmp / f"job-{self.count}",
            "payload": payload,
            "openai_api_key": API_KEY,
            "openai_base_url": base_url,
            "model": "scripted",
            **inputs,
        }
        if self.platform == "github":
            assert payload is not None, "a GitHub job always has an event payload"
            name = event_name or ("issues" if "label" in payload else "issue_comment")
            run_id = 7000 + self.count
            return (
                github_action_env(event_name=name, run_id=run_id, history_dir=HISTORY_DIR, **job)
                | QUIET
            )
        return gitlab_job_env(job_id=6000 + self.count, **job) | QUIET

    # -- events --------------------------------------------------------------------------------

    def labelled(self) -> dict[str, Any]:
        if self.platform == "github":
            payload = github_payload("issues.labeled")
            payload["label"]["name"] = "planner"
            payload["issue"]["number"] = self.number
            payload["repository"]["full_name"] = self.fake.repository
            return payload
        payload = gitlab_payload("issue_hook")
        payload["object_attributes"]["iid"] = self.number
        return payload

    def comment(self, body: str) -> dict[str, Any]:
        if self.platform == "github":
            made = self.fake.comment_json(self.fake.add_comment(self.number, body))
            payload = comment_event(body, made, self.number)
            payload["repository"]["full_name"] = self.fake.repository
            return payload
        note = self.fake.add_note(self.number, body)
        payload = gitlab_payload("note_hook_issue")
        payload["object_attributes"].update(note=body, id=note.id, created_at=note.created_at)
        payload["issue"]["iid"] = self.number
        return payload

    # -- what the forge shows ------------------------------------------------------------------

    def tracking(self) -> list[Any]:
        notes = (
            self.fake.comments_on(self.number)
            if self.platform == "github"
            else self.fake.notes_on(self.number)
        )
        return [note for note in notes if TRACKING_MARKER in note.body]

    def history(self) -> list[dict[str, Any]]:
        path = self.cache / f"{task_uuid(self.fake.repository, str(self.number))}.jsonl"
        return list(read_entries(path))


def _hooked(step: Step, hook: Hook | None, holder: dict[str, Any]) -> Step:
    if hook is None:
        return step

    def run_hook(body: dict[str, Any]) -> None:
        hook(holder["process"])

    return dataclasses.replace(step, expect=run_hook)


# -- a two-file plan: each task is a phase boundary of its own -----------------------------------


def two_file_plan(first: str, second: str) -> list[Step]:
    """plan, (write, finish) x 2, completion: six requests with reflection and replanning off."""
    tasks = [("task_1", first), ("task_2", second)]
    plan = {
        "phase": "planning",
        "goal_understanding": {
            "main_objective": f"Add {first} and {second}",
            "success_criteria": ["both files exist"],
            "constraints": [],
            "context": "",
        },
        "task_decomposition": {
            "reasoning": "One file per task.",
            "subtasks": [
                {
                    "id": task,
                    "description": f"Write {path}",
                    "dependencies": [],
                    "estimated_complexity": "low",
                    "required_tools": ["write_file"],
                }
                for task, path in tasks
            ],
        },
        "action_plan": {
            "execution_order": [task for task, _ in tasks],
            "actions": [
                {
                    "task_id": task,
                    "action_type": "tool_call",
                    "tool": "write_file",
                    "purpose": f"create {path}",
                    "expected_outcome": f"{path} written",
                }
                for task, path in tasks
            ],
        },
        "comment": "Plan ready.",
    }
    steps = [reply_json("planning", plan)]
    for task, path in tasks:
        steps += task_steps(task, path)
    return [*steps, completion_step()]


def task_steps(task: str, path: str) -> list[Step]:
    return [write(path, f"{path}\n"), finish(summary=path)]


def completion_step() -> Step:
    return completion(completed=2, outcomes=("both files added",))


def commit_config(fake: Any, text: str) -> None:
    """The repository's .github/planner.yml on main, committed as a maintainer would."""
    fake.push_main({".github/planner.yml": text}, "Configure planner")


def one_task_plan(path: str) -> list[Step]:
    """plan one task that writes `path`, write + finish, completion (replanning off)."""
    steps = two_file_plan(path, path)
    plan = json.loads(steps[0].content or "{}")
    decomposition = plan["task_decomposition"]
    decomposition["subtasks"] = decomposition["subtasks"][:1]
    plan["action_plan"]["execution_order"] = ["task_1"]
    plan["action_plan"]["actions"] = plan["action_plan"]["actions"][:1]
    return [reply_json("planning", plan), *task_steps("task_1", path), completion_step()]


def issue_on(platform: str, tmp: Path, title: str, body: str) -> tuple[Any, int]:
    """A started fake forge with one labelled issue a permitted person can act on."""
    if platform == "github":
        from tests.fake_forge import FakeGitHub

        github = FakeGitHub(tmp / "fake").start()
        github.add_issue(1, title, body, labels=["planner"])
        github.permissions["Codertocat"] = "write"
        return github, 1
    from tests.fake_forge import FakeGitLab

    gitlab = FakeGitLab(tmp / "fake").start()
    gitlab.add_issue(12, title, body, labels=["bug", "planner"])
    gitlab.members[7] = 30  # dana is a Developer
    return gitlab, 12


def jobs_fixture(title: str, body: str) -> Any:
    """A test module's `jobs` fixture (`jobs = jobs_fixture(...)`), on GitHub and on GitLab: an
    issue with this title and body on a fresh fake forge, its jobs, the forge stopped after."""

    @pytest.fixture(params=["github", "gitlab"])
    def jobs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[CiJobs]:
        fake, number = issue_on(request.param, tmp_path, title, body)
        try:
            yield CiJobs(request.param, fake, tmp_path, number)
        finally:
            fake.stop()

    return jobs
