"""edit_file's core: search/replace edits small models can make, applied all-or-nothing.

An old text is found exactly first; when it is not in the file, a match that ignores
whitespace at the ends of lines (and then inside them) is tried, and the replacement is
re-indented to the lines it replaces; line numbers copied from the prompt's view of the file
and a code fence wrapped around the texts are left out. When nothing matches, the error quotes
the closest lines of the file with their numbers, so the next attempt can copy them. Argument
shapes that models write instead of {"edits": [{"oldText", "newText"}]} (snake_case names,
SWE-agent's old_str/new_str, one edit at the top level, a pair of strings) are read as what
they mean.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from planner.text.line_diff import line_opcodes
from planner.tools.arguments import BadArguments

OLD_KEYS = ("oldText", "old_text", "old_str", "old", "search", "find", "original")
NEW_KEYS = ("newText", "new_text", "new_str", "new", "replace", "replacement", "updated")
CLOSEST_CONTEXT = 2
"""Lines shown around the closest match when an old text is not found."""
LINE_NUMBER = re.compile(r"^\s*\d+\| ?")
CLOSEST_MIN_RATIO = 0.5
"""Below this similarity no lines are offered: they would mislead more than help."""


class EditFailed(Exception):
    """An edit could not be applied; nothing was written."""


@dataclass(frozen=True)
class Edit:
    old_text: str
    new_text: str

    @classmethod
    def parse(cls, index: int, raw: dict[str, Any]) -> Edit:
        old, new = _first(raw, OLD_KEYS), _first(raw, NEW_KEYS)
        if not isinstance(old, str) or not isinstance(new, str):
            raise BadArguments(
                f"edits[{index}] needs string fields 'oldText' and 'newText', e.g. "
                '{"oldText": "return a - b", "newText": "return a + b"}'
            )
        return cls(old, new)


def edits_of(arguments: dict[str, Any]) -> list[Edit]:
    """The edits an edit_file call asks for, whichever of the known shapes it uses."""
    raw = arguments.get("edits")
    if raw is None and _first(arguments, OLD_KEYS) is not None:
        raw = [arguments]  # one edit written at the top level
    if isinstance(raw, dict):
        raw = [raw]
    if isinstance(raw, list) and len(raw) == 2 and all(isinstance(i, str) for i in raw):
        raw = [{"oldText": raw[0], "newText": raw[1]}]  # ["old", "new"]
    if not isinstance(raw, list) or not raw:
        raise BadArguments("argument 'edits' must be a non-empty array of objects")
    if not all(isinstance(item, dict) for item in raw):
        raise BadArguments(
            "every item of 'edits' must be an object like "
            '{"oldText": "<exact lines now in the file>", "newText": "<their replacement>"}; '
            "to write the whole file, call write_file with its complete new content instead"
        )
    return [Edit.parse(index, item) for index, item in enumerate(raw)]


def _first(raw: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((raw[key] for key in keys if key in raw), None)


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Apply every edit in order to `text`; each old text must match exactly one place."""
    original = text
    for index, edit in enumerate(edits):
        edit = Edit(edit.old_text, with_file_indentation(edit.new_text, original))
        try:
            text = _apply(index, text, edit)
        except NotFound as missing:
            raise EditFailed(_not_found(index, edit, original.splitlines(keepends=True))) from (
                missing
            )
    return text


class NotFound(EditFailed):
    """The old text matches nowhere (the message is written with the file as it was)."""


def _apply(index: int, text: str, edit: Edit) -> str:
    if not edit.old_text.strip():
        return _appended(text, edit.new_text)
    try:
        return _apply_as_written(index, text, edit)
    except EditFailed:
        meant = _without_line_numbers(edit) or _without_fences(edit)
        if meant is None:
            raise
        return _apply_as_written(index, text, meant)


def _appended(text: str, new_text: str) -> str:
    """An empty oldText adds newText at the end of the file (line numbers copied from the
    prompt's view of the file are left out)."""
    new_text = without_line_numbers(new_text)
    separator = "" if not text or text.endswith("\n") else "\n"
    ending = "" if new_text.endswith("\n") else "\n"
    return text + separator + new_text + ending


