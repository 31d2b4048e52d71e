"""Built-in tools that work on the repository checkout, confined to it.

Names and argument shapes follow the official filesystem MCP server where they overlap
(read_file, write_file, edit_file with {oldText, newText}, list_directory, search_files), so
plans read the same whichever provider executes them.
"""

from __future__ import annotations

import codecs
import functools
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from planner.config import TEST_PATHS, ToolsConfig
from planner.core.interfaces import ToolResult, ToolSpec
from planner.outcome.evidence import is_test_file
from planner.tools import arguments as args
from planner.tools.arguments import BadArguments
from planner.tools.files.edits import (
    EditFailed,
    apply_edits,
    changed_view,
    edits_of,
    syntax_problem,
    unified_diff,
    without_fence,
    without_line_numbers,
)
from planner.tools.files.paths import PathPolicy, PathRefused
from planner.tools.files.python_merge import (
    Completion,
    complete_module,
    importer_pattern,
    imports_name,
    parenthesised_import_pattern,
)
from planner.tools.files.search import FileSearch, SearchFailed
from planner.tools.output import cap_text, looks_binary

Handler = Callable[[dict[str, Any]], ToolResult]
PATH = {"type": "string", "description": "Path relative to the repository root"}


class WorkspaceTools:
    """read_file, write_file, edit_file, list_directory and search_files in one workspace."""

    def __init__(
        self,
        root: Path,
        config: ToolsConfig,
        protected: tuple[Path, ...] = (),
        write_protected: tuple[Path, ...] = (),
        issue_text: str = "",
        test_paths: Sequence[str] = TEST_PATHS,
    ) -> None:
        self.config = config
        self.issue_text = issue_text
        """The issue's title and body: a definition they name may go in a whole-file write."""
        self.test_paths = test_paths
        """verification.test_paths: a test file's tests are never put back by that rule."""
        self.policy = PathPolicy.create(
            root, protected, write_protected, config.allow_workflow_edits
        )
        self.root = self.policy.root
        self._search = FileSearch(self.policy, config)
        self._handlers: dict[str, tuple[ToolSpec, Handler]] = {
            "read_file": (READ_FILE, self._read),
            "write_file": (WRITE_FILE, self._write),
            "edit_file": (EDIT_FILE, self._edit),
            "list_directory": (LIST_DIRECTORY, self._list),
            "search_files": (self._search.spec, self._search.run),
        }

    def list_tools(self) -> list[ToolSpec]:
        return [spec for spec, _ in self._handlers.values()]

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        entry = self._handlers.get(name)
        if entry is None:
            return ToolResult(ok=False, error=f"unknown workspace tool {name!r}")
        try:
            return entry[1](arguments)
        except PathRefused as refusal:  # the path rules: a reason to revisit the plan
            return ToolResult(ok=False, error=str(refusal))
        except (EditFailed, SearchFailed) as refusal:
            return ToolResult(ok=False, error=str(refusal), refused=True)
        except BadArguments as exc:
            return ToolResult(ok=False, error=f"bad arguments for {name}: {exc}", refused=True)
        except FileNotFoundError:
            return ToolResult(ok=False, error=f"{arguments.get('path')!r} does not exist")
        except OSError as exc:
            return ToolResult(ok=False, error=f"{name} failed: {exc.strerror or exc}")

    def close(self) -> None:
        return None

    # -- read_file ----------------------------------------------------------------------------

    def _read(self, arguments: dict[str, Any]) -> ToolResult:
        raw = args.text(arguments, "path")
        start = args.optional_int(arguments, "start_line")
        end = args.optional_int(arguments, "end_line")
        path = self._existing_file(raw)
        with self._opened(path, os.O_RDONLY) as handle:
            head = handle.read(self.config.max_read_bytes + 1)
            if looks_binary(head):
                size = path.stat().st_size
                return ToolResult(
                    ok=True, content=f"{raw} is a binary file ({size} bytes), not shown"
                )
            if start is None and end is None:
                return ToolResult(ok=True, content=self._capped(head, path))
            handle.seek(0)
            return ToolResult(ok=True, content=self._line_range(handle, start, end))

    def _capped(self, head: bytes, path: Path) -> str:
        limit = self.config.max_read_bytes
        text = decode_text(head[:limit])
        if len(head) > limit:
            text += (
                f"\n[cut: showing {limit} of {path.stat().st_size} bytes; "
                "use start_line/end_line to read further]"
            )
        return text

    def _line_range(self, handle: IO[bytes], start: int | None, end: int | None) -> str:
        """Lines start..end, streamed: a huge file is never held in memory, only the lines
        shown (up to max_read_bytes) are kept, the rest is counted by blocks."""
        first, limit = start or 1, self.config.max_read_bytes
        chosen: list[bytes] = []
        kept = total = 0
        for line in handle:
            total += 1
            if total >= first:
                chosen.append(line)
                kept += len(line)
            if (end is not None and total >= end) or kept > limit:
                total += _count_rest(handle)
                break
        if first > total:
            return f"[the file has only {total} lines]"
        last = min(end or total, total, first + len(chosen) - 1)
        note = f"[lines {first}-{last} of {total}]"
        return cap_text(decode_text(b"".join(chosen)), limit, "lines") + ("\n" + note)

    # -- write_file and edit_file ------------------------------------------------------------

    def _write(self, arguments: dict[str, Any]) -> ToolResult:
        raw = args.text(arguments, "path")
        data = without_fence(without_line_numbers(args.text(arguments, "content"))).encode("utf-8")
        self._check_size(raw, len(data))
        path = self.policy.resolve(raw, for_write=True)
        if path.is_dir():
            return ToolResult(ok=False, error=f"{raw!r} is a directory")
        existed = path.exists()
        completion = self._replacing(raw, path, data.decode("utf-8")) if existed else None
        if completion is not None:
            data = completion.text.encode("utf-8")
        self._store(path, data)
        verb = "replaced" if existed else "created"
        note = _kept_note(completion.kept if completion else [])
        return ToolResult(ok=True, content=f"{verb} {raw} ({len(data)} bytes)" + note)

    def _replacing(self, raw: str, path: Path, text: str) -> Completion:
        """The text that replaces an existing file: it must parse if the file did, and gets
        back what it left out by accident."""
        before = decode_text(self._load(path))
        self._check_syntax(raw, before, text)
        completion = self._completed(raw, before, text, whole=True)
        self._check_size(raw, len(completion.text.encode("utf-8")))
        return completion

    def _edit(self, arguments: dict[str, Any]) -> ToolResult:
        raw = args.text(arguments, "path")
        if "content" in arguments and "edits" not in arguments:
            return self._write(arguments)  # a small file rewritten whole
        edits = edits_of(arguments)
        dry_run = args.flag(arguments, "dryRun")
        path = self.policy.resolve(raw, for_write=True)
        before = self._editable_text(raw, path)
        after = apply_edits(before, edits)
        if after == before and not dry_run:
            # Counted as a change, it let a model finish (or give up) having done nothing.
            raise EditFailed("the edits change nothing: each newText equals the text it replaces")
        self._check_size(raw, len(after.encode("utf-8")))
        self._check_syntax(raw, before, after)
        completion = self._completed(raw, before, after, whole=False)
        after = completion.text
        if not dry_run:
            self._store(path, after.encode("utf-8"))
        if dry_run:
            diff = unified_diff(raw, before, after) or "(no change)"
            shown, heading = diff, "dry run, nothing written"
        else:
            shown, heading = changed_view(raw, before, after), f"applied {len(edits)} edit(s)"
        shown = cap_text(shown, self.config.max_output_bytes, "lines")
        return ToolResult(ok=True, content=f"{heading}:\n{shown}" + _kept_note(completion.kept))

    def _completed(self, raw: str, before: str, after: str, whole: bool) -> Completion:
        """A Python file with what the new text left out by accident put back; a definition
        dropped by an edit when another file imports it; by a whole-file write, also when it is a
        public one of a module the issue does not name (small models leave out what they were
        not asked about: the 1.5B, implementing `truncate`, wrote textutil.py back without
        `column`, which no test of the repository used)."""
        if not raw.endswith(".py"):
            return Completion(after)
        others = functools.cache(lambda: self._other_python_files(raw))  # listed once, if needed
        importer = functools.partial(self._importer_of, raw, others)
        if not whole:
            # An edit that deletes a definition another file imports gets it back too (the
            # 1.5B replaced a constant other modules import with an unrelated function).
            return complete_module(before, after, importer, importer)
        return complete_module(
            before,
            after,
            lambda name: importer(name) or self._unasked(raw, name),
            importer,
        )

    def _importer_of(self, raw: str, others: Callable[[], list[str]], name: str) -> str | None:
        return self._importer(raw, name, others())

    def _unasked(self, raw: str, name: str) -> str | None:
        if name.startswith("_") or is_test_file(raw.removeprefix("./"), self.test_paths):
            return None
        named = re.search(rf"(?<!\w){re.escape(name)}(?!\w)", self.issue_text)
        return None if named else "the issue does not ask to remove it"

    def _other_python_files(self, raw: str) -> list[str]:
        return [f for f in self._search.python_files() if f != raw.removeprefix("./")]

    def _importer(self, raw: str, name: str, files: list[str]) -> str | None:
        """`<file> uses it` for one of `files` that imports `name` from the module at `raw`,
        or None."""
        module = Path(raw).parent.name if Path(raw).stem == "__init__" else Path(raw).stem
        try:
            found = self._search.scan(importer_pattern(module, name), files)
            if found["matches"]:
                return f"{found['matches'][0][0]} uses it"
            opened = self._search.scan(parenthesised_import_pattern(module), files)
        except SearchFailed:
            return None
        for path in dict.fromkeys(match[0] for match in opened["matches"]):
            if imports_name(self._python_text(path), module, name):
                return f"{path} uses it"  # in an import over several lines
        return None

    def _python_text(self, path: str) -> str:
        try:
            return self._load(self.policy.resolve(path)).decode("utf-8", errors="replace")
        except (OSError, PathRefused):
            return ""

    def _check_syntax(self, raw: str, before: str, after: str) -> None:
        """A Python file that parsed must still parse: the change is refused with the line
        (a file that was already broken may be changed to mend it)."""
        problem = syntax_problem(raw, after)
        if problem and syntax_problem(raw, before) is None:
            raise EditFailed(f"not written: {problem}. Fix the new text and try again.")

    def _editable_text(self, raw: str, path: Path) -> str:
        data = self._load(self._existing_file(raw, path))
        if looks_binary(data):
            raise EditFailed(f"{raw!r} is a binary file; edit_file only changes text")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise EditFailed(f"{raw!r} is not UTF-8 text; it was left unchanged") from None

    def _check_size(self, raw: str, size: int) -> None:
        limit = self.config.max_write_bytes
        if size > limit:
            raise PathRefused(
                f"refused {raw!r}: rule 'max-write-bytes' ({size} bytes is more than {limit})"
            )

    # -- list_directory ----------------------------------------------------------------------

    def _list(self, arguments: dict[str, Any]) -> ToolResult:
        raw = args.text(arguments, "path", ".")
        path = self.policy.resolve(raw)
        if not path.is_dir():
            return ToolResult(ok=False, error=f"{raw!r} is not a directory")
        entries = sorted(path.iterdir(), key=lambda entry: entry.name)
        lines = [
            f"[{'DIR' if entry.is_dir() else 'FILE'}] {entry.name}"
            for entry in entries
            if not self.policy.hidden(entry)
        ]
        return ToolResult(ok=True, content="\n".join(lines) or "(empty directory)")

    def _opened(self, path: Path, flags: int, make_parents: bool = False) -> IO[bytes]:
        """The file at `path` (from policy.resolve), reached without following a link: planner
        may run as root while a process the tools left running swaps a folder for one."""
        descriptor = self.policy.open_beneath(path, flags, make_parents=make_parents)
        return os.fdopen(descriptor, "rb" if flags == os.O_RDONLY else "wb")

    def _load(self, path: Path) -> bytes:
        return self.policy.read_beneath(path)

    def _store(self, path: Path, data: bytes) -> None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        with self._opened(path, flags, make_parents=True) as handle:
            handle.write(data)

    def _existing_file(self, raw: str, path: Path | None = None) -> Path:
        path = path or self.policy.resolve(raw)
        if path.is_dir():
            raise BadArguments(f"{raw!r} is a directory; use list_directory")
        if not path.exists():
            raise FileNotFoundError(raw)
        return path


