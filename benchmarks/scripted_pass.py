"""One pass against the scripted model, as the pass-level benchmarks measure it, and their table."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from benchmarks.timing import print_table
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


Case = tuple[str, str, Callable[[Path], dict[str, Any]]]
"""Two labels, and how the case is measured in a folder of its own (its figures by name)."""


def print_cases(
    columns: Sequence[tuple[str, str]], figures: Sequence[str], cases: Iterable[Case]
) -> None:
    """A row per case, each measured in a temporary folder: its labels, then its `figures`, under
    the header of `columns` (timing.print_table)."""
    with tempfile.TemporaryDirectory() as folder:
        print_table(columns, _rows(Path(folder), figures, cases))


def _rows(folder: Path, figures: Sequence[str], cases: Iterable[Case]) -> Iterator[list[object]]:
    for first, second, measure in cases:
        measured = measure(folder / f"{first}-{second}")
        yield [first, second, *(measured[name] for name in figures)]
