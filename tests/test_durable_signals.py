"""Budgets and signals end a pass cleanly: the real entry point on the fake forges.

A job cancelled (SIGTERM) while a command runs, or while a model request is in flight, ends
within seconds and still commits, pushes, keeps the history and writes the final comment; a
wall-clock budget shorter than a command's own timeout bounds that command.
"""

from __future__ import annotations

import contextlib
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from planner.testing.steps import Step, reply_json, reply_tool_calls
from tests.fake_forge.scenario import file_on
from tests.support.durable import CiJobs, commit_config, issue_on, task_steps

SLEEPER = "import time; time.sleep(61.25)"
"""The command that would outlast the test; its text marks it in /proc."""


@pytest.fixture(params=["github", "gitlab"])
def jobs(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    fake, number = issue_on(
        request.param, tmp_path, "Slow work", "Add ONE.md, then run the slow check."
    )
    allow_python_commands(fake)
    try:
        yield CiJobs(request.param, fake, tmp_path, number)
    finally:
        fake.stop()


def allow_python_commands(fake: Any) -> None:
    """The repository's config allows `python3 -c`."""
    commit_config(fake, 'tools:\n  allowed_commands: ["python3 -c"]\n')


def slow_plan() -> list[Step]:
    plan = {
        "phase": "planning",
        "goal_understanding": {
            "main_objective": "Add ONE.md and run the slow check",
            "success_criteria": ["ONE.md exists"],
            "constraints": [],
            "context": "",
        },
        "task_decomposition": {
            "reasoning": "Write, then check.",
            "subtasks": [
                {"id": "task_1", "description": "Write ONE.md", "dependencies": []},
                {"id": "task_2", "description": "Run the check", "dependencies": ["task_1"]},
            ],
        },
        "action_plan": {
            "execution_order": ["task_1", "task_2"],
            "actions": [
                {"task_id": "task_1", "action_type": "tool_call", "tool": "write_file"},
                {"task_id": "task_2", "action_type": "tool_call", "tool": "run_command"},
            ],
        },
        "comment": "Plan ready.",
    }
    command = reply_tool_calls("execute", [("run_command", {"argv": ["python3", "-c", SLEEPER]})])
    return [reply_json("planning", plan), *task_steps("task_1", "ONE.md"), command]


def signal_later(signum: int, seconds: float) -> Any:
    def hook(process: subprocess.Popen[bytes]) -> None:
        def send() -> None:
            time.sleep(seconds)
            if process.poll() is None:
                process.send_signal(signum)

        threading.Thread(target=send, daemon=True).start()

    return hook


def sleepers() -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if SLEEPER in text and "pytest" not in text:
            found.append(text)
    return found


def test_sigterm_mid_command_ends_the_pass_within_seconds_and_keeps_the_work(
    jobs: CiJobs,
) -> None:
    started = time.monotonic()
    # The command starts right after request 3 is answered; SIGTERM comes 1.5 s later.
    finished = jobs.run(jobs.labelled(), slow_plan(), hooks={3: signal_later(signal.SIGTERM, 1.5)})
    elapsed = time.monotonic() - started

    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert elapsed < 20, elapsed  # the command alone would take 61 s
    assert sleepers() == []  # the command's process was killed, not left behind
    assert file_on(jobs.fake.bare, f"planner/issue-{jobs.number}", "ONE.md") == "ONE.md"
    [comment] = jobs.tracking()
    assert "stopped by SIGTERM" in comment.body and "- [x] **task_1**" in comment.body
    [end] = [e for e in jobs.history() if e["type"] == "run_end"]
    assert end["status"] == "in_progress" and "SIGTERM" in end["stop_reason"]


def test_sigint_during_a_model_request_ends_the_pass_without_waiting_for_the_reply(
    jobs: CiJobs,
) -> None:
    unanswered: queue.Queue[float] = queue.Queue()

    def slow_answer(process: subprocess.Popen[bytes]) -> None:
        asked = time.monotonic()
        signal_later(signal.SIGINT, 0.5)(process)
        # The reply comes 12 s after the request, or as soon as the job has ended without it.
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=12)
        unanswered.put(time.monotonic() - asked)

    script = [*slow_plan()[:3], task_steps("task_2", "TWO.md")[0]]
    finished = jobs.run(jobs.labelled(), script, hooks={3: slow_answer})

    assert finished.returncode == 0, finished.stdout + finished.stderr
    # Measured from the request, not from the job's start (a loaded machine starts it slowly):
    # the job ended well before the reply it did not wait for.
    waited = unanswered.get(timeout=15)  # the hook runs on in the model server's thread
    assert waited < 10, waited
    [comment] = jobs.tracking()
    assert "stopped by SIGINT" in comment.body
    assert file_on(jobs.fake.bare, f"planner/issue-{jobs.number}", "ONE.md") == "ONE.md"


def test_the_wall_clock_budget_bounds_a_command_so_the_run_can_still_report(
    jobs: CiJobs,
) -> None:
    # max_minutes 0.2 = 12 s, of which a quarter is kept for the end: the 61 s command gets
    # what is left of 9 s, then the pass stops and the job pushes and reports.
    finished = jobs.run(jobs.labelled(), slow_plan(), max_minutes="0.2")

    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert jobs.duration < 12 + 1, jobs.duration  # the job ended within max_minutes
    [comment] = jobs.tracking()
    assert "⏸️ Paused" in comment.body and "- [x] **task_1**" in comment.body
    assert file_on(jobs.fake.bare, f"planner/issue-{jobs.number}", "ONE.md") == "ONE.md"