def _kept_note(kept: list[str]) -> str:
    if not kept:
        return ""
    return "\nplanner put back what the new content left out: " + "; ".join(kept) + "."


def _spec(name: str, description: str, properties: dict[str, Any], required: list[str]) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=description,
        parameters={"type": "object", "properties": properties, "required": required},
    )


READ_FILE = _spec(
    "read_file",
    "Read a text file, optionally only lines start_line..end_line (1-based, inclusive). "
    "Long files are cut with a note; binary files are reported, not shown.",
    {
        "path": PATH,
        "start_line": {"type": "integer", "minimum": 1},
        "end_line": {"type": "integer", "minimum": 1},
    },
    ["path"],
)
WRITE_FILE = _spec(
    "write_file",
    "Create a text file or replace its whole content.",
    {"path": PATH, "content": {"type": "string", "description": "The complete new content"}},
    ["path", "content"],
)
EDIT_FILE = _spec(
    "edit_file",
    "Replace text in a file: each oldText (whole lines copied from the file; whitespace at "
    "line ends may differ) must match exactly one place; edits apply in order and "
    "all-or-nothing; an empty oldText adds newText at the end. Returns the changed lines "
    "as they now are, or the closest lines when oldText is not found.",
    {
        "path": PATH,
        "edits": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
                "required": ["oldText", "newText"],
            },
        },
        "dryRun": {"type": "boolean", "description": "Only show the diff"},
    },
    ["path", "edits"],
)
LIST_DIRECTORY = _spec(
    "list_directory",
    "List a directory's entries as [DIR] name / [FILE] name.",
    {"path": PATH},
    ["path"],
)


NOT_UTF8_NOTE = "[planner: this file is not valid UTF-8; undecodable bytes are shown as \ufffd]\n"


def _count_rest(handle: IO[bytes]) -> int:
    """The lines left in `handle`, read by blocks (a last line without a newline counts)."""
    count, last = 0, b"\n"
    while block := handle.read(1 << 20):
        count += block.count(b"\n")
        last = block[-1:]
    return count + (0 if last == b"\n" else 1)


def decode_text(data: bytes) -> str:
    """UTF-8 text, saying so when bytes had to be replaced (a cut at the end is not an error)."""
    try:
        return codecs.getincrementaldecoder("utf-8")("strict").decode(data, final=False)
    except UnicodeDecodeError:
        return NOT_UTF8_NOTE + data.decode("utf-8", errors="replace")
