"""Which files the repository map describes, as git sees them.

In a git work tree the candidates are `git ls-files --cached --others --exclude-standard`:
tracked files plus new ones .gitignore does not exclude, which is what a person browsing the
repository would see. Elsewhere a walk that skips .git and the usual dependency directories.
planner's own state (history, `.planner/`) is never listed.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable
from pathlib import Path

from planner.tools.sandbox.safe_env import git_run

TRACKED = ("ls-files", "-z", "--stage")
UNTRACKED = ("ls-files", "-z", "--others", "--exclude-standard")
SYMLINK_MODE = "120000"
GITLINK_MODE = "160000"
SKIPPED_DIRECTORIES = frozenset(
    {".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".tox", "dist"}
)
"""Outside git nothing says what is ignored; these are never worth showing a model."""


def git_output(workspace: Path, *args: str) -> bytes | None:
    """A git command's stdout, or None when git is missing or fails (not a repository)."""
    try:
        done = git_run(workspace, *args, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout


def head_commit(workspace: Path) -> str | None:
    out = git_output(workspace, "rev-parse", "--verify", "-q", "HEAD")
    return out.decode().strip() or None if out else None


def git_dir(workspace: Path) -> Path | None:
    out = git_output(workspace, "rev-parse", "--absolute-git-dir")
    return Path(out.decode().strip()) if out else None


def list_files(workspace: Path, excluded: Iterable[Path] = ()) -> list[str]:
    """Relative POSIX paths of the files to describe, sorted, without planner's own state.

    Tracked files come with their mode, so symlinks and submodules are left out without a
    stat per file; a tracked file deleted in the work tree is left out by the indexer."""
    tracked = git_output(workspace, *TRACKED)
    if tracked is None:
        names = [n for n in _walk(workspace) if _is_file(workspace, n)]
    else:
        untracked = _split(git_output(workspace, *UNTRACKED) or b"")
        names = _regular(tracked) + [n for n in untracked if _is_file(workspace, n)]
    prefixes = _excluded_prefixes(workspace, excluded)
    return sorted({n for n in names if not n.startswith(prefixes)})


def _regular(staged: bytes) -> list[str]:
    """`<mode> <object> <stage>\t<path>` records of regular files."""
    names = []
    for record in _split(staged):
        info, _, path = record.partition("\t")
        if not info.startswith((SYMLINK_MODE, GITLINK_MODE)):
            names.append(path)
    return names


def changed_files(workspace: Path) -> list[str]:
    """Files that differ from HEAD in the work tree (modified, added, untracked)."""
    out = git_output(workspace, "status", "-z", "--porcelain", "--untracked-files=all")
    if not out:
        return []
    paths = []
    records = out.split(b"\0")
    skip_next = False
    for record in records:
        if skip_next or len(record) < 4:
            skip_next = False
            continue
        skip_next = record[:1] in (b"R", b"C")  # a rename carries its old path next
        paths.append(record[3:].decode("utf-8", "surrogateescape"))
    return paths


def _split(listed: bytes) -> list[str]:
    return [p.decode("utf-8", "surrogateescape") for p in listed.split(b"\0") if p]


def _walk(workspace: Path) -> list[str]:
    found = []
    for directory, subdirectories, files in os.walk(workspace):
        subdirectories[:] = [d for d in subdirectories if d not in SKIPPED_DIRECTORIES]
        relative = Path(directory).relative_to(workspace)
        found += [(relative / name).as_posix() for name in files]
    return found


def _excluded_prefixes(workspace: Path, excluded: Iterable[Path]) -> tuple[str, ...]:
    prefixes = [".planner/"]
    root = workspace.resolve()
    for path in excluded:
        try:
            prefixes.append(path.resolve().relative_to(root).as_posix().rstrip("/") + "/")
        except ValueError:
            continue  # outside the workspace: never listed anyway
    return tuple(prefixes)


def _is_file(workspace: Path, name: str) -> bool:
    """A regular file inside the tree (a deleted tracked file or a symlink is left out)."""
    path = workspace / name
    return path.is_file() and not path.is_symlink()
