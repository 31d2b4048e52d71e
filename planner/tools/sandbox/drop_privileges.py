"""`python -I -S drop_privileges.py UID GID [--reach WORKSPACE] -- PROGRAM ARGS...`: run PROGRAM
as UID:GID.

Used for MCP servers, whose spawner takes no user argument, and for every tool when the
workspace lies under a directory UID cannot enter (`--reach`). Standalone on purpose: it must run
before any of planner is imported and with `-I -S` (no PYTHON* variables, no site packages, no
current directory on sys.path).

`--reach`: in a mount namespace of its own, the highest directory on the way to WORKSPACE that
other users cannot enter is covered with an empty tmpfs they can enter, and WORKSPACE is mounted
back at its own path. The program then finds the workspace under its usual absolute path (git,
pytest and python look it up), and nothing else of that closed directory. Needs CAP_SYS_ADMIN;
without it the launcher exits before starting anything.
"""

# After the switch, or once a tmpfs covers it, the interpreter's own library may be out of reach
# (a Python installed under /root), so what runs after is imported before: os.execvp imports
# `warnings` lazily.
import ctypes
import os
import sys
import warnings  # noqa: F401

CLONE_NEWNS = 0x00020000
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000


def main(argv: list[str]) -> None:
    uid, gid, reach, program = parse(argv)
    if reach:
        open_path(reach)
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)  # after setgid: once the uid is dropped, the gid can no longer change
    if os.getuid() != uid or os.geteuid() != uid:
        sys.exit("drop_privileges.py: the user did not change")
    try:
        os.execvp(program[0], program)
    except OSError as exc:  # a shell's answer, not a traceback of the launcher
        print(f"drop_privileges.py: {program[0]}: {exc.strerror}", file=sys.stderr)
        sys.exit(127)


def parse(argv: list[str]) -> tuple[int, int, str, list[str]]:
    """(uid, gid, workspace to reach or "", program) from the command line."""
    split = argv.index("--") if "--" in argv else len(argv)
    options, program = argv[3:split], argv[split + 1 :]
    reach_option = len(options) == 2 and options[0] == "--reach"
    if len(argv) < 3 or not program or (options and not reach_option):
        sys.exit("usage: drop_privileges.py UID GID [--reach WORKSPACE] -- PROGRAM [ARGS...]")
    return int(argv[1]), int(argv[2]), options[1] if options else "", program


def open_path(workspace: str) -> None:
    """Make `workspace` reachable by its own path in a private mount namespace (module doc)."""
    closed = highest_closed(workspace)
    here = os.getcwd()
    libc = ctypes.CDLL(None, use_errno=True)
    checked(libc.unshare(CLONE_NEWNS), "unshare")
    # Private first: nothing mounted below may show in the namespace planner and the job run in.
    checked(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate")
    # Opened in the new namespace (a bind takes its source from the caller's own), as root,
    # before the tmpfs hides it.
    handle = os.open(workspace, os.O_PATH | os.O_DIRECTORY)
    checked(libc.mount(b"tmpfs", closed.encode(), b"tmpfs", 0, b"mode=755"), f"tmpfs on {closed}")
    os.umask(0o022)
    os.makedirs(workspace, exist_ok=True)
    source = f"/proc/self/fd/{handle}".encode()
    checked(libc.mount(source, workspace.encode(), None, MS_BIND | MS_REC, None), "bind mount")
    os.close(handle)
    os.chdir(here if f"{here}/".startswith(f"{workspace}/") else workspace)


def highest_closed(workspace: str) -> str:
    """The directory nearest `/` on the way to `workspace` that lacks o+x."""
    parts = workspace.strip("/").split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        directory = "/" + "/".join(parts[:depth])
        if not os.stat(directory).st_mode & 0o001:
            return directory
    sys.exit(f"drop_privileges.py: every directory above {workspace} is open already")


def checked(result: int, what: str) -> None:
    if result != 0:
        sys.exit(f"drop_privileges.py: {what} failed: {os.strerror(ctypes.get_errno())}")


if __name__ == "__main__":
    main(sys.argv)
