"""What the CI runner gave the sandbox user outside the checkout, closed to it while tools run.

In GitHub's Docker action the runner's user owns the checkout, so tools run as that user, and
that user also owns what the runner mounts beside it:

- HOME (`/github/home`): planner's own git, running as root, reads its global config there. A
  program the model starts could plant `commit.gpgSign` with a `gpg.program` of its own (run as
  root by planner's next commit, next to the push and its token), a `url.<x>.insteadOf` or an
  `http.proxy`; later container steps of the job read the same HOME;
- the file commands (GITHUB_ENV, GITHUB_PATH, GITHUB_OUTPUT, GITHUB_STATE, GITHUB_STEP_SUMMARY):
  a line appended there sets the environment (`LD_PRELOAD`, `BASH_ENV`), the PATH or the outputs
  of every later step of the job, post steps included, and those steps hold tokens;
- the event payload (GITHUB_EVENT_PATH), which later steps read.

Files the job's environment names as credentials (credential_files: a service account key that
google-github-actions/auth writes into the checkout, a kubeconfig) are closed to the tools' user
too, whoever owns them: root's alone, mode 0600, while tools run.

While tools run, each of these that the sandbox user owns (HOME and XDG_CONFIG_HOME with
everything in them, each file command with its folder) belongs to root and is writable by no
one else; owners and modes come back when the tools close, after every process they started was
ended. Readers are unaffected: modes keep their read bits. If planner is killed before it can
give them back, the runner's next step cannot create its file commands and fails: closed, never
open.
"""

from __future__ import annotations

import logging
import os
import pwd
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from planner.text.redaction import SECRET_NAME_WORDS

log = logging.getLogger(__name__)

RUNNER_FILES = (
    "GITHUB_ENV",
    "GITHUB_PATH",
    "GITHUB_OUTPUT",
    "GITHUB_STATE",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_EVENT_PATH",
)
"""Files the runner reads after the step, or later steps read: each is closed with its folder."""
CONFIG_TREES = ("HOME", "XDG_CONFIG_HOME")
"""Folders whose configuration planner's own programs (git) read: closed with all they hold."""
CREDENTIAL_FILE_VARIABLES = (
    "KUBECONFIG",
    "NETRC",
    "PGPASSFILE",
    "GOOGLE_GHA_CREDS_PATH",
)
"""Variables that name a credential file without being named like a credential themselves (those
are: GOOGLE_APPLICATION_CREDENTIALS, AWS_SHARED_CREDENTIALS_FILE, AWS_WEB_IDENTITY_TOKEN_FILE)."""
MAX_ENTRIES = 1_000
"""A HOME larger than this is a person's or a machine's, not a job's: it is left as it is."""
SKIPPED = (
    "%s holds more than %d entries: left open to the tools' user, who can write %s, which "
    "planner's own git reads: %s"
)
GIT_CONFIG_PATHS = (".", ".gitconfig", ".config", ".config/git", ".config/git/config", "git")
"""What git reads (or where it would be created) under HOME or XDG_CONFIG_HOME."""
_warned: set[str] = set()
"""Trees named in SKIPPED already: once per process, not once per task."""


@dataclass(frozen=True)
class _Owner:
    path: str
    uid: int
    gid: int
    mode: int
    inode: tuple[int, int]
    """(device, inode): what is given back is the entry that was closed, not one put in its place
    (through a folder renamed by the tools' user, say)."""


@dataclass
class Fence:
    """The entries closed to the sandbox user, to give back."""

    closed: list[_Owner] = field(default_factory=list)

    def lift(self) -> None:
        """Owners and modes as they were, the deepest entries first."""
        for entry in reversed(self.closed):
            try:
                _set_owner(entry.path, entry.uid, entry.gid, entry.mode, entry.inode)
            except OSError as error:
                log.warning("could not give %s back to uid %d: %s", entry.path, entry.uid, error)
        self.closed.clear()


def fence(environments: list[Mapping[str, str]], uid: int, workspace: Path) -> Fence:
    """Close to `uid` what the runner gave it outside the checkout (the module's docstring);
    `environments`: planner's own and the job's."""
    closed = Fence()
    seen: set[str] = set()
    for path in _candidates(environments, str(workspace.resolve()), uid):
        if path not in seen:
            seen.add(path)
            _close(path, uid, closed)
    for env in environments:
        for path in credential_files(env, workspace):
            if path not in seen:
                seen.add(path)
                _close(path, None, closed)
    if closed.closed:
        log.info("closed %d runner file(s) to the tools' user while they run", len(closed.closed))
    return closed


