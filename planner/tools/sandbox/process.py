"""planner's own process: made non-dumpable so no program it starts can read its secrets.

With PR_SET_DUMPABLE 0, /proc/<planner>/environ and /proc/<planner>/mem are refused to every
process of the same user that lacks CAP_SYS_PTRACE, and no core dump is written.
/proc/<pid>/environ always shows the *initial* environment, so deleting variables from
os.environ would not hide them. Standard library only: the CI entry point calls this first.
"""

from __future__ import annotations

import ctypes

PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4


def make_undumpable() -> bool:
    """Make this process non-dumpable (Linux); False where prctl is unavailable."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def is_dumpable() -> bool:
    try:
        return bool(ctypes.CDLL(None).prctl(PR_GET_DUMPABLE, 0, 0, 0, 0))
    except (OSError, AttributeError):
        return True
