"""Path confinement: every path a tool touches resolves inside the workspace.

A refusal names the rule it applied, so the model (and a person reading the history) knows why:

- no-nul-bytes, no-absolute-paths, no-parent-segments: the path as written;
- no-encoded-escapes: percent-decoding the path would break one of the rules above (the path is
  used literally, so `a%20b` means a file called `a%20b`, but `%2e%2e/` is still refused);
- inside-workspace: after following symlinks the path leaves the workspace;
- no-git-dir: any `.git` segment, compared case-insensitively as a case-insensitive file system
  would (`.GIT/config`, `sub/.git/hooks`);
- protected-path: planner's own state (history), and for writes its tool configuration;
- no-workflow-edits: writes to CI definitions (`.github/workflows/`, `.github/actions/`,
  `.gitlab-ci.yml`) unless `tools.allow_workflow_edits` is set.

planner.ci.branch.commit_policy applies the same rules (git_segment, ci_definition) to the commit.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

DRIVE = re.compile(r"^[A-Za-z]:")
CI_DEFINITIONS = ((".github", "workflows"), (".github", "actions"), (".gitlab-ci.yml",))
"""Workflows, the composite actions they run, and GitLab's pipeline: CI that runs with secrets."""
NO_FOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC


def open_beneath(
    root: Path, parts: tuple[str, ...], flags: int, *, make_parents: bool = False
) -> int:
    """A descriptor for `root`/`parts`, opened one component at a time from `root` without
    following any link (OSError when a component is a link, or missing)."""
    *folders, name = parts
    directory = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for folder in folders:
            if make_parents:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(folder, 0o777, dir_fd=directory)
            inner = os.open(folder, NO_FOLLOW | os.O_RDONLY | os.O_DIRECTORY, dir_fd=directory)
            os.close(directory)
            directory = inner
        return os.open(name, flags | NO_FOLLOW, 0o666, dir_fd=directory)
    finally:
        os.close(directory)