def _without_line_numbers(edit: Edit) -> Edit | None:
    """The edit without the `12| ` prefixes copied from a line-numbered file view, when every
    line of its old text carries one; None otherwise."""
    old_lines = [line for line in edit.old_text.splitlines() if line.strip()]
    if not any(LINE_NUMBER.match(line) for line in old_lines):
        return None  # (the first line is often copied without its number, the rest with)
    old = _unnumbered(edit.old_text)
    return Edit(old, _unnumbered(edit.new_text)) if old.strip() else None


def _without_fences(edit: Edit) -> Edit | None:
    """The edit without the code fence its old text is wrapped in (the 1.5B's README edit:
    oldText "```markdown\\n# tempconv\\n```"), and the new text's, when that one is wrapped
    too; None when the old text is not wrapped or either cannot be unwrapped cleanly."""
    old = without_fence(edit.old_text)
    new = without_fence(edit.new_text)
    new_wrapped = WRAPPING_FENCE.match(edit.new_text) is not None
    if old == edit.old_text or not old.strip() or (new_wrapped and new == edit.new_text):
        return None
    return Edit(old, new)


VIEW_FRAME = re.compile(r"^=== .* ===$|^\S+ now reads \(lines \d+-\d+ of \d+\):$")
"""The heading and end lines planner puts around a file it shows."""


def without_line_numbers(content: str) -> str:
    """A whole file written as planner shows files (the `12| ` prefixes on every line, the
    `=== path ===` frame around them), copied from the prompt or an edit's result, is the
    file without them."""
    kept = [line for line in content.split("\n") if not VIEW_FRAME.match(line.strip())]
    lines = [line for line in kept if line.strip()]
    if lines and all(LINE_NUMBER.match(line) for line in lines):
        return _unnumbered("\n".join(kept)).strip("\n") + "\n"
    return content


WRAPPING_FENCE = re.compile(
    r"\A\s*(`{3,}|~{3,})[\w+.-]*[ \t]*\n(.*\n)?[ \t]*\1[ \t]*\n?\s*\Z", re.DOTALL
)
"""Content that is one code block from its first line to its last."""


def without_fence(content: str) -> str:
    """A whole file written inside a code block (the 1.5B wrote README.md's new content with
    its ```markdown fence into write_file) is the file without the fence. Not when a line
    inside could close that fence: then the first and last blocks may be the file's own."""
    wrapped = WRAPPING_FENCE.match(content)
    if wrapped is None:
        return content
    fence, inner = wrapped.group(1), wrapped.group(2) or ""
    closes = any(line.strip().startswith(fence) for line in inner.split("\n"))
    return content if closes else inner


def with_file_indentation(new_text: str, file_text: str) -> str:
    """Leading tabs in new text for a file indented with spaces only become four spaces each
    (small models indent with tabs; Python then refuses the mixed block)."""
    if "\n\t" in "\n" + file_text or "\t" not in new_text:
        return new_text
    return "\n".join(_spaced(line) for line in new_text.split("\n"))


def _spaced(line: str) -> str:
    stripped = line.lstrip("\t")
    return "    " * (len(line) - len(stripped)) + stripped


def _unnumbered(text: str) -> str:
    return "\n".join(LINE_NUMBER.sub("", line) for line in text.split("\n"))


def _apply_as_written(index: int, text: str, edit: Edit) -> str:
    count = text.count(edit.old_text)
    if count > 1:
        raise EditFailed(_not_unique(index, edit, text))
    lines = text.splitlines(keepends=True)
    if count == 1:
        return _replace_exact(text, lines, edit)
    for normal in (str.strip, _no_spaces):
        found = _line_matches(lines, edit.old_text, normal)
        if len(found) == 1:
            return _replace_lines(lines, with_restated_block(lines, found[0], edit.new_text), edit)
        if len(found) > 1:
            raise EditFailed(_not_unique(index, edit, text))
    raise NotFound(edit.old_text)


def _replace_exact(text: str, lines: list[str], edit: Edit) -> str:
    """The one exact match replaced; over the whole block when newText rewrites the block that
    oldText's last line opens (see with_restated_block)."""
    where = _whole_lines(text, edit.old_text)
    wider = with_restated_block(lines, where, edit.new_text) if where else None
    if where is None or wider is None or wider == where:
        return text.replace(edit.old_text, edit.new_text, 1)
    new_text = edit.new_text if edit.new_text.endswith("\n") else edit.new_text + "\n"
    return "".join(lines[: wider.start]) + new_text + "".join(lines[wider.stop :])


