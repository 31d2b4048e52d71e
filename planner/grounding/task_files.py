"""The files a task is about, shown in its prompt (planning.task_context).

A small model asked to fix `to_fahrenheit` spends its calls reading temperature.py, often the
same lines again and again. The task prompt shows the current content instead: the files the
task's own text names first, then the files of the definitions the texts point to
(planner.grounding.localise), then those its dependencies and the issue name, then the files
that define a symbol those texts name; line-numbered (so edits and errors can point at
lines), within a token budget, read fresh for every task (earlier tasks may have changed them).

A file that fits is shown whole. A larger one is shown as windows: the definitions the texts
point to, each with its lines and the names of its callers (a long definition as its first
lines and the lines around the names the texts use), never the file's first lines. A file
with none of them is shown as an outline of its definitions and their lines.
"""

from __future__ import annotations

import difflib
import os
import subprocess
from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path

from planner.engine.config import PlannerConfig
from planner.engine.interfaces import ShownFiles
from planner.engine.issue import sanitize_untrusted
from planner.grounding.files import list_files
from planner.grounding.index import FileEntry, build_index
from planner.grounding.localise import Definition, Location, SymbolIndex, clues, definitions_of
from planner.grounding.ranking import defines, issue_terms, named_files
from planner.grounding.repo_map import estimate_tokens
from planner.tools.edits import numbered
from planner.tools.paths import PathPolicy, PathRefused
from planner.tools.safe_env import git_argv, git_environment

MIN_FILE_TOKENS = 60
"""A file with less room than this left in the budget is not started."""
WHOLE_FILE_LINES = 400
"""A file longer than this is shown as windows even when it would fit the budget."""
MAX_WINDOWS = 4
"""Definitions shown per file at most."""
CONTEXT_LINES = 2
FIRST_WINDOW_SHARE = 0.6
"""Of the room left, what one window may take while more definitions wait."""
MIN_WINDOWS_TOKENS = 150
"""A large file with less room left is not started."""
"""Lines kept around a line of a long definition that uses a name the texts give."""


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
        self.symbols = SymbolIndex(self._bytes, partial(grep_python, workspace))

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
        paths = [entry.path for entry in texts_files]
        located = self.symbols.locate(paths, texts)
        named = [path for text in texts if text for path in named_files(issue_terms(text), paths)]
        order = [*named, *(place.definition.path for place in located)]
        chosen = list(dict.fromkeys([*order, *chosen_files(texts_files, texts)]))
        return self._render(chosen[: self.settings.max_files], located, texts)

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

    def _bytes(self, path: str) -> bytes | None:
        try:
            return self._read(path)
        except (OSError, PathRefused):
            return None

    def _paths(self) -> list[str]:
        return list_files(self.workspace, self.excluded)

    def _render(
        self, paths: list[str], located: list[Location], texts: Sequence[str]
    ) -> ShownFiles:
        room, blocks, whole, windows = self.settings.max_tokens, [], set(), set()
        for path in paths:
            if room < MIN_FILE_TOKENS:
                break
            places = [place for place in located if place.definition.path == path]
            block, complete = self._block(path, room, places, texts)
            room -= estimate_tokens(block)
            blocks.append(block)
            if complete:
                whole.add(path)
            elif block and path.endswith(".py"):
                windows.add(path)
        text = sanitize_untrusted("".join(blocks)).rstrip()
        return ShownFiles(text=text, whole=frozenset(whole), windows=frozenset(windows))

    def _block(
        self, path: str, room: int, places: list[Location], texts: Sequence[str]
    ) -> tuple[str, bool]:
        try:
            lines = self._read(path).decode("utf-8", errors="replace").splitlines(True)
        except (OSError, PathRefused):
            return "", False
        kept = _lines_within(lines, room - 20)
        if kept == len(lines) and len(lines) <= WHOLE_FILE_LINES:
            if self.whole_files:
                return fenced(path, lines), True
            body = numbered(lines)
            return f"=== {path} ({len(lines)} lines) ===\n{body}=== end of {path} ===\n", True
        if path.endswith(".py"):
            if room < MIN_WINDOWS_TOKENS:
                return "", False
            return windows_block(path, lines, places, room, texts), False
        body = numbered(lines[:kept]) if kept else ""
        more = f"lines {kept + 1}-{len(lines)} not shown; read_file with start_line reads them"
        return f"=== {path} (lines 1-{kept} of {len(lines)}) ===\n{body}=== {more} ===\n", False