def _candidates(environments: list[Mapping[str, str]], workspace: str, uid: int) -> Iterator[str]:
    walked: set[str] = set()  # planner's environment and the job's often share HOME: walk it once
    for env in environments:
        for name in RUNNER_FILES:
            if env.get(name):
                path = os.path.abspath(env[name])
                if not path.startswith(workspace.rstrip("/") + "/"):
                    yield os.path.dirname(path)
                    yield path
        for name in CONFIG_TREES:
            top = os.path.realpath(env[name]) if env.get(name) else ""
            if top and top not in walked:
                walked.add(top)
                yield from _tree(top, workspace, uid)


def _tree(top: str, workspace: str, uid: int) -> list[str]:
    """`top` and everything under it, folders before what they hold, symlinks not followed;
    nothing when it holds the checkout or more than MAX_ENTRIES (a person's own HOME under
    `sudo -E`: taking it over for the pass would do more harm than the config it guards)."""
    if workspace == top or workspace.startswith(top.rstrip("/") + "/"):
        return []
    entries: list[str] = []
    for directory, subdirectories, files in os.walk(top):
        entries += [
            os.path.normpath(os.path.join(directory, n)) for n in (".", *subdirectories, *files)
        ]
        if len(entries) > MAX_ENTRIES:
            _name_the_open_tree(top, uid)
            return []
    return entries


def _name_the_open_tree(top: str, uid: int) -> None:
    """Warn, once, when the tools' user owns what git reads in a tree too large to close; a
    tree it cannot write (HOME=/root, root's) needs nothing."""
    writable = [
        path
        for name in GIT_CONFIG_PATHS
        if _owned_by(path := os.path.normpath(os.path.join(top, name)), uid)
    ]
    if not writable or top in _warned:
        return
    _warned.add(top)
    root_home = os.path.realpath(pwd.getpwuid(0).pw_dir)
    if top != root_home:
        change = f"run planner with HOME={root_home} (sudo -H, not sudo -E)"
    else:
        change = f"give {top} back to root (chown root {' '.join(writable)})"
    log.warning(SKIPPED, top, MAX_ENTRIES, ", ".join(writable), change)


def _owned_by(path: str, uid: int) -> bool:
    try:
        return os.lstat(path).st_uid == uid
    except OSError:
        return False


def credential_files(env: Mapping[str, str], workspace: Path) -> list[str]:
    """The existing regular files `env` names as credentials: the value of a variable whose name
    holds a credential word (SECRET_NAME_WORDS) or is in CREDENTIAL_FILE_VARIABLES, relative
    paths taken from `workspace`. Real paths, links resolved."""
    found: list[str] = []
    for name, value in env.items():
        upper = name.upper()
        if not (any(w in upper for w in SECRET_NAME_WORDS) or name in CREDENTIAL_FILE_VARIABLES):
            continue  # not by prefix: GITHUB_* and INPUT_* name files that are no credentials
        for part in value.split(os.pathsep) if name == "KUBECONFIG" else [value]:
            if part and len(part) < 4096 and "\n" not in part and "\0" not in part:
                path = os.path.realpath(os.path.join(workspace, part))
                if os.path.isfile(path) and path not in found:
                    found.append(path)
    return found


def _close(path: str, uid: int | None, closed: Fence) -> None:
    """`path` root's and written by no one else when `uid` owns it; with `uid` None (a credential
    file), root's alone whoever owns it."""
    try:
        status = os.lstat(path)
        if stat.S_ISLNK(status.st_mode) or (uid is not None and status.st_uid != uid):
            return  # a link's target is closed, or not, on its own account
        mode = stat.S_IMODE(status.st_mode)
        closed_mode = mode & ~0o022 if uid is not None else mode & 0o700
        if status.st_uid == 0 and closed_mode == mode:
            return
        inode = (status.st_dev, status.st_ino)
        _set_owner(path, 0, 0, closed_mode, inode)
        closed.closed.append(_Owner(path, status.st_uid, status.st_gid, mode, inode))
    except OSError as error:
        log.warning("could not close %s to the tools' user: %s", path, error)


def _set_owner(path: str, uid: int, gid: int, mode: int, inode: tuple[int, int]) -> None:
    """Owner and mode of the entry at `path`, through a descriptor: never a link's target, and
    only while it is still the entry `inode` names."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        status = os.fstat(descriptor)
        if (status.st_dev, status.st_ino) != inode:
            raise OSError(f"{path} was replaced")
        os.fchown(descriptor, uid, gid)
        os.fchmod(descriptor, mode)
    finally:
        os.close(descriptor)
