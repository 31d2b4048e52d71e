"""What a command did to the working tree: snapshot → compare → (classify elsewhere) → rollback.

A command, an MCP server or the repository's test command runs code planner did not write, so
its effects are judged by what it changed, not by its name. TreeWatcher takes a snapshot before
the call and compares the tree with it afterwards; planner.approval.effects classifies the
changes with the approval gate's risk table and rolls back what a person must approve first.

Speed on big repositories: a snapshot is one stat() per file. A file's content is hashed only
when its stat data (size, mtime, ctime, inode, mode) changed since the watcher last hashed it,
or when it was written so recently that a change within the file system's timestamp resolution
could hide behind the same stat data (git's "racy" entries). Contents are kept for rollback
only where git cannot give them back: a file whose content is the blob git's index has for it
is restored from git's object store, any other file (the pass's own uncommitted work) is copied
once into a private folder, keyed by its hash. `.git`, build and cache outputs
(planner.tools.commands.build_outputs), untracked files git ignores (they never reach a commit: a
virtualenv is neither hashed nor copied) and planner's own state folders are not watched.

Usage::

    watcher = TreeWatcher(root, skip=(history_dir,))
    before = watcher.snapshot()
    result = run_the_command()
    changes = watcher.compare(before)      # [] when the tree is as it was
    watcher.rollback(before, changes)      # RollbackFailed when it cannot
    watcher.close()                        # deletes the copies
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from planner.tools.commands.build_outputs import is_build_output
from planner.tools.sandbox.safe_env import git_run

RACY_WINDOW_NS = 2_000_000_000
"""A file changed this close to when it was hashed is hashed again (coarse timestamps)."""
UNREADABLE = "unreadable:"
ChangeKind = Literal["create", "write", "delete"]
StatKey = tuple[int, int, int, int, int]


class RollbackFailed(Exception):
    """An effect could not be undone; the message names the path and why."""


@dataclass(frozen=True)
class FileState:
    """One file (or symlink) as it was: what it holds and whether it runs."""

    digest: str
    """git's blob id of the content, or `link:<target>` for a symlink."""
    size: int
    executable: bool = False

    @property
    def is_link(self) -> bool:
        return self.digest.startswith("link:")


@dataclass(frozen=True)
class Change:
    """A path whose state differs between two snapshots (None: absent)."""

    path: str
    """Relative to the workspace, POSIX style."""
    before: FileState | None
    after: FileState | None

    @property
    def kind(self) -> ChangeKind:
        if self.after is None:
            return "delete"
        return "create" if self.before is None else "write"


@dataclass
class Snapshot:
    files: dict[str, FileState]
    taken_ns: int
    ignored: frozenset[str] = frozenset()
    """Untracked paths git ignores when the snapshot was taken (folders end in "/")."""


@dataclass
class _Hashed:
    key: StatKey
    state: FileState
    at_ns: int


