"""Keeping planner's secrets out of reach of every program the model can start.

Four layers, each closing routes the others leave open (README, "Secret isolation"):

1. An allow-listed environment (planner.tools.sandbox.safe_env) for run_command, MCP servers and
   git.
2. planner's own process is made non-dumpable (prctl PR_SET_DUMPABLE 0): /proc/<planner>/environ
   and /proc/<planner>/mem are then refused to every process of the same user that lacks
   CAP_SYS_PTRACE, and planner leaves no core dump. /proc/self/environ always shows the
   *initial* environment, so deleting variables from os.environ would not help.
3. When planner runs as root (the Docker action, a GitLab job in a container), commands and MCP
   servers run as another, unprivileged user (SandboxUser): the kernel refuses a different uid
   the environment, memory and file descriptors of planner, of the CI job's shell above it and of
   the git push planner starts, whatever their dumpable flag, and the switch drops every
   capability (CAP_SYS_PTRACE included). Tools never fall back to root, not even where that
   user cannot reach the workspace by its path (_reaching). They get a HOME of their own, and
   what the runner gave that user beside the checkout (planner's HOME, GitHub's file commands)
   is closed to it meanwhile (planner.tools.sandbox.fence), and so are `.git` and planner's history
   inside it, whoever owns the checkout (planner.tools.sandbox.lock). When the tools close, every
   process of that user they started is killed, however it detached
   (planner.tools.sandbox.leftovers).
4. Credentials the checkout left behind are removed before any tool runs
   (scrub_checkout_credentials): actions/checkout's `http.<url>.extraheader`, wherever it is
   included from, and the job token in the userinfo of GitLab's origin URL.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from planner.tools.sandbox.fence import Fence, fence
from planner.tools.sandbox.lock import Lock, lock_checkout
from planner.tools.sandbox.process import make_undumpable
from planner.tools.sandbox.safe_env import git_environment, git_text, scrubbed_environment

log = logging.getLogger(__name__)

NOBODY = 65534
LAUNCHER = Path(__file__).with_name("drop_privileges.py")
"""A standalone script (no planner imports) that switches user, then execs the program."""
CREDENTIAL_KEYS = r"^http\..*extraheader$"
URL_KEYS = r"^(remote\..*\.(url|pushurl)|submodule\..*\.url)$"
UNREACHABLE = (
    "tools run as uid %d in %s, but a parent directory of it is closed to that user (no o+x) "
    "and it could not be mounted back in reach (%s): tools start inside it, yet programs that "
    "look it up by its full path (git, python, pytest) fail with 'Permission denied'. Make "
    "every parent directory searchable (chmod o+x), check out elsewhere, or give planner "
    "CAP_SYS_ADMIN. tools.sandbox_user: off runs tools as root, where they can read the CI "
    "job's environment."
)
"""Logged when tools run as the sandbox user in a workspace it can only use as its working
directory (_reaching)."""


@dataclass(frozen=True)
class SandboxUser:
    """The unprivileged user tool processes run as."""

    uid: int
    gid: int
    home: str
    reach: str = ""
    """The workspace, when this user cannot look it up by its path: tools then start through the
    launcher, which mounts it back at that path in a namespace of their own (drop_privileges)."""

    def environment(self) -> dict[str, str]:
        """What tools running as this user need on top of the allow-listed environment: their
        own HOME, and git's consent to read a repository whose `.git` stays root's."""
        return {
            "HOME": self.home,
            "GIT_CONFIG_COUNT": "1",
            "GIT_CONFIG_KEY_0": "safe.directory",
            "GIT_CONFIG_VALUE_0": "*",
        }

    def popen_arguments(self) -> dict[str, Any]:
        """subprocess.Popen arguments that start the child as this user, no extra groups."""
        return {"user": self.uid, "group": self.gid, "extra_groups": []}

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv` started through the launcher (for spawners that take no user argument)."""
        reach = ["--reach", self.reach] if self.reach else []
        user = [str(self.uid), str(self.gid), *reach]
        return [sys.executable, "-I", "-S", str(LAUNCHER), *user, "--", *argv]

    def start(self, argv: list[str]) -> tuple[list[str], dict[str, Any]]:
        """The argv and Popen arguments that run `argv` as this user: Popen's own switch, or the
        launcher when the workspace must first be made reachable."""
        return (self.wrap(argv), {}) if self.reach else (argv, self.popen_arguments())


def choose_sandbox_user(setting: str, workspace: Path) -> SandboxUser | None:
    """The user of `tools.sandbox_user` for this workspace; None when not root or `off`."""
    if setting == "off" or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    if setting == "auto":
        # Never the owner's group: a GitHub-hosted runner's user has the group `docker`, and
        # the runner mounts the Docker socket (root:docker, 0660) into a Docker action. Never
        # the uid of a process above planner (`sudo planner` from the owner's job shell): that
        # process's environment holds the job's tokens, and its user may have sudo.
        owner = workspace.stat().st_uid
        uid = owner if owner not in (0, *_ancestor_uids()) else NOBODY
        gid = NOBODY
    else:
        uid_text, _, gid_text = setting.partition(":")
        uid, gid = int(uid_text), int(gid_text or uid_text)
    if uid == 0:
        return None
    return SandboxUser(uid, gid, _home_for(uid, gid))