def _whole_lines(text: str, old_text: str) -> range | None:
    """The lines an exact match covers, when it starts and ends at line boundaries."""
    start = text.index(old_text)
    end = start + len(old_text.rstrip("\n"))
    if (start and text[start - 1] != "\n") or (end < len(text) and text[end] != "\n"):
        return None
    first = text.count("\n", 0, start)
    return range(first, text.count("\n", 0, end) + 1)


RESTATED_RATIO = 0.85
"""Lines at least this alike (spaces and quote style aside) are one line restated."""
CLOSERS = frozenset({"}", "};", "})", "});", "end", "fi", "done", "esac"})


def with_restated_block(lines: list[str], where: range, new_text: str) -> range:
    """Small models quote only a block's first line (`def pop(self):`) as oldText and then
    write the whole block, old body included, as newText: replacing just that line would
    leave the old body behind, duplicated. When oldText's last line opens an indented block
    and newText restates the block's body (at least half of the body lines it covers, in
    order), the matched range grows over the restated part of the block."""
    header = lines[where.stop - 1]
    body = _block_after(lines, where.stop, len(_indent(header)))
    tail = new_text.strip("\n").splitlines()[len(where) :]
    restated = _restated_count(tail, [lines[i] for i in body])
    return range(where.start, body[restated - 1] + 1) if restated else where


def _block_after(lines: list[str], start: int, header_width: int) -> list[int]:
    """Indices of the block body after a header line (more indented lines, blank lines
    inside, and a closing `}`/`end` line at the header's indentation)."""
    stop = start
    while stop < len(lines) and (
        not lines[stop].strip() or len(_indent(lines[stop])) > header_width
    ):
        stop += 1
    while stop > start and not lines[stop - 1].strip():
        stop -= 1
    body = list(range(start, stop))
    if body and stop < len(lines) and lines[stop].strip() in CLOSERS:
        body.append(stop)
    return body


def _restated_count(tail: list[str], body: list[str]) -> int:
    """How many lines of `body` (from its start) `tail` restates; 0 when it does not."""
    wanted = [_comparable(line) for line in tail if line.strip()]
    have = [_comparable(line) for line in body]
    position = matched = 0
    last = -1
    for line in wanted:
        for index in range(position, min(len(have), position + 3)):
            if have[index] and _alike(line, have[index]):
                matched, last, position = matched + 1, index, index + 1
                break
    covered = sum(1 for line in have[: last + 1] if line)
    return last + 1 if last >= 0 and 2 * matched >= covered else 0


def _comparable(line: str) -> str:
    return _no_spaces(line).replace("'", '"')


def _alike(one: str, other: str) -> bool:
    return one == other or (
        difflib.SequenceMatcher(None, one, other, autojunk=False).ratio() >= RESTATED_RATIO
    )


def _no_spaces(line: str) -> str:
    return "".join(line.split())


def _line_matches(lines: list[str], old_text: str, normal: Callable[[str], str]) -> list[range]:
    """Where the old text's lines occur in the file, compared after `normal`."""
    wanted = [normal(line) for line in old_text.strip("\n").splitlines()]
    if not any(wanted):
        return []
    have = [normal(line) for line in lines]
    size = len(wanted)
    return [
        range(start, start + size)
        for start in range(len(have) - size + 1)
        if have[start : start + size] == wanted
    ]


def _replace_lines(lines: list[str], where: range, edit: Edit) -> str:
    """Replace the matched lines, moving the new text to the indentation the file has."""
    file_indent = _indent(lines[where.start])
    old_indent = _indent(next(line for line in edit.old_text.splitlines() if line.strip()))
    new_lines = [
        _reindent(line, old_indent, file_indent) for line in edit.new_text.strip("\n").splitlines()
    ]
    ending = "\n" if lines[where.stop - 1].endswith("\n") else ""
    replacement = "\n".join(new_lines) + ending if new_lines else ""
    return "".join(lines[: where.start]) + replacement + "".join(lines[where.stop :])


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _reindent(line: str, old: str, new: str) -> str:
    """`line` moved from oldText's indentation to the file's; a line less indented than
    oldText keeps its distance (a new top-level function after an edited method body)."""
    if not line.strip():
        return ""
    if line.startswith(old):
        return new + line[len(old) :]
    shifted = len(_indent(line)) + len(new) - len(old)
    return " " * max(0, shifted) + line.lstrip()


