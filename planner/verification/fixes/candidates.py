"""Candidate fixes: a located definition rewritten in one model call, several times; the
tests choose (verification.candidates).

In a real package a 1.5B model on a tool-calling loop mostly garbles the file it edits, yet
shown one short function, the issue and the issue's failing test, it can write the function
back fixed — sometimes, not every time. Agentless samples such candidates and keeps the one
the tests accept; here each candidate is one call whose reply is one function (or class),
put in place of the shown one, judged by the issue's test and the tests of the changed file,
and taken back. The definitions come from the repository's symbol index (the same ranking
the task prompt shows), a few of them in turn: the best-ranked is not always the buggy one.

This module holds what needs no pass: which definitions to show, the request, and how a
reply becomes the file's new text. planner.verification.candidate_phase runs them.
"""

from __future__ import annotations

import ast
import difflib
import re
import textwrap
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TypeGuard

from planner.core.interfaces import PointedDefinition
from planner.model.definitions import first_line, is_docstring
from planner.text.line_diff import line_opcodes
from planner.verification.fixes.elision import (
    Elided,
    elided,
    restored,
    unrun_blocks,
    with_ellipsis,
)
from planner.verification.fixes.trace import RAN

MAX_SPOTS = 3
"""Definitions candidates are asked for, in turn."""
MAX_TRACED_SPOTS = 4
"""Definitions asked for at most when the issue's test's trace says why each is suspected
(planner.verification.fixes.trace.Trace.ranked): each of those is, up to this many; the
issue's words choose the rest up to MAX_SPOTS."""
MAX_SPOT_LINES = 100
"""A definition with more lines of code than this (its docstring aside) is not asked for: the
reply would be long and garbled. The blocks the issue's test did not run count: admitted, a long
function the test ran a little of took the place of the short one that held the bug."""
SHORTENED_DOCSTRING_LINES = 3
"""A definition's docstring longer than this is shown as its summary line: a released
package's docstrings (parameters, examples, doctests) are often longer than the code, and on a
CPU each line the model writes back costs time. The file keeps its whole docstring, whatever
the reply does with the summary line (spliced)."""
FAILURE_CHARS = 1_500
"""Characters of the issue test's failing output a request shows."""
FENCE = re.compile(r"```[\w+.-]*[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)

Node = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


@dataclass(frozen=True)
class Spot:
    """A definition candidates are asked for, with its source as the file has it now."""

    path: str
    qualname: str
    kind: str
    start: int
    end: int
    source: str
    called_by: str = ""
    why: str = ""
    """Why it is asked for (planner.verification.fixes.trace): run by the issue's test, it
    returned the value the test's assertion found wrong (`returned_wrong`), a part of that
    value (`flows`), was in the traceback of its error (`raised`), or only ran (`ran`);
    empty when no trace was read."""
    elided: tuple[Elided, ...] = ()
    """Its blocks the issue's test did not run, each shown as one line
    (planner.verification.fixes.elision)."""

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]

    @property
    def label(self) -> str:
        return f"{self.path}:{self.qualname}"

    @property
    def shown(self) -> str:
        """The source without its indentation (a method is shown as a function would be), a
        long docstring cut to its summary line, the blocks the test did not run left out."""
        return shortened_docstring(textwrap.dedent(elided(self.source, self.start, self.elided)))

    @property
    def shortened(self) -> bool:
        """Its docstring is shown cut to its summary line."""
        whole = textwrap.dedent(self.source)
        return shortened_docstring(whole) != whole


