"""A CI job in a box: a fake forge, a fresh checkout per run, a scripted model, run_for_event."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from planner.ci.action import trust_workspace
from planner.ci.events.triggers import Platform
from planner.ci.job import run_for_event
from planner.ci.outcome import CiOutcome
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import Step
from tests.fake_forge.core import FakeServerBase
from tests.fake_forge.github import FakeGitHub, GhComment
from tests.fake_forge.gitlab import FakeGitLab
from tests.fake_forge.scenario import clone, comment_event, model_config


@dataclass
class Rig:
    platform: Platform
    fake: FakeServerBase
    tmp: Path
    runs: int = 0
    prompts: list[str] = field(default_factory=list)
    """Every message text the model received, run after run."""
    sleeps: list[float] = field(default_factory=list)
    owner: int | None = None
    """The uid each fresh checkout belongs to, as the runner's user owns the workspace a Docker
    action sees (tools then run as that user); None: the test's own user."""
    group: int | None = None
    """The checkout's group (a GitHub-hosted runner's user has `docker`); None: `owner`."""
    before: Callable[[Path], None] | None = None
    """What the job's earlier steps leave in each fresh checkout before planner runs."""

    @property
    def history(self) -> Path:
        return self.tmp / "history"  # survives between jobs, like a cache restore

    def env(self, **extra: str) -> dict[str, str]:
        fake = self.fake
        if self.platform == "github":
            base = {
                "GITHUB_API_URL": fake.api_url,
                "GITHUB_SERVER_URL": fake.base_url,
                "GITHUB_REPOSITORY": fake.repository,
                "GITHUB_TOKEN": fake.token,
                "GITHUB_RUN_ID": str(1000 + self.runs),
            }
        else:
            assert isinstance(fake, FakeGitLab)
            base = {
                "GITLAB_TOKEN": fake.token,
                "CI_API_V4_URL": fake.api_url,
                "CI_SERVER_URL": fake.base_url,
                "CI_SERVER_HOST": "127.0.0.1",
                "CI_PROJECT_ID": str(fake.project_id),
                "CI_PROJECT_PATH": fake.repository,
                "CI_PIPELINE_SOURCE": "trigger",
                "CI_PIPELINE_URL": f"{fake.base_url}/{fake.repository}/-/pipelines/{self.runs}",
            }
        return {**base, **extra}

    def run(
        self,
        event: dict[str, Any] | None,
        script: Sequence[Step] = (),
        *,
        event_name: str | None = None,
        env: dict[str, str] | None = None,
        **overrides: Any,
    ) -> CiOutcome:
        """One CI job on a fresh checkout of the default branch; the script must be used up."""
        self.runs += 1
        workspace = clone(self.fake.bare, self.tmp / f"job-{self.runs}")
        if self.owner is not None:
            hand_to(workspace, self.owner, self.group)
        if self.before is not None:
            self.before(workspace)
        with ScriptedModelServer(script) as model:
            outcome = run_for_event(
                self.platform,
                workspace=workspace,
                config=model_config(model.base_url, self.history, **overrides),
                env=env or self.env(),
                event=event,
                event_name=event_name,
                sleep=self.sleeps.append,
            )
            self.prompts += [json.dumps(r.body, ensure_ascii=False) for r in model.requests]
            model.assert_consumed()
        return outcome


def hand_to(workspace: Path, uid: int, gid: int | None = None) -> None:
    """The checkout belongs to `uid` (and `gid`, else uid's own), and planner's own git still
    works in it."""
    for entry in [workspace, *workspace.rglob("*")]:
        os.lchown(entry, uid, uid if gid is None else gid)
    trust_workspace(workspace)


def github_rig(fake: FakeGitHub, tmp_path: Path, title: str, body: str) -> Rig:
    """A GitHub rig on issue 1, labelled `planner`, where Codertocat has write access."""
    fake.add_issue(1, title, body, labels=["planner"])
    fake.permissions["Codertocat"] = "write"
    return Rig("github", fake, tmp_path)


def github_rig_fixture(title: str, body: str) -> Any:
    """A test module's `rig` fixture (`rig = github_rig_fixture(...)`): the GitHub rig on issue 1
    with this title and body."""

    @pytest.fixture
    def rig(fake_github: FakeGitHub, tmp_path: Path) -> Rig:
        return github_rig(fake_github, tmp_path, title, body)

    return rig


def github(rig: Rig) -> FakeGitHub:
    assert isinstance(rig.fake, FakeGitHub)
    return rig.fake


def issue_comment_event(fake: FakeGitHub, made: GhComment) -> dict[str, Any]:
    """The issue_comment event of a comment already on issue 1, with the issue's labels as they
    are when it is delivered."""
    payload = comment_event(made.body, fake.comment_json(made), 1)
    payload["issue"]["labels"] = [{"name": name} for name in fake.issues[1].labels]
    return payload


def comment_now(fake: FakeGitHub, body: str) -> dict[str, Any]:
    """The event of a comment made now on issue 1 (its job may start later, as queued jobs do)."""
    return issue_comment_event(fake, fake.add_comment(1, body))


def say(rig: Rig, body: str, script: Sequence[Step] = (), **overrides: Any) -> CiOutcome:
    """A comment on issue 1 and the CI job it starts; the script must be used up."""
    event = comment_now(github(rig), body)
    return rig.run(event, script, event_name="issue_comment", **overrides)
