"""Blocks of a definition the issue's test did not run, left out of a candidate request and put
back into its reply.

A released package's functions are long: branches for options, error paths, other input kinds.
The 1.5B writes a shown definition back whole, so on a CPU each line it was shown costs time
in the reply, and lines the issue's test never reached seldom hold the bug it shows. A block of
statements none of which ran (an `if` body, an `else`, an `except` handler, a nested function's
body) is shown as one `...  # block A: …` line; the reply writes that line back and the file
keeps the block as it was. A reply that leaves a marker out is not used: it would delete lines
the model never saw.
"""

from __future__ import annotations

import ast
import re
import string
import textwrap
from collections.abc import Collection
from dataclasses import dataclass

from planner.model.definitions import first_line

MIN_ELIDED_LINES = 3
"""A block shorter than this is shown: its marker would save little and cost a line to copy."""
MARKER = re.compile(r"^(?P<indent>[ \t]*)(?:\.\.\.[ \t]*)?#[ \t]*block (?P<label>[A-Z])\b.*$")
"""A marker line as a reply writes it back: the `...` may be dropped, the words after the label
rewritten."""


@dataclass(frozen=True)
class Elided:
    """Lines `first`..`last` of the file (1-based, inclusive), shown as one marker line."""

    first: int
    last: int
    label: str
    indent: str
    """The block's first line's indentation in the file."""

    def marker(self) -> str:
        count = self.last - self.first + 1
        return f"{self.indent}...  # block {self.label}: {count} lines the test does not run"


def unrun_blocks(source: str, start: int, ran: Collection[int]) -> tuple[Elided, ...]:
    """The outermost blocks of the definition `source` (its first line is line `start` of the
    file) of at least MIN_ELIDED_LINES lines that hold no line of `ran` (the file's lines the
    issue's test ran); none when none of its lines ran (nothing says which part matters)."""
    lines = source.splitlines()
    here = {n - start + 1 for n in ran if start <= n < start + len(lines)}
    root = _root(source)
    if root is None or not here:
        return ()
    dedented = textwrap.dedent(source).splitlines()
    spans = sorted(
        (span[:2] for span in _statement_lists(root) if _elidable(span, dedented, here)),
        key=lambda span: (span[0], -span[1]),
    )
    chosen: list[tuple[int, int]] = []
    for first, last in spans:
        if not any(outer[0] <= first and last <= outer[1] for outer in chosen):
            chosen.append((first, last))
    return tuple(
        Elided(first + start - 1, last + start - 1, label, _indent(lines[first - 1]))
        for (first, last), label in zip(chosen, string.ascii_uppercase, strict=False)  # A-Z
    )


def elided(source: str, start: int, blocks: Collection[Elided]) -> str:
    """`source` (its first line is line `start` of the file) with each block as its marker."""
    lines = source.splitlines(keepends=True)
    for block in sorted(blocks, key=lambda b: b.first, reverse=True):
        at, end = block.first - start, block.last - start + 1
        lines[at:end] = [block.marker() + "\n"]
    return "".join(lines)


def with_ellipsis(reply: str) -> str:
    """The reply with each marker written back as a comment alone given its `...` again, so
    that a block it stands for alone still parses."""
    lines = reply.split("\n")
    for at, line in enumerate(lines):
        match = MARKER.match(line)
        if match is not None and not line.lstrip().startswith("..."):
            lines[at] = f"{match['indent']}...  {line.lstrip()}"
    return "\n".join(lines)


def restored(
    new_lines: list[str], blocks: Collection[Elided], file_lines: list[str]
) -> list[str] | None:
    """`new_lines` (the reply's definition, indented as in the file) with each marker replaced
    by the lines it stands for, re-indented by as much as the marker moved; None unless each
    block's marker is there exactly once."""
    by_label = {block.label: block for block in blocks}
    found = [(at, MARKER.match(line)) for at, line in enumerate(new_lines)]
    markers = [(at, match) for at, match in found if match and match["label"] in by_label]
    if sorted(match["label"] for _, match in markers) != sorted(by_label):
        return None
    result = list(new_lines)
    for at, match in reversed(markers):
        block = by_label[match["label"]]
        original = file_lines[block.first - 1 : block.last]
        result[at : at + 1] = _shifted(original, len(match["indent"]) - len(block.indent))
    return result


def _shifted(lines: list[str], by: int) -> list[str]:
    if by > 0:
        return [" " * by + line if line.strip() else line for line in lines]
    if by < 0:
        return [line[-by:] if line[:-by].strip() == "" else line for line in lines]
    return lines


def _root(source: str) -> ast.stmt | None:
    try:
        body = ast.parse(textwrap.dedent(source)).body
    except (SyntaxError, ValueError):
        return None
    definitions = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    return next((node for node in body if isinstance(node, definitions)), None)


def _statement_lists(root: ast.stmt) -> list[tuple[int, int, int]]:
    """(first line, last line, first column) of every list of statements inside `root`
    (bodies, `else` parts, handlers, cases), in the dedented definition's numbering."""
    spans = []
    for node in ast.walk(root):
        if node is root:
            continue
        for _field, value in ast.iter_fields(node):
            if isinstance(value, list) and value and all(isinstance(v, ast.stmt) for v in value):
                head = value[0]
                decorators: list[ast.expr] = getattr(head, "decorator_list", [])
                column = min([head.col_offset, *(d.col_offset - 1 for d in decorators)])
                last = value[-1].end_lineno or value[-1].lineno
                spans.append((first_line(head), last, column))
    return spans


def _elidable(span: tuple[int, int, int], lines: list[str], ran: set[int]) -> bool:
    """Long enough, none of its lines ran, and its lines are its own: not an `elif` (the
    marker would take the keyword away), not a body on its header's line."""
    first, last, column = span
    if last - first + 1 < MIN_ELIDED_LINES or any(first <= n <= last for n in ran):
        return False
    opening = lines[first - 1]
    own_line = len(opening) - len(opening.lstrip()) == column
    return own_line and not opening.lstrip().startswith(("elif ", "elif("))


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]