def read_in_tree(root: Path, relative: str | Path, limit: int = -1) -> bytes | None:
    """The bytes (at most `limit`) of the regular file `relative` beneath `root`, opened without
    following any link: None when it is missing, not a regular file, or behind a link. Every
    file planner reads for a model or a person goes through here (or shown_in_tree): a link a
    program planted is never followed by planner, which may be root, out of the checkout."""
    parts = PurePosixPath(Path(relative).as_posix()).parts
    if not parts or ".." in parts or parts[0] == "/":
        return None
    try:
        descriptor = open_beneath(root, tuple(parts), os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        return None
    with os.fdopen(descriptor, "rb") as handle:
        return handle.read(limit)


def shown_in_tree(root: Path, relative: str | Path, limit: int = -1) -> bytes | None:
    """What git would store for `relative`: a regular file's bytes, or a symbolic link's target
    (the link is shown as a link, never followed); None when it is neither."""
    found = read_in_tree(root, relative, limit)
    if found is not None:
        return found
    path = PurePosixPath(Path(relative).as_posix())
    try:
        folder = open_beneath(root, (*path.parent.parts, "."), os.O_RDONLY | os.O_DIRECTORY)
    except (OSError, ValueError):
        return None
    try:
        return os.fsencode(os.readlink(path.name, dir_fd=folder))
    except OSError:
        return None
    finally:
        os.close(folder)


class PathRefused(Exception):
    """A path was refused; the message names the rule."""


@dataclass(frozen=True)
class PathPolicy:
    """Which paths of one workspace tools may read and write."""

    root: Path
    protected: tuple[Path, ...] = ()
    write_protected: tuple[Path, ...] = ()
    allow_workflow_edits: bool = False

    @classmethod
    def create(
        cls,
        root: Path,
        protected: tuple[Path, ...] = (),
        write_protected: tuple[Path, ...] = (),
        allow_workflow_edits: bool = False,
    ) -> PathPolicy:
        """A policy with every path made absolute and symlink-free."""
        return cls(
            root.resolve(),
            tuple(p.resolve() for p in protected),
            tuple(p.resolve() for p in write_protected),
            allow_workflow_edits,
        )

    def resolve(self, raw: str, *, for_write: bool = False) -> Path:
        """The real path `raw` names inside the workspace, or PathRefused naming the rule."""
        written = _normalised(raw or ".")
        _check_written(raw, written)
        _check_decoded(raw, written)
        try:
            resolved = (self.root / written).resolve()
        except (OSError, RuntimeError):
            raise PathRefused(_refusal(raw, "inside-workspace", "a symlink loop")) from None
        if resolved != self.root and self.root not in resolved.parents:
            raise PathRefused(_refusal(raw, "inside-workspace", "a symlink leads outside"))
        for parts in (written.parts, self.relative_parts(resolved)):
            self._check_parts(raw, parts, for_write)
        self._check_protected(raw, resolved, for_write)
        return resolved

    def open_beneath(self, resolved: Path, flags: int, *, make_parents: bool = False) -> int:
        """A descriptor for `resolved` (from resolve()), opened one component at a time from the
        workspace root without following any link: a folder or file swapped for a link after
        resolve() (by a process the tools left running) fails the open with OSError instead of
        leading planner, as root, outside the workspace. `make_parents` creates missing folders."""
        parts = self.relative_parts(resolved) or (".",)
        return open_beneath(self.root, parts, flags, make_parents=make_parents)

    def read_beneath(self, resolved: Path) -> bytes:
        """The content of the file at `resolved`, opened as open_beneath opens it."""
        with os.fdopen(self.open_beneath(resolved, os.O_RDONLY), "rb") as handle:
            return handle.read()

    def relative_parts(self, resolved: Path) -> tuple[str, ...]:
        return resolved.relative_to(self.root).parts

    def hidden(self, path: Path) -> bool:
        """True for entries listings and searches leave out (.git and protected state)."""
        try:
            parts = path.relative_to(self.root).parts
        except ValueError:
            return True
        return git_segment(parts) or any(_within(path, p) for p in self.protected)

    def _check_parts(self, raw: str, parts: tuple[str, ...], for_write: bool) -> None:
        if git_segment(parts):
            raise PathRefused(_refusal(raw, "no-git-dir", ".git is never touched"))
        if for_write and not self.allow_workflow_edits and ci_definition(parts):
            raise PathRefused(
                _refusal(
                    raw,
                    "no-workflow-edits",
                    "CI definitions are not edited unless tools.allow_workflow_edits is set",
                )
            )

    def _check_protected(self, raw: str, resolved: Path, for_write: bool) -> None:
        guarded = self.protected + (self.write_protected if for_write else ())
        if any(_within(resolved, p) for p in guarded):
            raise PathRefused(
                _refusal(raw, "protected-path", "planner's own state and configuration")
            )


def _normalised(raw: str) -> PurePosixPath:
    return PurePosixPath(raw.replace("\\", "/"))


def _check_written(raw: str, written: PurePosixPath, rule: str | None = None) -> None:
    """The rules about how a path is spelled; `rule` overrides the name (for decoded forms)."""
    if "\0" in str(written):
        raise PathRefused(_refusal(raw, rule or "no-nul-bytes", "NUL bytes are not allowed"))
    if written.is_absolute() or DRIVE.match(str(written)):
        raise PathRefused(
            _refusal(raw, rule or "no-absolute-paths", "use a path relative to the repository")
        )
    if ".." in written.parts:
        raise PathRefused(_refusal(raw, rule or "no-parent-segments", "'..' is not allowed"))
    if rule and git_segment(written.parts):
        raise PathRefused(_refusal(raw, rule, "it decodes to a .git path"))


def _check_decoded(raw: str, written: PurePosixPath) -> None:
    decoded = raw
    for _ in range(3):  # double and triple encoding are the usual tricks
        decoded = unquote(decoded)
    if decoded != raw:
        _check_written(raw, _normalised(decoded), "no-encoded-escapes")


def _fold(part: str) -> str:
    """How a case-insensitive file system compares a name (Windows also drops trailing dots)."""
    return part.casefold().rstrip(" .") or part


def git_segment(parts: tuple[str, ...]) -> bool:
    return any(_fold(part) == ".git" for part in parts)


def ci_definition(parts: tuple[str, ...]) -> bool:
    folded = tuple(_fold(part) for part in parts)
    return any(folded[: len(prefix)] == prefix for prefix in CI_DEFINITIONS)


def _within(path: Path, guarded: Path) -> bool:
    folded = str(path).casefold()
    base = str(guarded).casefold()
    return folded == base or folded.startswith(base.rstrip("/") + "/")


def _refusal(raw: str, rule: str, why: str) -> str:
    return f"refused {raw!r}: rule {rule!r} ({why})"