def _ancestor_uids() -> set[int]:
    """Every uid (real, effective, saved, filesystem) of planner's ancestors, from /proc."""
    uids: set[int] = set()
    pid = os.getppid()
    while pid > 1:
        try:
            status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
        except OSError:
            break
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        uids.update(int(uid) for uid in fields.get("Uid", "").split())
        pid = int(fields.get("PPid", "0").strip() or 0)
    return uids


def _home_for(uid: int, gid: int) -> str:
    """A HOME of the tools' own, never planner's: planner's git reads its global config there
    (a Docker action's HOME belongs to the runner's user, whom tools run as:
    planner.tools.sandbox.fence)
    """
    home = tempfile.mkdtemp(prefix=f"planner-home-{uid}-")
    os.chown(home, uid, gid)
    return home


def hand_over(
    workspace: Path, user: SandboxUser, keep: tuple[Path, ...], held: frozenset[str] = frozenset()
) -> int:
    """Let `user` write the workspace: chown what it does not own, except `keep` (planner's
    history and state stay root's, out of the tools' reach) and the `held` folders (the lock's:
    root's, shared with the tools' group). Returns the count changed."""
    kept = {os.path.realpath(path) for path in keep}
    changed = 0
    for directory, subdirectories, files in os.walk(os.path.realpath(workspace)):
        subdirectories[:] = [d for d in subdirectories if os.path.join(directory, d) not in kept]
        for name in (".", *subdirectories, *files):
            path = os.path.normpath(os.path.join(directory, name))
            if path not in held and path not in kept:
                changed += _chown_one(path, user)
    return changed


def _chown_one(path: str, user: SandboxUser) -> int:
    try:
        if os.lstat(path).st_uid == user.uid:
            return 0
        os.lchown(path, user.uid, user.gid)
    except OSError:
        return 0
    return 1


def scrub_checkout_credentials(workspace: Path) -> list[str]:
    """Remove tokens the checkout stored in git config (any included file); what was removed."""
    removed: list[str] = []
    for origin, key, _value in _config_entries(workspace, CREDENTIAL_KEYS):
        _git_config(workspace, "--file", origin, "--unset-all", key)
        removed.append(f"{key} in {origin}")
    for origin, key, value in _config_entries(workspace, URL_KEYS):
        clean = _without_userinfo(value)
        if clean != value:
            _git_config(
                workspace, "--file", origin, "--fixed-value", "--replace-all", key, clean, value
            )
            removed.append(f"the credentials in {key} in {origin}")
    if removed:
        log.info("removed checkout credentials: %s", "; ".join(removed))
    return removed


def _config_entries(workspace: Path, pattern: str) -> list[tuple[str, str, str]]:
    """(file, key, value) of every matching setting git reads in `workspace` from a file."""
    listed = _git_config(
        workspace, "--includes", "--show-origin", "-z", "--get-regexp", pattern
    ).stdout
    fields = listed.split("\0")
    entries = []
    for origin, pair in zip(fields[::2], fields[1::2], strict=False):
        if origin.startswith("file:"):
            key, _, value = pair.partition("\n")
            entries.append((origin.removeprefix("file:"), key, value))
    return entries


