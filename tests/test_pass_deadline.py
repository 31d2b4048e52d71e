"""A pass keeps budget.max_wall_seconds wherever it runs (issue 59): `planner run` and the
evaluation harness start no CI job, and a pass with a 600 s budget ran 802 s. Whatever it is
doing when the time is spent — a model reply still streaming, a test run that hangs, a setup
that hangs — it stops at the deadline (the budget less the finish reserve), says why, and keeps
what it recorded.

Each test gives the pass a 10 s budget (2.5 s of it kept to finish) and something that would
take a minute: without the deadline the pass would run that minute.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from planner.outcome.deadline import DEADLINE
from planner.outcome.result import PassResult
from planner.run.runner import PassSetup, run_pass
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_text
from tests.plans import committed_repo
from tests.test_verification_pass import ISSUE, config, entries, of_type

BUDGET = 10.0
RESERVE = BUDGET / 4  # finish_reserve_seconds (120 by default) is capped at a quarter
HANG = "sleep 60"
BUDGET_SETTINGS = {"budget.max_wall_seconds": BUDGET}


def timed_pass(workspace: Path, server: ScriptedModelServer, **overrides: Any) -> PassResult:
    setup = PassSetup(config=config(server, **BUDGET_SETTINGS, **overrides), workspace=workspace)
    started = time.monotonic()
    result = run_pass(setup, ISSUE)
    took = time.monotonic() - started
    assert took < BUDGET + RESERVE, f"the pass ran {took:.1f}s on a {BUDGET:g}s budget"
    assert DEADLINE.end is None  # the pass's own deadline ends with it
    return result


def stopped_at_the_deadline(workspace: Path, result: PassResult) -> None:
    assert result.status == "in_progress", result.stop_reason
    assert result.stop_reason == "budget: the wall-clock deadline of the run was reached"
    (end,) = of_type(workspace, "run_end")
    assert (end["status"], end["stop_reason"]) == ("in_progress", result.stop_reason)


def test_a_slowly_streamed_reply_is_cut_at_the_deadline(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """The model streams a plan a few characters at a time, a minute long (a 1.5B on two CPU
    cores): the stream is closed at the deadline and the pass stops as in progress."""
    workspace = committed_repo(tmp_path / "repo", {"README.md": "# tool\n"})
    slow = reply_text(None, "{" + " " * 1_600 + "}", chunk_delay_seconds=0.4)
    scripted_model.add(slow)
    result = timed_pass(
        workspace, scripted_model, **{"llm.stop_repeating": True, "verification.enabled": "off"}
    )

    stopped_at_the_deadline(workspace, result)
    assert scripted_model.requests[0].body["stream"] is True
    assert of_type(workspace, "run_start")  # what was recorded before stays


def test_a_hanging_test_run_is_killed_at_the_deadline(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """The baseline's test command hangs (verification.timeout_seconds is 600 s): it is killed
    at the deadline, its record says so, and no model request is made after it."""
    workspace = committed_repo(tmp_path / "repo", {"README.md": "# tool\n"})
    result = timed_pass(
        workspace,
        scripted_model,
        **{"verification.command": HANG, "verification.timeout_seconds": 600},
    )

    stopped_at_the_deadline(workspace, result)
    (baseline,) = of_type(workspace, "verification")
    assert baseline["status"] == "timed_out"
    assert baseline["reason"].startswith("stopped at the pass's deadline after ")
    assert not scripted_model.requests


def test_a_hanging_setup_is_killed_and_nothing_starts_after_the_deadline(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """verification.setup hangs: it is killed at the deadline and recorded as the setup's
    problem; the baseline does not start, and says why."""
    workspace = committed_repo(tmp_path / "repo", {"README.md": "# tool\n"})
    result = timed_pass(
        workspace,
        scripted_model,
        **{
            "verification.setup": HANG,
            "verification.setup_timeout_seconds": 600,
            "verification.command": "true",
        },
    )

    stopped_at_the_deadline(workspace, result)
    setup = of_type(workspace, "verification_setup")[0]
    assert setup["ok"] is False
    assert "stopped at the pass's deadline after " in setup["problems"][0]
    baseline = of_type(workspace, "verification")[0]
    assert baseline["status"] == "not_run"
    assert baseline["reason"].startswith("not started: the pass's deadline was reached")
    assert entries(workspace)[0]["type"] == "run_start"