def shortened_docstring(source: str) -> str:
    """`source` (one dedented definition) with a docstring of more than
    SHORTENED_DOCSTRING_LINES lines written as its summary line (`source` itself when there is
    none, or its summary cannot stand alone)."""
    node = _first_definition(source)
    if node is None or not node.body or not is_docstring(node.body[0]):
        return source
    doc = node.body[0]
    end = doc.end_lineno or doc.lineno
    if end - doc.lineno + 1 <= SHORTENED_DOCSTRING_LINES:
        return source
    lines = source.splitlines(keepends=True)
    opening = lines[doc.lineno - 1]
    quotes = re.match(r"(\s*)([rRuU]?)(\"\"\"|\'\'\')(.*)$", opening.rstrip("\r\n"))
    if quotes is None:
        return source
    indent, prefix, mark, rest = quotes.groups()
    summary_line = rest.strip() or lines[doc.lineno].strip()
    if not summary_line or mark in summary_line or summary_line.endswith("\\"):
        return source
    short = f"{indent}{prefix}{mark}{summary_line}{mark}\n"
    result = "".join([*lines[: doc.lineno - 1], short, *lines[end:]])
    return result if _first_definition(result) is not None else source


def _first_definition(source: str) -> Node | None:
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError):
        return None
    definitions = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    return next((n for n in body if isinstance(n, definitions)), None)


def spots(
    pointed: Sequence[PointedDefinition],
    read: Callable[[str], str | None],
    is_test: Callable[[str], bool],
    limit: int = MAX_SPOTS,
    first: Mapping[tuple[str, int], str] = MappingProxyType({}),
    ran: Collection[tuple[str, int]] = (),
    covered: Mapping[str, Collection[int]] = MappingProxyType({}),
) -> list[Spot]:
    """The definitions to ask for, best first: not in test files, short enough to be written
    back whole, none inside one already chosen or holding one. Those in `first` ((path, first
    line) of the functions the issue's test's trace suspects, in its order, with why) come
    first, up to MAX_TRACED_SPOTS of them; then a definition the text points to that one too
    long to be asked for calls: the bug may be in it. `ran`: the functions the test ran;
    `covered`: the lines it ran, by file (the blocks of a definition it did not run are left
    out of what the model is shown)."""
    long_ones = {p.qualname for p in pointed if p.end - p.start + 1 > MAX_SPOT_LINES}
    order = {place: index for index, place in enumerate(first)}
    traced_limit = max(limit, MAX_TRACED_SPOTS)
    ran_places = set(ran)
    ordered = sorted(
        pointed,
        key=lambda p: (
            order.get((p.path, p.start), len(order)),
            not (p.located and p.called_by in long_ones),
        ),
    )
    chosen: list[Spot] = []
    texts: dict[str, str | None] = {}
    for place in ordered:
        traced = (place.path, place.start) in order
        if len(chosen) >= (traced_limit if traced else limit):
            continue
        if is_test(place.path):
            continue
        if any(_overlap(s, place) for s in chosen):
            continue
        if place.path not in texts:
            texts[place.path] = read(place.path)
        text = texts[place.path]
        if text is None:
            continue
        lines = text.splitlines(keepends=True)[place.start - 1 : place.end]
        source = "".join(lines)
        if not lines or _code_lines(source) > MAX_SPOT_LINES:
            continue
        blocks = unrun_blocks(source, place.start, covered.get(place.path, ()))
        chosen.append(
            Spot(
                place.path,
                place.qualname,
                place.kind,
                place.start,
                place.end,
                "".join(lines),
                place.called_by,
                first.get((place.path, place.start))
                or (RAN if (place.path, place.start) in ran_places else ""),
                blocks,
            )
        )
    return chosen


def _code_lines(source: str) -> int:
    """Lines of a definition, its docstring aside."""
    whole = textwrap.dedent(source)
    shown = shortened_docstring(whole)
    return len(shown.splitlines()) - (shown != whole)


def _overlap(spot: Spot, place: PointedDefinition) -> bool:
    return spot.path == place.path and place.start <= spot.end and spot.start <= place.end


