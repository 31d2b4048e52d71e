"""One pass against the scripted model, as the pass-level benchmarks measure it."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from planner.config import load_config
from planner.memory.history import PlanningHistoryStore
from planner.outcome.result import PassResult
from planner.run.runner import PassSetup, run_pass
from planner.testing.scripted_server import RecordedRequest, ScriptedModelServer
from planner.testing.steps import Step
from planner.text.issue import IssueContext

TASKS = [f"task_{n}" for n in range(1, 6)]
ISSUE = IssueContext(repository="bench/repo", number="1", title="Benchmark", body="Write files.")


def scripted_pass(
    steps: Sequence[Step], overrides: dict[str, Any], root: Path
) -> tuple[PassResult, list[RecordedRequest], list[dict[str, Any]]]:
    """A completed pass on ISSUE in a fresh repository at `root`, every step used: the result,
    the requests the model got, and the model calls the history recorded."""
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    with ScriptedModelServer(list(steps)) as server:
        env = {"OPENAI_API_KEY": "bench", "OPENAI_BASE_URL": server.base_url}
        config = load_config(None, env=env, overrides=overrides)
        result = run_pass(PassSetup(config=config, workspace=root), ISSUE)
        server.assert_consumed()
        requests = list(server.requests)
    assert result.status == "completed", result.stop_reason
    store = PlanningHistoryStore(root / "planning_history", ISSUE.repository, ISSUE.number)
    return result, requests, [e for e in store.entries() if e["type"] == "model_call"]
