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
import subprocess
from collections.abc import Collection, Iterable, Sequence
from functools import partial
from pathlib import Path

from planner.config import PlannerConfig
from planner.core.interfaces import PointedDefinition, ShownFiles
from planner.grounding.files import list_files
from planner.grounding.index import FileEntry, build_index
from planner.grounding.localise import Definition, Location, SymbolIndex
from planner.grounding.ranking import defines, issue_terms, named_files
from planner.grounding.tokens import estimate_tokens
from planner.grounding.windows import lines_within, windows_block
from planner.text.issue import sanitize_untrusted
from planner.tools.files.edits import numbered
from planner.tools.files.paths import PathPolicy, PathRefused
from planner.tools.sandbox.safe_env import git_run

MIN_FILE_TOKENS = 60
"""A file with less room than this left in the budget is not started."""
WHOLE_FILE_LINES = 400
"""A file longer than this is shown as windows even when it would fit the budget."""
MIN_WINDOWS_TOKENS = 150
"""A large file with less room left is not started."""
FILE_SHARE = 0.6
"""Of the room left, what one file may take while a later file holds a definition the texts
point to: the 155-line window of `cached` in cachetools' __init__.py took the whole budget, and
keys.py, whose `typedkey` the issue was about, was not shown."""


class TaskFiles:
    """planner.core.interfaces.FileContext over one workspace."""

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

    def pointed(
        self, texts: Sequence[str], ran: Collection[tuple[str, int]] = ()
    ) -> list[PointedDefinition]:
        pointed = self._by_text(texts)
        return self._that_ran(pointed, texts, ran) if ran else pointed

    def _that_ran(
        self,
        pointed: list[PointedDefinition],
        texts: Sequence[str],
        ran: Collection[tuple[str, int]],
    ) -> list[PointedDefinition]:
        """The definitions a test ran, by score: a located one keeps its rank; a callee added
        for its caller's sake is scored on its own, like any other function the test ran."""
        known = set(self._paths())
        earlier = {(p.path, p.start): p for p in pointed}
        found = []
        for definition, score in self.symbols.ran([r for r in ran if r[0] in known], texts):
            before = earlier.get((definition.path, definition.start))
            located = before is not None and before.located
            score = before.score if before is not None and located else score
            called_by = before.called_by if before is not None else ""
            found.append(_pointed(definition, score, called_by, located=located))
        return sorted(found, key=lambda p: -p.score)

    def _by_text(self, texts: Sequence[str]) -> list[PointedDefinition]:
        located = self.symbols.locate(self._paths(), texts)
        callers: dict[tuple[str, str], str] = {}
        callees: list[tuple[Definition, float]] = []
        for place in located[:CALLEES_OF]:
            for callee in self.symbols.callees(place.definition, CALLEE_LINES):
                key = (callee.path, callee.qualname)
                if key not in callers:
                    callers[key] = place.definition.qualname
                    callees.append((callee, place.score / 2))
        pointed = [
            _pointed(
                p.definition, p.score, callers.get((p.definition.path, p.definition.qualname), "")
            )
            for p in located
        ]
        shown = {(p.path, p.qualname) for p in pointed}
        pointed += [
            _pointed(d, score, callers[(d.path, d.qualname)], located=False)
            for d, score in callees
            if (d.path, d.qualname) not in shown
        ]
        return pointed

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
        for number, path in enumerate(paths):
            if room < MIN_FILE_TOKENS:
                break
            places = [place for place in located if place.definition.path == path]
            waiting = {p.definition.path for p in located} & set(paths[number + 1 :])
            share = int(room * FILE_SHARE) if waiting else room
            block, complete = self._block(path, share, places, texts)
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
        kept = lines_within(lines, room - 20)
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


def grep_python(workspace: Path, names: list[str]) -> list[str] | None:
    """The Python files (tracked and untracked, not ignored) holding any of `names`, by
    `git grep` (git reads them; nothing is shown from its output); None outside a git work tree
    or when git fails."""
    patterns = [part for name in names for part in ("-e", name)]
    grep = ("grep", "-z", "-l", "-i", "-F", "--untracked", *patterns, "--", "*.py")
    try:
        done = git_run(workspace, *grep, timeout=60)
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


CALLEES_OF = 3
"""The best-ranked definitions whose short callees `pointed` adds."""
CALLEE_LINES = 40
"""A callee longer than this is not added (a helper the bug may hide in is short)."""


def _pointed(
    definition: Definition, score: float, called_by: str = "", located: bool = True
) -> PointedDefinition:
    return PointedDefinition(
        path=definition.path,
        qualname=definition.qualname,
        kind=definition.kind,
        start=definition.start,
        end=definition.end,
        score=score,
        called_by=called_by,
        located=located,
    )


def fenced(path: str, lines: list[str]) -> str:
    """`path` on a line, then its content in a code block: the shape a reply writing the file
    whole takes (planner.model.file_blocks); a longer fence when the file holds fences."""
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
