"""Job cancellation (SIGTERM/SIGINT) ends the pass the ordinary way, within seconds (issue 15).

The handler expires the run's deadline (planner.outcome.deadline), kills the process groups of
running commands (run_command and MCP servers start their own session; git runs in ours and is
left to finish), and interrupts an in-flight model request. The pass then stops as in_progress
at its next step, and the job commits, pushes, keeps the history and writes the final comment.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
from pathlib import Path
from types import FrameType

from planner.config import BudgetConfig
from planner.outcome.deadline import DEADLINE, Interrupted, working_seconds

log = logging.getLogger(__name__)

SIGNALS = (signal.SIGTERM, signal.SIGINT)


def install() -> None:
    for signum in SIGNALS:
        signal.signal(signum, _on_signal)


def start_deadline(budget: BudgetConfig, elapsed: float = 0.0) -> None:
    """The pass must end this long before max_wall_seconds, so the run can still report.
    `elapsed`: seconds the job ran before; the first call wins, and a signal that came
    first stays in force."""
    if DEADLINE.end is None:
        DEADLINE.start(working_seconds(budget) - elapsed)


RECEIVED: list[str] = []
"""The signals this process received (the handler's only state)."""
JOB_START: list[float] = []
"""When the job started (time.time()), set by the entry point."""


def mark_job_start(at: float) -> None:
    JOB_START[:] = [at]


def ran_before(moment: float) -> float:
    """Seconds the job ran before `moment` (0 when the entry point did not say when it began):
    the time a run waited for the issue's lease is not taken from its budget."""
    return max(moment - JOB_START[0], 0.0) if JOB_START else 0.0


def cancellation() -> str:
    """How the job was told to stop ("cancelled (SIGTERM)"), or "" while it was not."""
    return f"cancelled ({RECEIVED[-1]})" if RECEIVED else ""


def leave_if_cancelled(code: int) -> None:
    """After a cancellation, exit at once: an abandoned model request must not hold up the
    interpreter's shutdown (its client would wait for the reply while closing)."""
    if not RECEIVED:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    logging.shutdown()
    os._exit(code)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    name = signal.Signals(signum).name
    RECEIVED.append(name)
    log.warning("%s received: ending the pass and saving the work", name)
    DEADLINE.expire(f"stopped by {name} (the job was cancelled); the next run continues")
    kill_command_groups()
    if DEADLINE.in_flight:
        raise Interrupted(name)


def kill_command_groups() -> None:
    """SIGKILL every process group led by a child of ours other than our own group."""
    own, me = os.getpgrp(), os.getpid()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        parent, group = int(fields[1]), int(fields[2])
        if parent == me and group != own:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)