def _not_unique(index: int, edit: Edit, text: str) -> str:
    first_line = (edit.old_text.strip().splitlines() or [edit.old_text])[0].strip()
    numbers = [str(n) for n, line in enumerate(text.splitlines(), 1) if first_line in line]
    return (
        f"edits[{index}].oldText {_excerpt(edit.old_text)} matches more than one place "
        f"(lines {', '.join(numbers[:8])}); include more surrounding lines so it is unique. "
        "No edit was applied."
    )


def _not_found(index: int, edit: Edit, lines: list[str]) -> str:
    head = (
        f"edits[{index}].oldText {_excerpt(edit.old_text)} is not in the file; no edit was "
        "applied, the file is unchanged (edits apply in order, each to the text the earlier "
        "ones left)."
    )
    closest = closest_lines(lines, edit.old_text)
    if not closest:
        return head
    return f"{head}\nThe closest lines of the file (copy oldText from them exactly):\n{closest}"


def closest_lines(lines: list[str], old_text: str) -> str:
    """The window of the file most like `old_text`, numbered, with a little context."""
    size = max(1, len(old_text.strip("\n").splitlines()))
    wanted = old_text.strip()
    best, best_score = -1, 0.0
    for start in range(max(1, len(lines) - size + 1)):
        window = "".join(lines[start : start + size]).strip()
        score = difflib.SequenceMatcher(None, wanted, window, autojunk=False).ratio()
        if score > best_score:
            best, best_score = start, score
    if best < 0 or best_score < CLOSEST_MIN_RATIO:
        return ""
    first = max(0, best - CLOSEST_CONTEXT)
    last = min(len(lines), best + size + CLOSEST_CONTEXT)
    # Without numbers: these lines are to be copied as they are.
    shown = "".join(line.rstrip("\r\n") + "\n" for line in lines[first:last])
    return f"(lines {first + 1}-{last})\n{shown}"


def numbered(lines: list[str], first: int = 1) -> str:
    """Lines prefixed with their numbers, as the task prompt shows files."""
    width = len(str(first + len(lines) - 1))
    return "".join(
        f"{number:>{width}}| {line.rstrip(chr(13) + chr(10))}\n"
        for number, line in enumerate(lines, first)
    )


def _excerpt(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:77] + "...")


WHOLE_FILE_LINES = 60
"""A changed file up to this many lines is shown whole after an edit."""
REGION_CONTEXT = 4


def changed_view(path: str, before: str, after: str) -> str:
    """The file after an edit, line-numbered: whole when small, else the changed lines with a
    little context. Small models copy a diff's `+`/`-` lines into their next edit; the lines
    as they now are can be copied as oldText and show a duplicated or misplaced line."""
    lines = after.splitlines(keepends=True)
    changed = _changed_lines(before, after)
    if not changed:
        return "(no change)"
    if len(lines) <= WHOLE_FILE_LINES:
        first, last = 0, len(lines)
    else:
        first = max(0, changed.start - REGION_CONTEXT)
        last = min(len(lines), changed.stop + REGION_CONTEXT)
    heading = f"{path} now reads (lines {first + 1}-{last} of {len(lines)}):"
    return f"{heading}\n{numbered(lines[first:last], first + 1)}"


def _changed_lines(before: str, after: str) -> range | None:
    """The span of lines of `after` that differ from `before`."""
    changes = line_opcodes(before.splitlines(), after.splitlines())
    spans = [(j1, j2) for tag, _, _, j1, j2 in changes if tag != "equal"]
    if not spans:
        return None
    return range(spans[0][0], max(spans[-1][1], spans[0][0] + 1))


def unified_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


PYTHON_SUFFIXES = re.compile(r"\.pyi?$")


def syntax_problem(path: str, text: str) -> str | None:
    """For a Python file that no longer parses: the error and its line (SWE-agent's edit lint)."""
    if not PYTHON_SUFFIXES.search(path):
        return None
    try:
        compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as error:
        where = f"line {error.lineno}" if error.lineno else "somewhere"
        shown = (error.text or "").rstrip()
        return f"{path} no longer parses as Python: {error.msg} at {where}" + (
            f": {shown.strip()!r}" if shown else ""
        )
    except ValueError as error:  # null bytes
        return f"{path} no longer parses as Python: {error}"
    return None
