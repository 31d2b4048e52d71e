"""Ending what the tools left running: when the tools close at the end of a pass, every process
of the sandbox user that planner's tools started is killed, however it detached; while a
finished task's work is judged and committed, every such process is stopped.

run_command kills its command's process group and session, but a process that starts a session
of its own (setsid), or one an MCP server started, outlives that. Left running, it could change
the checkout between the pass's last look at the tree and the commit (watching for git's
index.lock tells it when). So:

- before any tool starts, planner makes itself a child subreaper (prctl
  PR_SET_CHILD_SUBREAPER): a process whose parent exits is handed to planner instead of init,
  so whatever a tool started stays among planner's descendants, however it detached;
- when the tools close, the descendants that run as the sandbox user are killed, round after
  round until none is left (a process may fork while the kill goes on), and those handed to
  planner are reaped. The kill is sent by a shell running as the sandbox user: the kernel lets
  it signal only that user's processes, so a pid another process took meanwhile (root's
  included) is out of its reach;
- around a task's checkpoint commit (`held`), the same processes are stopped (SIGSTOP) before
  the tree is judged and continued (SIGCONT) after the commit: an MCP server lives on to the
  next task, but nothing changes the tree between the judgement and the commit.

Only descendants: other programs of the same user on the machine (another job's tools on a
shared runner) are left alone. Linux only (/proc). Where tools run as planner's own user there
is no user to tell the tools' processes from planner's, and nothing is killed here.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from planner.tools.sandbox.isolation import SandboxUser

log = logging.getLogger(__name__)

PR_SET_CHILD_SUBREAPER = 36
ROUNDS = 100
PAUSE_SECONDS = 0.02
"""Between rounds: SIGKILL lands asynchronously; 100 rounds give a process 2 s to die."""
SIGNAL_SCRIPT = 'signal=$1; shift; kill -s "$signal" "$@" 2>/dev/null; exit 0'
"""Run by /bin/sh as the sandbox user: a pid that is gone or not that user's is skipped."""
GONE = frozenset("ZX")
"""Process states of a process that runs no more (zombie, dead)."""
STOPPED = GONE | frozenset("Tt")
STILL_RUNNING = (
    "processes of uid %d that the tools started still run after the tools were closed: %s; "
    "a change they make before the commit is not judged"
)


@dataclass(frozen=True)
class Process:
    pid: int
    parent: int
    state: str
    uid: int
    """The real uid: a process cannot hide from it by exec'ing a setuid program."""
    session: int


def adopt_orphans(on: bool = True) -> bool:
    """Make planner the reaper of its orphaned descendants, or stop (Linux); False if refused."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def end_leftovers(user: SandboxUser) -> None:
    """When the tools close (the last of their cleanups): nothing they started may change the
    checkout between the pass's last look at it and the commit; planner adopts no more."""
    left = end_processes(user)
    adopt_orphans(False)
    if left:
        log.warning(STILL_RUNNING, user.uid, ", ".join(map(str, left)))


def end_processes(user: SandboxUser, ancestor: int | None = None) -> list[int]:
    """Kill every descendant of `ancestor` (default: planner) that runs as `user`, then reap
    those planner adopted. The pids still running after every round; [] when all are gone."""
    root = os.getpid() if ancestor is None else ancestor
    left = signal_until(user, root, "KILL", GONE)
    reap_adopted(user.uid)
    return left


@contextlib.contextmanager
def held(user: SandboxUser | None) -> Iterator[None]:
    """Inside, nothing the tools started runs: every descendant of planner that runs as `user`
    is stopped (SIGSTOP; a system call under way ends first), and continued (SIGCONT) when the
    block ends. A task's commit is made inside, so what the tree held when it was judged is
    what the commit takes."""
    if user is None:
        yield
        return
    root = os.getpid()
    left = signal_until(user, root, "STOP", STOPPED)
    if left:
        log.warning("processes of uid %d did not stop: %s", user.uid, left)
    try:
        yield
    finally:
        signal_as(user, members(user.uid, root, GONE), "CONT")


def signal_until(user: SandboxUser, root: int, name: str, reached: frozenset[str]) -> list[int]:
    """Signal `name` round after round to the descendants of `root` that run as `user` until
    all are in a `reached` state (a process may fork meanwhile); the pids still not there."""
    for _ in range(ROUNDS):
        left = members(user.uid, root, reached)
        if not left:
            return []
        signal_as(user, left, name)
        time.sleep(PAUSE_SECONDS)
    return members(user.uid, root, reached)


def running(uid: int, ancestor: int) -> list[int]:
    """Pids of the descendants of `ancestor` that run as `uid` and have not ended."""
    return members(uid, ancestor, GONE)


def members(uid: int, ancestor: int, leaving_out: frozenset[str]) -> list[int]:
    """Pids of the descendants of `ancestor` that run as `uid`, except those in a state of
    `leaving_out`."""
    found = descendants(process_table(), ancestor)
    return [p.pid for p in found if p.uid == uid and p.state not in leaving_out]


def signal_as(user: SandboxUser, pids: Sequence[int], name: str = "KILL") -> None:
    """Signal `name` to `pids`, sent by a shell running as `user`: never to another user's
    process, whatever the pids name."""
    if not pids:
        return
    argv = ["/bin/sh", "-c", SIGNAL_SCRIPT, "sh", name, *(str(pid) for pid in pids)]
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(
            argv,
            cwd="/",
            env={"PATH": os.defpath},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=10,
            **user.popen_arguments(),
        )


def reap_adopted(uid: int) -> None:
    """Collect planner's ended children of `uid`. Once the tools are closed, every such child
    is an orphan planner adopted: no Popen of planner's waits for it."""
    me = os.getpid()
    for process in process_table().values():
        if process.parent == me and process.uid == uid and process.state in GONE:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(process.pid, os.WNOHANG)


def descendants(table: dict[int, Process], ancestor: int) -> list[Process]:
    children: dict[int, list[Process]] = {}
    for process in table.values():
        children.setdefault(process.parent, []).append(process)
    found, queue = [], [ancestor]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child.pid)
    return found


def process_table() -> dict[int, Process]:
    """Every process /proc shows (none where there is no /proc)."""
    try:
        names = [entry.name for entry in os.scandir("/proc") if entry.name.isdigit()]
    except OSError:
        return {}
    table = {}
    for name in names:
        process = read_process(name)
        if process is not None:
            table[process.pid] = process
    return table


def read_process(pid: str) -> Process | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            # after "(comm)": state, parent, process group, session; comm may hold ")" itself
            fields = handle.read().rsplit(b")", 1)[1].split()
        with open(f"/proc/{pid}/status", "rb") as handle:
            uid_line = next(line for line in handle if line.startswith(b"Uid:"))
        uid = int(uid_line.split()[1])
        return Process(int(pid), int(fields[1]), fields[0].decode(), uid, int(fields[3]))
    except (OSError, IndexError, ValueError, StopIteration):
        return None