def spliced(text: str, spot: Spot, reply: str) -> str | None:
    """`text` with the spot's definition replaced by the reply's definition of the same name
    (`text` itself when that is unchanged); None when the reply holds none, or the file would
    not parse, or it leaves out a block it was shown as a marker (it would delete lines the
    model never saw). A reply without the docstring or the decorators keeps the file's (the
    model shortens, it rarely means to delete them)."""
    node, block = _definition(with_ellipsis(reply) if spot.elided else reply, spot)
    if node is None:
        return _line_edited(text, spot, reply)
    lines = text.splitlines()
    old_lines = lines[spot.start - 1 : spot.end]
    old = _parsed_spot(old_lines, spot.name)
    new_lines = block.splitlines()[first_line(node) - 1 : node.end_lineno or node.lineno]
    new_lines = textwrap.dedent("\n".join(new_lines)).splitlines()
    if old is not None:
        old_text = textwrap.dedent("\n".join(old_lines))
        new_lines = _kept_parts(old, old_text, new_lines, spot.shortened)
    indent = old_lines[0][: len(old_lines[0]) - len(old_lines[0].lstrip())] if old_lines else ""
    new_lines = _as_before(old_lines, [indent + line if line.strip() else "" for line in new_lines])
    whole = restored(new_lines, spot.elided, lines) if spot.elided else new_lines
    if whole is None:
        return None
    return joined(text, [*lines[: spot.start - 1], *whole, *lines[spot.end :]])


def _line_edited(text: str, spot: Spot, reply: str) -> str | None:
    """The 1.5B often answers with the changed line alone ("The corrected line should be:"),
    or the wrong line's block and then the corrected one's. Such a line takes the place of the
    one line of the definition most like it (a pair: of the first block's line); the
    indentation is the file's."""
    blocks = [b.strip("\n") for b in FENCE.findall(reply) if b.strip()]
    blocks = [b for b in blocks if len(b.splitlines()) == 1]
    if not blocks or len(blocks) > 2:
        return None
    wrong, fixed = (blocks[0], blocks[1]) if len(blocks) == 2 else (blocks[0], blocks[0])
    lines = text.splitlines()
    inside = range(spot.start - 1, min(spot.end, len(lines)))
    scored = [(_likeness(lines[i].strip(), wrong.strip()), i) for i in inside if lines[i].strip()]
    if not scored:
        return None
    likeness, at = max(scored)
    if likeness < LINE_LIKENESS or (len(blocks) == 1 and likeness == 1.0):
        return None
    indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
    lines[at] = indent + fixed.strip()
    return joined(text, lines)


def joined(text: str, lines: list[str]) -> str | None:
    """`lines` as a file with the line endings of `text` (a CRLF file stays one); None when
    it does not parse."""
    newline = "\r\n" if "\r\n" in text else "\n"
    joined = newline.join(lines) + (newline if text.endswith(("\n", "\r")) else "")
    try:
        ast.parse(joined)
    except (SyntaxError, ValueError):
        return None
    return joined


LINE_LIKENESS = 0.6
"""A corrected line replaces the definition's line at least this alike (difflib's ratio)."""


def _likeness(a: str, b: str) -> float:
    return difflib.SequenceMatcher(a=a, b=b, autojunk=False).ratio()


def _as_before(old: list[str], new: list[str]) -> list[str]:
    """`new` with the lines it keeps from `old` (trailing whitespace aside) as `old` has them:
    a reply's stripped blank lines in a docstring are no change."""
    matcher = difflib.SequenceMatcher(
        a=[line.rstrip() for line in old], b=[line.rstrip() for line in new], autojunk=False
    )
    result = list(new)
    for a, b, size in matcher.get_matching_blocks():
        result[b : b + size] = old[a : a + size]
    return result


def _definition(reply: str, spot: Spot) -> tuple[Node | None, str]:
    """The first definition named like the spot in the reply's code blocks (or in the
    reply itself when it has none): at the block's top level, or inside a class of the
    spot's class name for a method."""
    owner = spot.qualname.rsplit(".", 2)[-2] if "." in spot.qualname else ""
    for block in [*FENCE.findall(reply), reply]:
        block = textwrap.dedent(block)
        try:
            body = ast.parse(block).body
        except (SyntaxError, ValueError):
            continue
        for node in body:
            if _named(node, spot.name):
                return node, block
            if owner and isinstance(node, ast.ClassDef) and node.name == owner:
                inner = next((m for m in node.body if _named(m, spot.name)), None)
                if inner is not None:
                    return inner, block
    return None, ""