@dataclass
class TreeWatcher:
    root: Path
    skip: Sequence[Path] = ()
    """Folders planner writes itself (its history, its state): not watched."""
    _cache: dict[str, _Hashed] = field(default_factory=dict)
    _restorable: dict[str, str] = field(default_factory=dict)
    """path → the content a rollback can give back (from git or from a kept copy)."""
    _copies: Path | None = None

    def __post_init__(self) -> None:
        self.root = self.root.resolve()
        self.skip = tuple(Path(p).resolve() for p in self.skip)

    # -- snapshot and compare ----------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The tree now, with a copy of every file that git could not give back."""
        taken = time.time_ns()
        ignored = self._ignored()
        files = self._states(ignored)
        unchecked = {p: s for p, s in files.items() if self._restorable.get(p) != s.digest}
        in_git = self._index_blobs() if unchecked else {}
        for path, state in unchecked.items():
            if not state.is_link and in_git.get(path) != state.digest:
                self._keep_copy(path, state)
            self._restorable[path] = state.digest
        return Snapshot(files, taken, ignored)

    def compare(self, before: Snapshot) -> list[Change]:
        """Every path whose content, kind or executable bit differs from `before`, sorted."""
        after = self._states(before.ignored | self._ignored())  # files ignored when created
        paths = sorted(before.files.keys() | after.keys())
        return [
            Change(path, before.files.get(path), after.get(path))
            for path in paths
            if before.files.get(path) != after.get(path)
        ]

    def _states(self, ignored: frozenset[str]) -> dict[str, FileState]:
        states: dict[str, FileState] = {}
        now = time.time_ns()
        for relative, info in self._walk(self.root, (), ignored):
            states[relative] = self._state(relative, info, now)
        for gone in self._cache.keys() - states.keys():
            del self._cache[gone]
        return states

    def _state(self, relative: str, info: os.stat_result, now: int) -> FileState:
        key: StatKey = (info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
        cached = self._cache.get(relative)
        if cached is not None and cached.key == key and not _racy(info, cached.at_ns):
            return cached.state
        state = _read_state(self.root / relative, info)
        self._cache[relative] = _Hashed(key, state, now)
        return state

    def _walk(
        self, folder: Path, parts: tuple[str, ...], ignored: frozenset[str]
    ) -> Iterator[tuple[str, os.stat_result]]:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            here = (*parts, entry.name)
            if self._skipped(entry, here, ignored):
                continue
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                yield from self._walk(Path(entry.path), here, ignored)
            elif stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
                yield "/".join(here), info

    def _skipped(
        self, entry: os.DirEntry[str], parts: tuple[str, ...], ignored: frozenset[str]
    ) -> bool:
        if entry.name.casefold() == ".git" or is_build_output(parts):
            return True
        relative = "/".join(parts)
        if relative in ignored or f"{relative}/" in ignored:
            return True
        return bool(self.skip) and Path(entry.path) in self.skip

    # -- contents --------------------------------------------------------------------------

    def before_bytes(self, state: FileState) -> bytes:
        """The content a snapshot saw (a symlink's target for a link)."""
        if state.is_link:
            return state.digest.removeprefix("link:").encode("utf-8", "surrogateescape")
        copy = self._copy_path(state.digest)
        content = (
            copy.read_bytes() if copy.is_file() else self._git("cat-file", "blob", state.digest)
        )
        if _blob_id(content) != state.digest:  # a command of the same user may reach the copies
            raise RollbackFailed(f"the saved content {state.digest[:12]} was changed or is gone")
        return content

    def after_bytes(self, change: Change) -> bytes:
        if change.after is None:
            return b""
        path = self.root / change.path
        if change.after.is_link:
            return os.readlink(path).encode("utf-8", "surrogateescape")
        return path.read_bytes()

    def _keep_copy(self, relative: str, state: FileState) -> None:
        target = self._copy_path(state.digest)
        if target.exists() or state.digest.startswith(UNREADABLE):
            return
        partial = target.with_suffix(".part")
        shutil.copyfile(self.root / relative, partial, follow_symlinks=False)
        partial.rename(target)

    def _copy_path(self, digest: str) -> Path:
        if self._copies is None:
            self._copies = Path(tempfile.mkdtemp(prefix="planner-effects-"))
        return self._copies / digest

    def close(self) -> None:
        if self._copies is not None:
            shutil.rmtree(self._copies, ignore_errors=True)
            self._copies = None

    # -- rollback ----------------------------------------------------------------------------

    def rollback(self, changes: Sequence[Change]) -> None:
        """Put every changed path back as the snapshot saw it; RollbackFailed if one cannot be."""
        for change in sorted(changes, key=lambda c: c.path.count("/"), reverse=True):
            if change.after is not None:
                self._remove(change.path)
        for change in changes:
            if change.before is not None:
                self._restore(change.path, change.before)

    def _remove(self, relative: str) -> None:
        path = self.root / relative
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.is_symlink() or path.exists():
                path.unlink()
        except OSError as exc:
            raise RollbackFailed(f"could not remove {relative!r}: {exc.strerror or exc}") from exc

    def _restore(self, relative: str, state: FileState) -> None:
        try:
            content = self.before_bytes(state)
            folder = self._real_folder(relative)
            target = folder / relative.rsplit("/", 1)[-1]
            self._remove(relative)
            if state.is_link:
                os.symlink(content.decode("utf-8", "surrogateescape"), target)
                return
            _write_new(target, content, state.executable)
        except (OSError, subprocess.CalledProcessError, RollbackFailed) as exc:
            raise RollbackFailed(f"could not restore {relative!r}: {exc}") from exc

    def _real_folder(self, relative: str) -> Path:
        """The file's folder as real directories: a symlink or file the command put where a
        folder was is removed (never followed), so a restore cannot write outside the tree."""
        folder = self.root
        for part in relative.split("/")[:-1]:
            folder = folder / part
            if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
                folder.unlink()
            if not folder.exists():
                folder.mkdir()
        return folder

    # -- git -----------------------------------------------------------------------------------

    def _ignored(self) -> frozenset[str]:
        """Untracked paths git ignores (a virtualenv, local data): they never reach a commit, so
        what a command does to them is not an effect, and they are neither hashed nor copied."""
        try:
            listed = self._git(
                "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"
            )
        except (OSError, subprocess.CalledProcessError):
            return frozenset()
        return frozenset(listed.decode("utf-8", "surrogateescape").split("\0")) - {""}

    def _index_blobs(self) -> dict[str, str]:
        """path → blob id in git's index (read without running any repository filter)."""
        try:
            listed = self._git("ls-files", "-s", "-z")
        except (OSError, subprocess.CalledProcessError):
            return {}
        blobs = {}
        for record in listed.decode("utf-8", "surrogateescape").split("\0"):
            header, _, path = record.partition("\t")
            fields = header.split()
            if len(fields) == 3:
                blobs[path] = fields[1]
        return blobs

    def _git(self, *args: str) -> bytes:
        return git_run(self.root, *args, check=True).stdout


def _read_state(path: Path, info: os.stat_result) -> FileState:
    try:
        if stat.S_ISLNK(info.st_mode):
            target = os.readlink(path)
            return FileState(f"link:{target}", len(target))
        digest = hashlib.sha1(f"blob {info.st_size}\0".encode(), usedforsecurity=False)
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:  # unreadable or gone: judged by its stat data, and never restorable
        return FileState(f"{UNREADABLE}{info.st_size}:{info.st_mtime_ns}", info.st_size)
    return FileState(digest.hexdigest(), info.st_size, bool(info.st_mode & 0o111))


def _blob_id(content: bytes) -> str:
    blob = hashlib.sha1(f"blob {len(content)}\0".encode(), usedforsecurity=False)
    blob.update(content)
    return blob.hexdigest()


def _racy(info: os.stat_result, hashed_at_ns: int) -> bool:
    return max(info.st_mtime_ns, info.st_ctime_ns) >= hashed_at_ns - RACY_WINDOW_NS


def _write_new(target: Path, content: bytes, executable: bool) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    handle = os.open(target, flags, 0o755 if executable else 0o644)
    with os.fdopen(handle, "wb") as out:
        out.write(content)
