"""The repository map: a compact, ranked view of the repository for the planning prompt.

Within `max_tokens` (estimated at 4 characters per token): the files the issue names in full
(each up to `named_file_max_tokens`), then one block per file in order of relevance — its path,
its module docstring's first line and its top-level symbols — falling back to the bare path when
the block does not fit, and finally one line counting the files left out per directory. Binary
and large files are listed with their size only. The text is repository content, so it is
sanitised like any untrusted text and fenced in the prompt.
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planner.config import RepositoryMapConfig
from planner.grounding.index import FileEntry, RepositoryIndex, build_index
from planner.grounding.localise import SymbolIndex
from planner.grounding.ranking import defines, issue_terms, named_files, ranked
from planner.grounding.tokens import estimate_tokens as estimate_tokens
from planner.grounding.windows import windows_block
from planner.text.issue import sanitize_untrusted
from planner.tools.files.paths import read_in_tree

LISTING_SHARE = 0.35
"""Part of the budget kept for the file listing when named files are shown in full."""
OMITTED_LINE_CHARS = 240
OMITTED_LINE_TOKENS = 40


@dataclass(frozen=True)
class RepositoryMap:
    text: str
    commit: str | None
    files_total: int
    files_shown: tuple[str, ...]
    named_in_full: tuple[str, ...]
    truncated: bool
    cache_hit: bool = False
    elapsed_ms: float = 0.0

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def digest(self, max_paths: int = 200) -> dict[str, Any]:
        """What the model was shown, for the history: never the map itself."""
        return {
            "commit": self.commit,
            "sha256": self.sha256,
            "chars": len(self.text),
            "tokens_estimated": self.tokens,
            "files_total": self.files_total,
            "files_shown": len(self.files_shown),
            "paths_shown": list(self.files_shown[:max_paths]),
            "named_in_full": list(self.named_in_full),
            "truncated": self.truncated,
            "cache_hit": self.cache_hit,
            "elapsed_ms": round(self.elapsed_ms, 1),
        }


def build_map(
    workspace: Path, config: RepositoryMapConfig, issue_text: str, excluded: Iterable[Path] = ()
) -> RepositoryMap:
    started = time.perf_counter()
    index = build_index(workspace, config.max_file_bytes, excluded, use_cache=config.cache)
    built = render_map(workspace, index, config, issue_text)
    elapsed = (time.perf_counter() - started) * 1000
    return RepositoryMap(**{**built.__dict__, "cache_hit": index.cache_hit, "elapsed_ms": elapsed})


def render_map(
    workspace: Path, index: RepositoryIndex, config: RepositoryMapConfig, issue_text: str
) -> RepositoryMap:
    terms = issue_terms(issue_text)
    named = named_files(terms, (e.path for e in index.files))
    order = ranked(index.files, terms, named)
    writer = _Writer(config.max_tokens - OMITTED_LINE_TOKENS)
    writer.add(_header(index))
    in_full = named + [e.path for e in order if e.path not in named and defines(e, terms)]
    shown_in_full = _full_files(workspace, index, in_full, config, writer, issue_text)
    for entry in order:
        if writer.room() < 3:
            break
        if not writer.add(_block(entry, config.max_symbols_per_file), entry.path):
            writer.add(_bare(entry), entry.path)
    left_out = [e.path for e in index.files if e.path not in writer.shown]
    text = writer.text() + _omitted(left_out, config.max_tokens - writer.used)
    return RepositoryMap(
        text=sanitize_untrusted(text).rstrip(),
        commit=index.commit,
        files_total=len(index.files),
        files_shown=tuple(writer.order),
        named_in_full=tuple(shown_in_full),
        truncated=bool(left_out),
    )


@dataclass
class _Writer:
    """Collects blocks while they fit in the token budget."""

    budget: int
    parts: list[str] = field(default_factory=list)
    shown: set[str] = field(default_factory=set)
    order: list[str] = field(default_factory=list)
    used: int = 0

    def add(self, block: str, path: str | None = None) -> bool:
        if path is not None and path in self.shown:
            return True
        cost = estimate_tokens(block)
        if self.used + cost > self.budget:
            return False
        self.parts.append(block)
        self.used += cost
        if path is not None:
            self.shown.add(path)
            self.order.append(path)
        return True

    def room(self) -> int:
        return self.budget - self.used

    def text(self) -> str:
        return "".join(self.parts)


def _header(index: RepositoryIndex) -> str:
    at = f" at commit {index.commit[:12]}" if index.commit else ""
    return f"{len(index.files)} files{at}, most relevant to the issue first.\n"


def _full_files(
    workspace: Path,
    index: RepositoryIndex,
    named: list[str],
    config: RepositoryMapConfig,
    writer: _Writer,
    issue_text: str = "",
) -> list[str]:
    kinds = {e.path: e.kind for e in index.files}
    shown = []
    for path in [p for p in named if kinds.get(p) == "text"][: config.max_named_files]:
        limit = min(
            config.named_file_max_tokens, writer.room() - int(writer.budget * LISTING_SHARE)
        )
        block = _file_in_full(workspace, path, limit, issue_text)
        if block and writer.add(block, path):  # shown in full: no outline block after it
            shown.append(path)
    return shown


def _file_in_full(workspace: Path, path: str, limit: int, issue_text: str = "") -> str:
    """The file's first lines within `limit` tokens, framed, with what was cut; a Python file
    that does not fit is shown as windows around the definitions the issue points to
    (planner.grounding.windows) when it has any."""
    if limit < 50:
        return ""
    data = read_in_tree(workspace, path)
    if data is None:
        return ""
    text = data.decode("utf-8", errors="replace")
    if path.endswith(".py") and issue_text and estimate_tokens(text) > limit:
        windows = _windows(path, text, limit, issue_text)
        if windows:
            return windows
    lines = text.splitlines()
    kept = []
    size = 0
    for line in lines:
        cost = estimate_tokens(line) + 1
        if size + cost > limit - 30:  # the frame lines
            break
        kept.append(line)
        size += cost
    rest = len(lines) - len(kept)
    end = f"(cut: {rest} more lines)" if rest else f"({len(lines)} lines)"
    body = "\n".join(kept)
    return f"=== {path} ===\n{body}\n=== end of {path} {end} ===\n"


def _windows(path: str, text: str, limit: int, issue_text: str) -> str:
    data = text.encode("utf-8")
    located = SymbolIndex(lambda _: data).locate([path], [issue_text], limit=2)
    return (
        windows_block(path, text.splitlines(True), located, limit, [issue_text]) if located else ""
    )


def _block(entry: FileEntry, max_symbols: int) -> str:
    if entry.kind != "text":
        return _bare(entry)
    head = entry.path + (f" — {entry.outline.summary}" if entry.outline.summary else "")
    symbols = entry.outline.symbols
    lines = [head, *(f"  {s.line()}" for s in symbols[:max_symbols])]
    if len(symbols) > max_symbols:
        lines.append(f"  … {len(symbols) - max_symbols} more")
    return "\n".join(lines) + "\n"


def _bare(entry: FileEntry) -> str:
    if entry.kind == "binary":
        return f"{entry.path} (binary, {_size(entry.size)})\n"
    if entry.kind == "large":
        return f"{entry.path} (large, {_size(entry.size)}, not read)\n"
    return entry.path + "\n"


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / 1024 / 1024:.1f} MB"


def _omitted(paths: list[str], room: int) -> str:
    """One line counting the files left out per top-level directory, within `room` tokens."""
    if not paths:
        return ""
    groups = Counter(p.split("/", 1)[0] + "/" if "/" in p else "(top level)" for p in paths)
    line = f"Not shown: {len(paths)} more files"
    for position, (name, count) in enumerate(groups.most_common()):
        longer = f"{line}{' —' if position == 0 else ','} {name} {count}"
        if len(longer) > OMITTED_LINE_CHARS or estimate_tokens(longer + ", …") > room:
            return line + ", …\n"
        line = longer
    return line + "\n"
