"""What planner trusts in the checkout stays root's while tools run as another user.

planner, running as root, reads and runs `.git` (its config, refs and index: every git command
it runs, the commit and the push with the token) and its history (plans, approvals). Tools run
as the sandbox user (planner.tools.sandbox.isolation), and in GitHub's Docker action that user owns
the checkout: it could rewrite `.git/config` (a proxy that reads the push's token, a filter that
planner's own `git status` runs as root) or append an approval to the history. Owning the folder
above them is enough too: `mv .git .git.old && cp -r .git.old .git` gives a user a `.git` of
its own.

So while tools run:
- every kept path (`.git`, the history, planner's state) and everything in it belongs to root,
  writable by no one else;
- the checkout folder, and every folder between it and a kept path, belongs to root with the
  tools' group, group-writable and sticky: tools still create, rename and delete their own
  entries there, but the kernel refuses them renaming or deleting one they do not own (the
  sticky bit), so no kept path can be swapped for one of theirs.
Owners and modes are given back when the tools close (after every process they started has
ended); what planner itself created in a kept tree meanwhile (new objects and refs) goes to that
tree's owner. A planner killed before that leaves them root's: closed, never open.
"""

from __future__ import annotations

import logging
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

SHARED = stat.S_ISVTX | stat.S_IRWXG
"""What a held folder gains: the sticky bit, and the tools' group may list and create."""
WRITABLE_BY_OTHERS = stat.S_IWGRP | stat.S_IWOTH


@dataclass(frozen=True)
class _Held:
    path: str
    uid: int
    gid: int
    mode: int
    inode: tuple[int, int]


@dataclass
class Lock:
    """What lock_checkout() changed, to give back."""

    folders: list[_Held] = field(default_factory=list)
    """The checkout folder and the folders between it and a kept path."""
    entries: list[_Held] = field(default_factory=list)
    """Every entry of a kept tree whose owner or mode changed."""
    trees: list[_Held] = field(default_factory=list)
    """The top of each kept tree as it was: what planner creates in it goes to its owner."""

    def release(self) -> None:
        """Owners and modes as they were; new entries of a kept tree to the tree's owner."""
        for tree in self.trees:
            if tree.uid != 0:
                _give_new_entries(tree)
        for held in reversed([*self.folders, *self.entries]):
            try:
                _restore(held)
            except OSError as error:
                log.warning("could not give %s back to uid %d: %s", held.path, held.uid, error)
        self.folders.clear()
        self.entries.clear()
        self.trees.clear()


def lock_checkout(workspace: Path, keep: tuple[Path, ...], tools_gid: int) -> Lock:
    """Make the kept paths inside `workspace` root's, and every folder from the workspace down
    to them root's, sticky and writable by `tools_gid` (the module's docstring)."""
    root = Path(os.path.realpath(workspace))
    lock = Lock()
    _hold_folder(root, tools_gid, lock)
    for path in keep:
        target = Path(os.path.realpath(path))
        if not target.is_relative_to(root) or target == root or not os.path.lexists(target):
            continue
        for depth in range(1, len(target.relative_to(root).parts)):
            _hold_folder(root.joinpath(*target.relative_to(root).parts[:depth]), tools_gid, lock)
        _take_tree(target, tools_gid, lock)
    return lock


def _hold_folder(path: Path, tools_gid: int, lock: Lock) -> None:
    if any(held.path == str(path) for held in lock.folders):
        return
    status = os.lstat(path)
    if not stat.S_ISDIR(status.st_mode):
        return
    lock.folders.append(_held(str(path), status))
    os.lchown(path, 0, tools_gid)
    os.chmod(path, (stat.S_IMODE(status.st_mode) | SHARED) & ~stat.S_IWOTH)


def _take_tree(top: Path, tools_gid: int, lock: Lock) -> None:
    status = os.lstat(top)
    lock.trees.append(_held(str(top), status))
    _take(str(top), status, tools_gid, lock)
    if not stat.S_ISDIR(status.st_mode):
        return
    for directory, subdirectories, files in os.walk(top):
        for name in (*subdirectories, *files):
            path = os.path.join(directory, name)
            try:
                _take(path, os.lstat(path), tools_gid, lock)
            except OSError:
                continue


def _take(path: str, status: os.stat_result, tools_gid: int, lock: Lock) -> None:
    """`path` root's, writable by no one else (its group's write bit only matters when that
    group is the tools' one, but no kept entry needs it)."""
    mode = stat.S_IMODE(status.st_mode)
    owned = status.st_uid == 0 and status.st_gid != tools_gid
    if owned and not mode & WRITABLE_BY_OTHERS:
        return
    lock.entries.append(_held(path, status))
    os.lchown(path, 0, 0 if status.st_gid == tools_gid else status.st_gid)
    if not stat.S_ISLNK(status.st_mode):
        os.chmod(path, mode & ~WRITABLE_BY_OTHERS)


def _give_new_entries(tree: _Held) -> None:
    """Entries root owns in a kept tree whose top was another user's: planner's own writes
    (objects, refs, the index) during the pass. Entries taken by the lock are restored after."""
    paths = [tree.path]
    if os.path.isdir(tree.path) and not os.path.islink(tree.path):
        for directory, subdirectories, files in os.walk(tree.path):
            paths += [os.path.join(directory, name) for name in (*subdirectories, *files)]
    for path in paths:
        try:
            if os.lstat(path).st_uid == 0:
                os.lchown(path, tree.uid, tree.gid)
        except OSError:
            continue


def _held(path: str, status: os.stat_result) -> _Held:
    return _Held(path, status.st_uid, status.st_gid, status.st_mode, (status.st_dev, status.st_ino))


def _restore(held: _Held) -> None:
    """Through a descriptor opened without following links, on the very entry that was held."""
    if stat.S_ISLNK(held.mode):
        status = os.lstat(held.path)
        if (status.st_dev, status.st_ino) == held.inode:
            os.lchown(held.path, held.uid, held.gid)
        return
    fd = os.open(held.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        status = os.fstat(fd)
        if (status.st_dev, status.st_ino) != held.inode:
            log.warning("%s was replaced while tools ran; it is left as it is", held.path)
            return
        os.fchown(fd, held.uid, held.gid)
        os.fchmod(fd, stat.S_IMODE(held.mode))
    finally:
        os.close(fd)
