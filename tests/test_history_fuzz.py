"""History entries are data: thousands of single-line variants of real entries, appended to a
real history, never stop a pass.

tests/fixtures/history/every_type.jsonl holds one entry of every type as planner writes it (the
first ten lines are a real completed pass of the demo). Each variant changes one field of one
entry (removed, nulled, retyped, nested, or the entry given another type's name) and is appended
alone to the real history; then a whole pass runs in process up to its first model request (a
stand-in model that ends the pass there), with and without a person's instruction, and its
result is rendered as the tracking comment. A variant the validator keeps must not crash any
reader; one it refuses is skipped with a warning and the file is never rewritten. The end-to-end
variant (the real entry point on the fake forges) is in test_durable_history.py.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planner.ci.report.tracking import TrackingView, render_tracking
from planner.config import load_config
from planner.memory.entries import ENTRY_MODELS, entry_problem
from planner.memory.history import read_entries, task_uuid
from planner.outcome.flow import StopPass
from planner.outcome.result import render_checklist
from planner.run.runner import PassSetup, run_pass
from planner.text.issue import IssueContext
from tests.plans import git_repo

FIXTURE = Path(__file__).parent / "fixtures" / "history" / "every_type.jsonl"
TEMPLATES = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
REAL_PASS = TEMPLATES[:10]
VALUES: list[Any] = [None, 0, -1, 2.5, "", "x", True, [], {}, [1, "a"], {"a": 1}, [[{}]], {"n": {}}]
COMMON = ("timestamp", "repository", "issue_id", "run_id")


class StopAtFirstCall:
    """A model that ends the pass when it is first asked anything: everything before the first
    request (resume, reconciling questions, prompts built from the history) has run."""

    name = "fuzz"
    on_call = None

    def structured(self, *args: Any, **kwargs: Any) -> Any:
        raise StopPass("in_progress", "fuzz: first model request reached")

    structured_text = structured
    chat = structured


def paths(value: Any, prefix: tuple[Any, ...] = (), depth: int = 2) -> Iterator[tuple[Any, ...]]:
    if depth == 0:
        return
    if isinstance(value, dict):
        for key, inner in value.items():
            if prefix or key not in ("type", *COMMON):
                yield (*prefix, key)
                yield from paths(inner, (*prefix, key), depth - 1)
    elif isinstance(value, list) and value:
        yield (*prefix, 0)
        yield from paths(value[0], (*prefix, 0), depth - 1)


def changed(entry: dict[str, Any], path: tuple[Any, ...], value: Any, remove: bool = False) -> Any:
    variant = copy.deepcopy(entry)
    parent = variant
    for part in path[:-1]:
        parent = parent[part]
    if remove:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return variant


def variants(entry: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for path in paths(entry):
        original = changed(entry, path, None)  # only to read the current value
        current = entry
        for part in path:
            current = current[part]
        del original
        yield changed(entry, path, None, remove=True)
        for value in [*VALUES, {"value": current}, [current]]:
            yield changed(entry, path, value)
    for other in ENTRY_MODELS:
        if other != entry["type"]:
            yield {**entry, "type": other}
    yield {**entry, "type": "from_a_newer_planner"}


def all_variants() -> list[dict[str, Any]]:
    return [variant for entry in TEMPLATES for variant in variants(entry)]


def test_there_are_thousands_of_variants_and_the_validator_refuses_the_known_crashers() -> None:
    assert len(all_variants()) > 3_000
    for crasher in (
        {"type": "reflection", "evaluation": None},
        {"type": "replan_started"},
        {"type": "assumed", "assumptions": 7},
    ):
        assert entry_problem(crasher) is not None


def run_with(tmp: Path, history: list[dict[str, Any]], instruction: str) -> None:
    workspace = tmp / "repo"
    if not workspace.exists():
        git_repo(workspace)
    directory = tmp / "history"
    directory.mkdir(exist_ok=True)
    issue = IssueContext(
        repository="demo/greeter", number="1", title="t", body="b", instruction=instruction
    )
    path = directory / f"{task_uuid('demo/greeter', '1')}.jsonl"
    text = "".join(json.dumps(entry) + "\n" for entry in history)
    path.write_text(text, encoding="utf-8")
    config = load_config(
        None,
        env={"OPENAI_API_KEY": "x"},
        overrides={"planning.history.directory": str(directory)},
    )
    setup = PassSetup(config=config, workspace=workspace, model=StopAtFirstCall())
    result = run_pass(setup, issue)
    assert path.read_text(encoding="utf-8").startswith(text)  # appended to, never rewritten
    assert result.status != "failed" or "fuzz" not in result.stop_reason, result.stop_reason
    render_checklist(result)
    render_tracking(TrackingView(state="in_progress", actor="a", event="e", result=result))


# One test per entry and instruction: the largest entries have hundreds of variants, and
# smaller tests spread evenly over the test command's workers.
@pytest.mark.parametrize("instruction", ["", "please also add a test"], ids=["bare", "instructed"])
@pytest.mark.parametrize("index", range(len(TEMPLATES)))
def test_every_variant_of_one_entry_appended_to_a_real_history_lets_the_pass_run(
    tmp_path: Path, index: int, instruction: str
) -> None:
    template = TEMPLATES[index]
    for number, variant in enumerate(variants(template)):
        try:
            run_with(tmp_path, [*REAL_PASS, variant], instruction)
        except Exception as exc:  # name the variant that broke the pass
            raise AssertionError(f"variant {number} {json.dumps(variant)[:400]}") from exc


def test_a_refused_entry_is_skipped_with_a_warning_and_the_rest_is_read(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    bad = {"type": "reflection", "evaluation": None}
    lines = [*REAL_PASS[:3], bad, REAL_PASS[3]]
    path.write_text("".join(json.dumps(entry) + "\n" for entry in lines), encoding="utf-8")
    warnings: list[str] = []

    read = list(read_entries(path, warnings))

    assert read == [*REAL_PASS[:3], REAL_PASS[3]]
    [warning] = warnings
    assert "h.jsonl:4: skipped a history line of the wrong shape" in warning
    assert "reflection: evaluation" in warning
