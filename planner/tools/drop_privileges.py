"""`python -I -S drop_privileges.py UID GID -- PROGRAM ARGS...`: run PROGRAM as UID:GID.

Used for MCP servers, whose spawner takes no user argument (run_command uses Popen's own
user/group arguments). Standalone on purpose: it must run before any of planner is imported and
with `-I -S` (no PYTHON* variables, no site packages, no current directory on sys.path).
"""

# os.execvp imports `warnings` lazily; after the switch the interpreter's own library may be
# unreadable (a Python installed under /root), so it is imported before.
import os
import sys
import warnings  # noqa: F401


def main(argv: list[str]) -> None:
    if len(argv) < 5 or argv[3] != "--":
        sys.exit("usage: drop_privileges.py UID GID -- PROGRAM [ARGS...]")
    uid, gid, program = int(argv[1]), int(argv[2]), argv[4:]
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)  # after setgid: once the uid is dropped, the gid can no longer change
    if os.getuid() != uid or os.geteuid() != uid:
        sys.exit("drop_privileges.py: the user did not change")
    os.execvp(program[0], program)


if __name__ == "__main__":
    main(sys.argv)
