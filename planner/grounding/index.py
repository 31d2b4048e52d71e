"""The file index behind the repository map: every file's size, kind and outline.

Building it reads and parses every text file, so it is cached per commit: the index of HEAD's
files is kept as JSON under the git directory (`<git dir>/planner/repo-index/`), which is never
committed or pushed, and the pass's tools cannot reach it (.git is always refused). Files that
differ from HEAD in the work tree are indexed again on every call, so the map stays true while
a pass edits files.
"""

from __future__ import annotations

import json
import logging
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from planner.grounding.files import changed_files, git_dir, head_commit, list_files
from planner.grounding.symbols import Outline, Symbol, outline
from planner.tools.files.paths import read_in_tree

log = logging.getLogger(__name__)

INDEX_VERSION = 1
SNIFF_BYTES = 8_192


@dataclass(frozen=True, slots=True)
class FileEntry:
    path: str
    size: int
    kind: str
    """text, binary or large (over max_file_bytes: listed, never parsed)."""
    outline: Outline = field(default_factory=lambda: Outline(""))


@dataclass
class RepositoryIndex:
    commit: str | None
    files: list[FileEntry]
    cache_hit: bool = False


def build_index(
    workspace: Path, max_file_bytes: int, excluded: Iterable[Path] = (), use_cache: bool = True
) -> RepositoryIndex:
    """Every listed file described; HEAD's files come from the cache when it has them."""
    commit = head_commit(workspace)
    cache = _cache_path(workspace, commit, max_file_bytes) if use_cache and commit else None
    cached = _load(cache) if cache else None
    dirty = set(changed_files(workspace)) if commit else set()
    entries = []
    for path in list_files(workspace, excluded):
        known = cached.get(path) if cached is not None and path not in dirty else None
        entry = known or describe(workspace, path, max_file_bytes)
        if entry is not None:
            entries.append(entry)
    if cache is not None and cached is None:
        _save(cache, [e for e in entries if e.path not in dirty])
    return RepositoryIndex(commit, entries, cache_hit=cached is not None)


def describe(workspace: Path, path: str, max_file_bytes: int) -> FileEntry | None:
    """The file's entry; None when it is gone (a tracked file deleted in the work tree)."""
    try:
        status = (workspace / path).lstat()
        if not stat.S_ISREG(status.st_mode):
            return None  # a symlink could point out of the workspace; the tools refuse those
        if status.st_size > max_file_bytes:
            return FileEntry(path, status.st_size, "large")
        data = read_in_tree(workspace, path, max_file_bytes + 1)
    except OSError:
        return None
    if data is None:
        return None
    size = len(data)
    if b"\0" in data[:SNIFF_BYTES]:
        return FileEntry(path, size, "binary")
    text = data.decode("utf-8", errors="replace")
    return FileEntry(path, size, "text", outline(path, text))


def _cache_path(workspace: Path, commit: str, max_file_bytes: int) -> Path | None:
    directory = git_dir(workspace)
    if directory is None:
        return None
    name = f"{commit}-{max_file_bytes}-v{INDEX_VERSION}.json"
    return directory / "planner" / "repo-index" / name


def _load(path: Path) -> dict[str, FileEntry] | None:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return {entry.path: entry for entry in map(_entry, raw)}
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, KeyError, IndexError) as exc:
        log.warning("repository index cache %s unreadable (%s); indexing again", path, exc)
        return None


def _save(path: Path, entries: list[FileEntry]) -> None:
    """Written to a temporary name and renamed, so a reader never sees half a file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps([_raw(e) for e in entries]), encoding="utf-8")
        temporary.replace(path)
    except OSError as exc:
        log.warning("repository index cache not written (%s)", exc)


def _raw(entry: FileEntry) -> list[object]:
    symbols = [[s.kind, s.name, s.doc] for s in entry.outline.symbols]
    return [entry.path, entry.size, entry.kind, entry.outline.summary, symbols]


def _entry(raw: list[object]) -> FileEntry:
    path, size, kind, summary, symbols = raw
    if not (isinstance(path, str) and isinstance(size, int) and isinstance(symbols, list)):
        raise ValueError(f"bad index entry {raw!r:.80}")
    parsed = tuple(Symbol(str(k), str(n), str(d)) for k, n, d in symbols)
    return FileEntry(path, size, str(kind), Outline(str(summary), parsed))
