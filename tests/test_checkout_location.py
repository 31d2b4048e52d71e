"""The suite passes wherever the clone lives, a mode-700 temporary folder included.

The tests that start planner or an MCP server as another user used to run the checkout's own
files as that user, so a clone under a private directory (mode 700) failed them while the same
commit passed elsewhere. This copies the checkout's files under a mode-700 directory and runs
those tests there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
USER_SWITCHING = "same_user_cannot_read_planner or stdio_mcp_server_runs_as_the_sandbox_user"


@pytest.fixture
def private_clone() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="planner-private-"))
    base.chmod(0o700)
    try:
        clone = base / "clone"
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout.decode()
        for name in filter(None, listed.split("\0")):
            if (ROOT / name).is_file():
                (clone / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, clone / name)
        yield clone
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_the_user_switching_tests_pass_in_a_clone_under_a_mode_700_directory(
    private_clone: Path,
) -> None:
    if sys.platform != "linux" or os.geteuid() != 0:
        pytest.skip("the user switch needs root on Linux (as in the Docker action)")
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0"]
    argv += ["tests/test_hostile_probe.py", "-k", USER_SWITCHING]
    ran = subprocess.run(argv, cwd=private_clone, capture_output=True, text=True, timeout=300)

    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-2000:]
    assert "2 passed" in ran.stdout