def _git_config(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return git_text(workspace, "config", *args)


def _without_userinfo(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.password and not parts.username:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def private_folder(prefix: str, user: SandboxUser | None) -> Path:
    """A new folder in planner's temporary folder, owned by the user the tools run as, for
    one pass's commands (their TMPDIR, the tests' virtual environment); the caller removes it."""
    directory = Path(tempfile.mkdtemp(prefix=prefix))
    if user is not None:
        os.chown(directory, user.uid, user.gid)
    return directory


def reachable_by_others(path: Path) -> bool:
    """Whether a user other than the owner can reach `path`: every directory the lookup passes
    through is o+x, links followed hop by hop as the kernel does (a venv's `python` links into
    the installation it was made from, which may lie under a mode-700 home), and so is the
    path itself."""
    real, closed = _lookup(path)
    if real is None or closed is not None:
        return False
    try:
        return bool(real.stat().st_mode & 0o001)
    except OSError:
        return False


def _lookup(path: Path, depth: int = 0) -> tuple[Path | None, Path | None]:
    """(where `path` really is, the first directory on the way others may not search); the
    real path is None when the lookup cannot finish (a loop, a missing link target)."""
    if depth > 40:
        return None, None
    current = Path("/")
    for name in Path(os.path.abspath(path)).parts[1:]:
        try:
            if not current.stat().st_mode & 0o001:
                return current, current
            step = current / name
            if not step.is_symlink():
                current = step
                continue
            found, closed = _lookup(current / os.readlink(step), depth + 1)
        except OSError:
            return None, None
        if found is None or closed is not None:
            return found, closed
        current = found
    return current, None


def interpreter_paths(python: Path) -> list[Path]:
    """What running `python` takes: the interpreter and, for a virtual environment, the
    installation its pyvenv.cfg names (`home`, `executable`), where the standard library is."""
    paths = [python]
    for config in (python.parent / "pyvenv.cfg", python.parent.parent / "pyvenv.cfg"):
        try:
            lines = config.read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        for line in lines:
            key, _, value = line.partition("=")
            if key.strip() in ("home", "executable") and value.strip():
                paths.append(Path(value.strip()))
        break
    return paths


def unreachable_interpreter(python: Path) -> str:
    """'' when another user can run `python`; else what that user cannot reach, and the fix."""
    for path in interpreter_paths(python):
        if reachable_by_others(path):
            continue
        closed = _lookup(path)[1] or path
        # A venv's python needs its base installation; a plain interpreter needs only itself.
        what = f"{python}, which" if path == python else f"{python} needs {path}, which"
        return (
            f"{what} other users cannot reach ({closed} is closed to "
            "them): tools that run it as the sandbox user fail with 'Permission denied'. "
            "Install Python where every user can run it (e.g. /usr/local), or "
            f"`chmod o+x {closed}`, or make the virtual environment from such a Python."
        )
    return ""


def hand_back(workspace: Path, user: SandboxUser, owner: tuple[int, int]) -> int:
    """Give what `user` owns in the workspace back to `owner` (uid, gid); the count changed."""
    changed = 0
    for directory, subdirectories, files in os.walk(workspace):
        for name in (".", *subdirectories, *files):
            path = os.path.join(directory, name)
            try:
                if os.lstat(path).st_uid == user.uid:
                    os.lchown(path, *owner)
                    changed += 1
            except OSError:
                continue
    return changed


def trust_for_git(workspace: Path) -> None:
    """planner's own git must keep working in a tree the sandbox user now owns."""
    subprocess.run(
        ["git", "config", "--global", "--add", "safe.directory", str(workspace.resolve())],
        capture_output=True,
        env=git_environment(os.environ),
    )


@dataclass
class Isolation:
    """The isolation of one pass: who tools run as, and how to undo the hand-over."""

    user: SandboxUser | None
    undo: tuple[int, int] | None = None
    """The workspace's owner to give the tree back to when it was handed over."""
    fenced: Fence = field(default_factory=Fence)
    """What the runner gave the tools' user outside the checkout, closed to it meanwhile."""
    locked: Lock = field(default_factory=Lock)
    """`.git`, the history and the folders above them, root's meanwhile
    (planner.tools.sandbox.lock)."""

    def close(self, workspace: Path) -> None:
        if self.user is not None and self.undo is not None:
            hand_back(workspace, self.user, self.undo)
        self.locked.release()
        self.fenced.lift()
        if self.user is not None:
            shutil.rmtree(self.user.home, ignore_errors=True)


def isolate(
    setting: str,
    workspace: Path,
    keep: tuple[Path, ...],
    *,
    programs: bool,
    environment: Mapping[str, str] | None = None,
) -> Isolation:
    """Set up isolation before any tool starts: planner non-dumpable, checkout credentials gone
    (when tools can run programs), and the user tools run as, the workspace handed to it when
    root owns it, what the runner gave that user outside the checkout closed to it (`environment`:
    the job's). Never falls back to root, not even when that user cannot reach the workspace by
    its path (_reaching)."""
    make_undumpable()
    if programs:
        scrub_checkout_credentials(workspace)
    user = choose_sandbox_user(setting, workspace) if programs else None
    if user is None:
        return Isolation(None)
    if not reachable_by_others(workspace.resolve().parent):
        user = _reaching(user, workspace)
    owner = workspace.stat()
    # In this order, undone in the reverse one (Isolation.close): a credential file inside the
    # checkout is the fence's (root's alone) before the lock looks at what it keeps.
    fenced = fence([os.environ, environment or {}], user.uid, workspace)
    locked = lock_checkout(workspace, keep, user.gid)
    undo = None
    if owner.st_uid != user.uid:
        trust_for_git(workspace)
        held = frozenset(folder.path for folder in locked.folders)
        hand_over(workspace, user, keep, held)
        undo = (owner.st_uid, owner.st_gid)
    return Isolation(user, undo, fenced, locked)


def _reaching(user: SandboxUser, workspace: Path) -> SandboxUser:
    """`user` for a workspace under a directory it cannot enter: through the launcher's mount
    when the kernel allows it, else started in the workspace by root's chdir (which no path
    lookup follows), with a warning. Never root: a root tool reads /proc/<pid>/environ of every
    dumpable root process whose capabilities it holds, such as the CI job's shell in a container."""
    reaching = replace(user, reach=str(workspace.resolve()))
    env = scrubbed_environment(os.environ)
    probe = subprocess.run(reaching.wrap(["true"]), env=env, capture_output=True, text=True)
    if probe.returncode == 0:
        log.info("tools reach %s through a mount of their own (a parent is closed)", workspace)
        return reaching
    log.warning(UNREACHABLE, user.uid, workspace, probe.stderr.strip())
    return user
