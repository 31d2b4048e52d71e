"""What the tools left running is ended when they close (planner.tools.sandbox.leftovers): every
descendant of planner that runs as the sandbox user, however it detached, and nothing else.

The processes run as uids no account uses, so the tests touch nothing of anyone else's on a
shared machine; they need root (the user switch) on Linux (/proc), as the Docker action has.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import pytest

from planner.tools.sandbox.isolation import SandboxUser
from planner.tools.sandbox.leftovers import adopt_orphans, end_processes, running, signal_as

TOOLS = SandboxUser(4711, 4711, "/")
SOMEONE_ELSE = SandboxUser(4712, 4712, "/")

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or os.geteuid() != 0,
    reason="the user switch needs root, and the process table is Linux's /proc",
)


@pytest.fixture
def adopting() -> Iterator[None]:
    """planner as a subreaper, as while a pass's tools are open."""
    assert adopt_orphans()
    try:
        yield
    finally:
        end_processes(TOOLS)  # nothing outlives a failed test either
        adopt_orphans(False)


def start(user: SandboxUser | None, *argv: str) -> subprocess.Popen[bytes]:
    """`argv` as `user` (None: as root), a child of this process (no shell in between, so
    killing it leaves nothing behind)."""
    switch = user.popen_arguments() if user else {}
    return subprocess.Popen(list(argv), cwd="/", **switch)


def detach(user: SandboxUser, script: str = "sleep 300") -> None:
    """Start `script` in a session of its own and let its starter exit, as a command that
    daemonises does: nothing of planner's holds it any more."""
    starter = start(user, "sh", "-c", f"setsid sh -c '{script}' </dev/null >/dev/null 2>&1 &")
    starter.wait()


def settled(condition: Callable[[], object], seconds: float = 5) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def test_a_process_in_a_session_of_its_own_is_ended(adopting: None) -> None:
    detach(TOOLS)
    assert settled(lambda: running(TOOLS.uid, os.getpid()))

    assert end_processes(TOOLS) == []
    assert running(TOOLS.uid, os.getpid()) == []


def test_a_process_that_keeps_forking_is_ended(adopting: None) -> None:
    detach(TOOLS, "while :; do (sleep 300 &); sleep 0.01; done")
    assert settled(lambda: len(running(TOOLS.uid, os.getpid())) > 5)

    assert end_processes(TOOLS) == []


def test_the_kill_never_reaches_another_users_process(adopting: None) -> None:
    """The shell that sends the kill runs as the sandbox user: named explicitly, root's
    process and another user's live on (the kernel refuses, whatever planner asked)."""
    roots = start(None, "sleep", "300")
    others = start(SOMEONE_ELSE, "sleep", "300")
    try:
        signal_as(TOOLS, [roots.pid, others.pid])
        end_processes(TOOLS)
        time.sleep(0.2)
        assert roots.poll() is None and others.poll() is None
    finally:
        for process in (roots, others):
            process.kill()
            process.wait()


def test_only_descendants_are_ended() -> None:
    """Another job's tools on the same machine, running as the same user, are left alone:
    here `job` stands for planner, and the process started beside it for the other job's."""
    job = subprocess.Popen([sys.executable, "-c", f"import subprocess; {SLEEP_AS_TOOLS}"])
    theirs = start(TOOLS, "sleep", "300")
    try:
        assert settled(lambda: running(TOOLS.uid, job.pid))
        assert end_processes(TOOLS, ancestor=job.pid) == []
        assert theirs.poll() is None
    finally:
        for process in (job, theirs):
            process.kill()
            process.wait()


SLEEP_AS_TOOLS = (
    f"subprocess.run(['sleep', '300'], user={TOOLS.uid}, group={TOOLS.gid}, extra_groups=[])"
)