def _named(node: ast.stmt, name: str) -> TypeGuard[Node]:
    definitions = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    return isinstance(node, definitions) and node.name == name


def _parsed_spot(lines: list[str], name: str) -> Node | None:
    try:
        body = ast.parse(textwrap.dedent("\n".join(lines))).body
    except (SyntaxError, ValueError):
        return None
    return next((n for n in body if _named(n, name)), None)


def _kept_parts(
    old: Node, old_text: str, new_lines: list[str], shortened: bool = False
) -> list[str]:
    """The new definition with the old one's docstring and decorators where it has none. When
    the model was shown the docstring `shortened` (to its summary line), the file's whole
    docstring takes the place of whatever docstring the reply has: it cannot have meant to
    edit lines it did not see."""
    try:
        new = ast.parse("\n".join(new_lines)).body[0]
    except (SyntaxError, ValueError, IndexError):
        return new_lines
    if not isinstance(new, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return new_lines
    if shortened and new.body and is_docstring(new.body[0]):
        doc = new.body[0]
        end = doc.end_lineno or doc.lineno
        body = new_lines[end:] or [" " * doc.col_offset + "pass"]  # parses until the old one
        kept = _kept_parts(old, old_text, [*new_lines[: doc.lineno - 1], *body])
        return kept if new_lines[end:] else kept[:-1]
    old_source = old_text.splitlines()
    result = list(new_lines)
    has_doc = bool(new.body) and is_docstring(new.body[0])
    if old.body and is_docstring(old.body[0]) and not has_doc and new.body:
        doc = old.body[0]
        doc_lines = old_source[doc.lineno - 1 : doc.end_lineno or doc.lineno]
        shift = new.body[0].col_offset - doc.col_offset
        doc_lines = [
            (" " * shift + line if shift > 0 and line.strip() else line) for line in doc_lines
        ]
        at = new.body[0].lineno - 1
        result = [*result[:at], *doc_lines, *result[at:]]
    if old.decorator_list and not new.decorator_list:
        result = [*old_source[first_line(old) - 1 : old.lineno - 1], *result]
    return result


def single_changes(original: str, text: str) -> list[str]:
    """When a candidate changes the file in 2 to MAX_PARTS separate places, the file with each
    of those changes alone (those that parse). The 1.5B often gets the one line right and
    changes two more it was not asked to: its first `LRUCache` had the right `next(iter(…))`
    and a rewritten `__update` that broke the issue's test. Trying the parts costs test runs,
    not model calls."""
    before, after = original.splitlines(keepends=True), text.splitlines(keepends=True)
    changes = [op for op in line_opcodes(before, after) if op[0] != "equal"]
    if not 2 <= len(changes) <= MAX_PARTS:
        return []
    variants = []
    for _tag, first, last, new_first, new_last in changes:
        variant = "".join([*before[:first], *after[new_first:new_last], *before[last:]])
        try:
            ast.parse(variant)
        except (SyntaxError, ValueError):
            continue
        variants.append(variant)
    return variants


MAX_PARTS = 4
"""A candidate changing more places than this is not tried part by part."""


def failure_excerpt(tail: str) -> str:
    """What a failing pytest run says about why, short: the lines it points at (`>`), its
    error lines (`E`) and where they were raised (`file.py:12: TypeError`), without the
    source around them (the request shows the code); else the output's end. At most
    FAILURE_CHARS, its end kept."""
    lines = tail.splitlines()
    pointed = [
        line
        for line in lines
        if line.startswith((">", "E ")) or re.match(r"^[\w./-]+\.py:\d+: \w", line)
    ]
    text = "\n".join(pointed) if pointed else tail.strip()
    return text[-FAILURE_CHARS:]
