"""The files a task is about, shown in its prompt (planning.task_context).

A small model asked to fix `to_fahrenheit` spends its calls reading temperature.py, often the
same lines again and again. The task prompt shows the current content instead: the files the
task's own text names first, then those its dependencies and the issue name, then the files
that define a symbol those texts name; line-numbered (so edits and errors can point at
lines), within a token budget, read fresh for every task (earlier tasks may have changed them).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from pathlib import Path

from planner.engine.config import PlannerConfig
from planner.engine.interfaces import ShownFiles
from planner.engine.issue import sanitize_untrusted
from planner.grounding.files import list_files
from planner.grounding.index import FileEntry, build_index
from planner.grounding.ranking import defines, issue_terms, named_files
from planner.grounding.repo_map import estimate_tokens
from planner.tools.edits import numbered
from planner.tools.paths import PathPolicy, PathRefused

MIN_FILE_TOKENS = 60
"""A file with less room than this left in the budget is not started."""


class TaskFiles:
    """planner.engine.interfaces.FileContext over one workspace."""

    def __init__(
        self, config: PlannerConfig, workspace: Path, excluded: Iterable[Path] = ()
    ) -> None:
        self.settings = config.planning.task_context
        self.map_settings = config.planning.repository_map
        self.workspace = workspace
        self.policy = PathPolicy.create(workspace)
        self.excluded = tuple(excluded)
        self.whole_files = config.llm.edit_format == "whole_file"
        """Files shown whole are shown as the model writes them back (llm.edit_format)."""

    def files_for(self, texts: Sequence[str]) -> ShownFiles:
        if not self.settings.enabled or self.settings.max_files == 0:
            return ShownFiles()
        index = build_index(
            self.workspace,
            self.map_settings.max_file_bytes,
            self.excluded,
            use_cache=self.map_settings.cache,
        )
        texts_files = [e for e in index.files if e.kind == "text"]
        chosen = chosen_files(texts_files, texts)[: self.settings.max_files]
        return self._render(chosen)

    def existing(self, path: str) -> str | None:
        wanted = path.strip().removeprefix("./")
        if (self.workspace / wanted).is_file():
            return wanted  # the common case: no git listing per tool call
        paths = self._paths()
        if wanted in paths:
            return wanted
        name = wanted.rsplit("/", 1)[-1]
        same_name = [p for p in paths if p.rsplit("/", 1)[-1] == name]
        return same_name[0] if len(same_name) == 1 else None

    def closest(self, path: str, limit: int = 5) -> list[str]:
        paths = self._paths()
        if len(paths) <= limit:
            return paths
        return difflib.get_close_matches(path, paths, n=limit, cutoff=0.3) or paths[:limit]

    def current(self, path: str) -> str | None:
        try:
            return self._read(path).decode("utf-8")
        except (OSError, PathRefused, UnicodeDecodeError):
            return None

    def _read(self, path: str) -> bytes:
        """The file at `path` inside the workspace, reached without following a link planted
        after the check (planner may read as root while the tools' processes run)."""
        return self.policy.read_beneath(self.policy.resolve(path))

    def _paths(self) -> list[str]:
        return list_files(self.workspace, self.excluded)

    def _render(self, paths: list[str]) -> ShownFiles:
        room, blocks, whole = self.settings.max_tokens, [], set()
        for path in paths:
            if room < MIN_FILE_TOKENS:
                break
            block, complete = self._block(path, room)
            room -= estimate_tokens(block)
            blocks.append(block)
            if complete:
                whole.add(path)
        text = sanitize_untrusted("".join(blocks)).rstrip()
        return ShownFiles(text=text, whole=frozenset(whole))

    def _block(self, path: str, room: int) -> tuple[str, bool]:
        try:
            lines = self._read(path).decode("utf-8", errors="replace").splitlines(True)
        except (OSError, PathRefused):
            return "", False
        kept = _lines_within(lines, room - 20)
        if kept == len(lines) and self.whole_files:
            return fenced(path, lines), True
        body = numbered(lines[:kept]) if kept else ""
        if kept == len(lines):
            return f"=== {path} ({len(lines)} lines) ===\n{body}=== end of {path} ===\n", True
        more = f"lines {kept + 1}-{len(lines)} not shown; read_file with start_line reads them"
        return f"=== {path} (lines 1-{kept} of {len(lines)}) ===\n{body}=== {more} ===\n", False


LANGUAGES = {
    ".py": "python",
    ".md": "markdown",
    ".js": "javascript",
    ".ts": "typescript",
    ".go": "go",
    ".rs": "rust",
    ".sh": "sh",
    ".json": "json",
    ".yml": "yaml",
    ".yaml": "yaml",
    ".toml": "toml",
}


def fenced(path: str, lines: list[str]) -> str:
    """`path` on a line, then its content in a code block: the shape a reply writing the file
    whole takes (planner.engine.file_blocks); a longer fence when the file holds fences."""
    fence = "````" if any(line.lstrip().startswith("```") for line in lines) else "```"
    language = LANGUAGES.get(Path(path).suffix.lower(), "")
    body = "".join(lines)
    if body and not body.endswith("\n"):
        body += "\n"
    return f"{path}\n{fence}{language}\n{body}{fence}\n"


def chosen_files(entries: list[FileEntry], texts: Sequence[str]) -> list[str]:
    """Files named by the texts (in their order), then files defining a symbol they name."""
    paths = [entry.path for entry in entries]
    terms = [issue_terms(text) for text in texts if text]
    named = [path for term in terms for path in named_files(term, paths)]
    defining = [entry.path for term in terms for entry in entries if defines(entry, term)]
    by_stem = [p for term in terms for p in paths if _stem(p) in STEM_NAMED & term.words]
    by_stem.sort(key=lambda path: path.count("/"))
    return list(dict.fromkeys([*named, *defining, *by_stem]))


STEM_NAMED = frozenset({"readme", "changelog", "contributing", "license", "makefile"})
"""Files a text names by their bare name ("the README")."""


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].split(".", 1)[0].lower()


def _lines_within(lines: list[str], budget: int) -> int:
    used = 0
    for count, line in enumerate(lines):
        used += estimate_tokens(line) + 2  # the line number
        if used > budget:
            return count
    return len(lines)