def windows_block(
    path: str, lines: list[str], places: list[Location], room: int, texts: Sequence[str]
) -> str:
    """The definitions of `places` in a large file, within `room` tokens: each whole when it
    fits, else its first lines and the lines around the names the texts use; an outline of the
    file's definitions when none of them is there."""
    head = f"=== {path} ({len(lines)} lines): "
    tail = (
        f"=== the rest of {path} is not shown; read_file with start_line and end_line reads "
        "other lines ===\n"
    )
    if not places:
        return _outline(path, lines, head, tail, room)
    names = set(clues(texts).code)
    parts: list[str] = []
    shown: list[Definition] = []
    used = estimate_tokens(head + tail) + 20
    for place in places[:MAX_WINDOWS]:
        definition = place.definition
        if any(d.start <= definition.start and definition.end <= d.end for d in shown):
            continue  # inside a window already shown (a method of a class shown whole)
        left = room - used
        share = left if place is places[-1] else int(left * FIRST_WINDOW_SHARE)
        window = _window(lines, definition, place.callers, names, share)
        if not window:
            break
        parts.append(window)
        used += estimate_tokens(window)
        shown.append(definition)
    if not parts:
        return ""
    return head + "the definitions this task is about ===\n" + "".join(parts) + tail


def _window(
    lines: list[str],
    definition: Definition,
    callers: tuple[str, ...],
    names: set[str],
    room: int,
) -> str:
    callers_note = f"; called by {', '.join(callers)}" if callers else ""
    title = (
        f"--- {definition.kind} {definition.qualname}, lines {definition.start}-"
        f"{definition.end}{callers_note} ---\n"
    )
    budget = room - estimate_tokens(title)
    if budget < MIN_FILE_TOKENS:
        return ""
    start, end = definition.start - 1, min(definition.end, len(lines))
    body = lines[start:end]
    if _lines_within(body, budget) == len(body):
        return title + numbered(body, definition.start)
    return title + _excerpt(lines, start, end, names, budget)


def _excerpt(lines: list[str], start: int, end: int, names: set[str], budget: int) -> str:
    """A long definition's first lines and the lines around those using one of `names`,
    within `budget`; a gap is marked with the lines it leaves out."""
    wanted = set(range(start, min(end, start + 3)))
    for number in range(start, end):
        if any(name in lines[number].lower() for name in names):
            wanted |= set(range(number - CONTEXT_LINES, number + CONTEXT_LINES + 1))
    chosen, used = [], 0
    for number in sorted(n for n in wanted if start <= n < end):
        cost = estimate_tokens(lines[number]) + 2
        if used + cost > budget - 10:
            break
        chosen.append(number)
        used += cost
    text, previous = "", start - 1
    for number in chosen:
        if number > previous + 1:
            text += f"     … lines {previous + 2}-{number} not shown …\n"
        text += numbered([lines[number]], number + 1)
        previous = number
    if previous < end - 1:
        text += f"     … lines {previous + 2}-{end} not shown …\n"
    return text


def _outline(path: str, lines: list[str], head: str, tail: str, room: int) -> str:
    """The file's definitions and their lines, within `room`."""
    entries = [
        f"{d.kind} {d.qualname}: lines {d.start}-{d.end}\n"
        for d in definitions_of(path, "".join(lines))
    ]
    text, used = head + "its definitions ===\n", estimate_tokens(head + tail) + 10
    for entry in entries:
        used += estimate_tokens(entry)
        if used > room:
            break
        text += entry
    return text + tail if entries else ""


def grep_python(workspace: Path, names: list[str]) -> list[str] | None:
    """The Python files (tracked and untracked, not ignored) holding any of `names`, by
    `git grep` (git reads them; nothing is shown from its output); None outside a git work tree
    or when git fails."""
    patterns = [part for name in names for part in ("-e", name)]
    argv = git_argv("grep", "-z", "-l", "-i", "-F", "--untracked", *patterns, "--", "*.py")
    try:
        done = subprocess.run(
            argv,
            cwd=workspace,
            env=git_environment(os.environ),
            capture_output=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode not in (0, 1):
        return None
    return [p.decode("utf-8", "surrogateescape") for p in done.stdout.split(b"\0") if p]


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
