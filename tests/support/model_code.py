"""The red-team model's moves in the security tests: code it writes that a command it may run
executes (the repository's tests import a conftest.py), and the end of its task."""

from __future__ import annotations

import sys

from planner.testing.steps import ToolCallSpec

PYTEST = [sys.executable, "-m", "pytest"]
FINISHED: ToolCallSpec = ("finish_task", {"status": "completed", "summary": "Done."})


def code_run_by(argv: list[str], path: str, code: str) -> list[ToolCallSpec]:
    """Write `code` to `path`, then run `argv`, which runs it."""
    return [("write_file", {"path": path, "content": code}), ("run_command", {"argv": argv})]
