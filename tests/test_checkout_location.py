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

from tests.plans import copy_checkout

ROOT = Path(__file__).resolve().parent.parent
USER_SWITCHING = "same_user_cannot_read_planner or stdio_mcp_server_runs_as_the_sandbox_user"


@pytest.fixture
def private_clone() -> Iterator[Path]:
    base = Path(tempfile.mkdtemp(prefix="planner-private-"))
    base.chmod(0o700)
    try:
        clone = copy_checkout(base / "clone")
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


def test_an_interpreter_behind_a_closed_home_is_found_out_and_said_once(
    pytestconfig: pytest.Config,
) -> None:
    """Issue 44, item 10: a Python under a mode-700 home (pyenv under /root) and a venv made
    from it. The reachability check looked at the venv's `python` path only, saw nothing
    closed, and the sandbox-user tests ran an interpreter that user cannot start."""
    if sys.platform != "linux" or os.geteuid() != 0:
        pytest.skip("the user switch needs root on Linux (as in the Docker action)")
    from planner.tools.sandbox.isolation import reachable_by_others, unreachable_interpreter
    from tests.support.reachable import VERSION, interpreter_note

    runnable = shutil.which(VERSION, path="/usr/local/bin:/usr/bin:/bin")
    if runnable is None or unreachable_interpreter(Path(runnable)):
        pytest.skip(f"no {VERSION} every user can run to place behind a closed home")
    base = Path(tempfile.mkdtemp(prefix="planner-reach-"))
    try:
        base.chmod(0o755)
        home = base / "home"
        home.mkdir(mode=0o700)
        (home / VERSION).symlink_to(runnable)  # as pyenv's shim tree leads to the real one
        linked, copied = base / "linked", base / "copied"
        for venv, how in ((linked, "--symlinks"), (copied, "--copies")):
            made = [str(home / VERSION), "-m", "venv", "--without-pip", how, str(venv)]
            subprocess.run(made, check=True, capture_output=True)
        python = linked / "bin" / "python"

        with pytest.raises(PermissionError):  # the kernel's lookup stops at the closed home
            subprocess.run([str(python), "-c", "1"], user=65534, group=65534, extra_groups=[])
        assert not reachable_by_others(python)
        for venv in (linked, copied):  # a copy still loads its library from `home`
            problem = unreachable_interpreter(venv / "bin" / "python")
            assert f"({home} is closed to them)" in problem and f"chmod o+x {home}" in problem
        assert not unreachable_interpreter(Path(runnable))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    # Said once per session (not once per xdist worker) when the tests' interpreter is one.
    note = interpreter_note()
    if note:
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2"]
        argv += ["tests/test_layout.py", "-k", "no_test_has_this_name"]
        ran = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=240)
        assert (ran.stdout + ran.stderr).count(note) == 1, ran.stdout[-3000:]


def test_a_closed_interpreter_is_named_once_not_as_needing_itself() -> None:
    """Issue 57, item 10: a plain interpreter under a closed folder read "`X` needs `X`"; a
    venv's python still names the installation it needs."""
    from planner.tools.sandbox.isolation import unreachable_interpreter

    tmp_path = Path(tempfile.mkdtemp(prefix="planner-reach-"))  # pytest's tmp_path is mode 700
    tmp_path.chmod(0o755)
    closed = tmp_path / "home"
    (closed / "bin").mkdir(parents=True)
    python = closed / "bin" / "python3"
    python.write_text("")
    python.chmod(0o755)
    closed.chmod(0o700)
    try:
        problem = unreachable_interpreter(python)
        assert problem.startswith(f"{python}, which other users cannot reach ({closed} is ")
        assert f"{python} needs {python}" not in problem
        venv = tmp_path / "venv"
        (venv / "bin").mkdir(parents=True)
        (venv / "bin" / "python").write_text("")
        (venv / "bin" / "python").chmod(0o755)
        (venv / "pyvenv.cfg").write_text(f"home = {closed / 'bin'}\n")
        named = unreachable_interpreter(venv / "bin" / "python")
        assert named.startswith(f"{venv / 'bin' / 'python'} needs {closed / 'bin'}, which ")
    finally:
        closed.chmod(0o755)
        shutil.rmtree(tmp_path, ignore_errors=True)
