"""A pass harness for replanning tests: scripted model, fixed clock, recording reporter."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from planner.config import PlannerConfig, load_config
from planner.memory.history import PlanningHistoryStore
from planner.outcome.result import Notification, PassResult, render_checklist
from planner.run.runner import PassSetup, run_pass
from planner.testing.scripted_server import ScriptedModelServer
from planner.text.issue import IssueContext
from tests.plans import REFINEMENT_OFF, git_repo

ISSUE = IssueContext(
    repository="octo/repo", number="7", title="Write files", body="Please write the files."
)
START = datetime(2026, 11, 1, 10, 0, 0, tzinfo=UTC)


@dataclass
class Clock:
    """An injectable clock; tests move it instead of sleeping."""

    now: datetime = START

    def __call__(self) -> datetime:
        return self.now

    def advance(self, minutes: float) -> None:
        self.now += timedelta(minutes=minutes)


@dataclass
class RecordingReporter:
    """What a forge's ProgressReporter would do: keep one tracking comment current and post
    each notification once (by id) as its own comment."""

    checklists: list[str] = field(default_factory=list)
    comments: list[Notification] = field(default_factory=list)

    def update(self, snapshot: Any) -> None:
        assert isinstance(snapshot, PassResult)
        self.checklists.append(render_checklist(snapshot, max_chars=65_000))
        posted = {c.id for c in self.comments}
        self.comments += [n for n in snapshot.notifications if n.id not in posted]

    @property
    def tracking_comment(self) -> str:
        return self.checklists[-1] if self.checklists else ""


class Harness:
    def __init__(self, root: Path, server: ScriptedModelServer) -> None:
        self.workspace = git_repo(root / "repo")
        self.server = server
        self.clock = Clock()
        self.reporter = RecordingReporter()

    def config(self, **overrides: Any) -> PlannerConfig:
        env = {
            "OPENAI_API_KEY": "test-key",
            "OPENAI_BASE_URL": self.server.base_url,
            "OPENAI_MODEL": "scripted",
        }
        # The issue's own test asks the model once more: tests/test_issue_test.py
        values = {
            "llm.max_retries": 0,
            "verification.issue_test": False,
            **REFINEMENT_OFF,
            **overrides,
        }
        return load_config(None, env=env, overrides=values)

    def run(self, issue: IssueContext = ISSUE, **overrides: Any) -> PassResult:
        setup = PassSetup(
            config=self.config(**overrides),
            workspace=self.workspace,
            reporter=self.reporter,
            clock=self.clock,
        )
        return run_pass(setup, issue)

    def answer(self, text: str, **overrides: Any) -> PassResult:
        return self.run(ISSUE.model_copy(update={"instruction": text}), **overrides)

    def entries(self) -> list[dict[str, Any]]:
        store = PlanningHistoryStore(self.workspace / "planning_history", "octo/repo", "7")
        return store.entries()

    def types(self) -> list[str]:
        """Entry types in order, without the model_call bookkeeping."""
        return [e["type"] for e in self.entries() if e["type"] != "model_call"]

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.entries() if e["type"] == kind]

    def kinds(self) -> list[str | None]:
        """The kind of every model request so far, in order."""
        return [r.kind for r in self.server.requests]

    def prompt(self, index: int) -> str:
        return str(self.server.requests[index].body["messages"][-1]["content"])
