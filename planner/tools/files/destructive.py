"""Changes that destroy code the model did not mean to touch, told to it before anything runs.

Seen from the 1.5B on real packages, each ending the pass at the approval gate because a diff
that long cannot be approved in bulk: `tabulate()` (650 lines) replaced by its signature and
`# ... (rest of the function remains unchanged)`; a whole `__init__.py` written as one line;
cachetools' 100-line `Cache` class written back from memory in 20; 91 lines of a test module
deleted to append one test. None of these is what the model meant, so the model hears what its
change would delete and how to send the lines it means instead. A deletion the issue asks for
names what it deletes: a change that empties only definitions the issue names is not refused.
Sending the refused change again is not taken as meaning it: at temperature 0 a small model
sends the same reply again whatever it meant.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from planner.config import TEST_PATHS
from planner.outcome.evidence import is_test_file
from planner.text.line_diff import line_opcodes
from planner.tools.files.document_edits import removal_refusal, removed_lines

MASS_DELETION_LINES = 20
"""A change deleting at least this many lines while adding at most half as many is a mass
deletion (a fix changes lines; it rarely deletes dozens and writes a few)."""
SHRUNK_DEFINITION_LINES = 20
"""A definition at least this long that a change keeps with at most a third of its lines was
rewritten from memory (the 1.5B wrote cachetools' 100-line `Cache` class back in 20 lines)."""
ELISION_DELETION_LINES = 5
"""An elision comment only matters where the change deletes at least this many lines."""

ELISION = re.compile(
    r"^\s*(#|//)\s*(\.\.\.|…)"  # `# ... (existing code)`
    r"|^\s*(#|//).*(\bunchanged\b|remains? the same|\bomitted\b|for brevity|as before\b"
    r"|goes here|existing code|rest of the\b|remaining code|other methods)",
    re.IGNORECASE,
)
"""A comment standing for code the reply leaves out: planner writes text as given, so the code it
stands for would be deleted."""
ASSERTING = re.compile(r"\bassert|^\s*def test", re.IGNORECASE)


@dataclass(frozen=True)
class LineChange:
    """The lines one change deletes (1-based numbers in the text before) and adds."""

    deleted: list[tuple[int, str]]
    added: list[str]


def line_change(before: str, after: str) -> LineChange:
    old, new = before.splitlines(), after.splitlines()
    deleted: list[tuple[int, str]] = []
    added: list[str] = []
    for tag, i1, i2, j1, j2 in line_opcodes(old, new):
        if tag == "equal":
            continue
        deleted.extend((number + 1, old[number]) for number in range(i1, i2))
        added.extend(new[j1:j2])
    return LineChange(deleted, added)


def destructive_change(
    path: str,
    before: str,
    after: str,
    test_paths: Sequence[str] = TEST_PATHS,
    whole: bool = False,
    base: str | None = None,
    issue_text: str = "",
) -> str | None:
    """Why writing `after` over `before` at `path` destroys code the model did not mean to
    touch, with what to send instead; None when it does not. `test_paths`: what a test file
    is (verification.test_paths); `whole`: the model wrote the file whole (write_file);
    `base`: the file as the repository has it (its checks are the repository's tests);
    `issue_text`: what the issue says (a definition it names may be deleted)."""
    send = SEND_FILE if whole else SEND_LINES
    change = line_change(before, after)
    lost = len(change.deleted)
    spans = _spans(path, before)
    emptied = _definitions_emptied(spans, {number for number, _ in change.deleted})
    where = _listed(emptied)
    asked = bool(emptied) and all(_named(name, issue_text) for name, _, _ in emptied)
    elided = [line.strip() for line in change.added if ELISION.search(line)]
    elided = [line for line in elided if line not in before]
    if elided and lost >= ELISION_DELETION_LINES:
        return (
            f"not written: the new text stands for code it leaves out with `{elided[0][:80]}`, "
            f"but planner writes text exactly as given, so this change would delete {lost} lines "
            f"of {path}{where}. {send}"
        )
    if lost >= MASS_DELETION_LINES and 2 * len(change.added) <= lost and not asked:
        return (
            f"not written: this change deletes {lost} lines of {path}{where} and adds "
            f"{len(change.added)}. {send}"
        )
    shrunk = [
        text
        for name, text in _shrunk_definitions(spans, _spans(path, after))
        if not _named(name, issue_text)
    ]
    if shrunk:
        return f"not written: this change replaces {'; '.join(shrunk[:3])}. {send}"
    removed = _removed_checks(path, change, base) if is_test_file(path, test_paths) else []
    if removed and _named(path.rsplit("/", 1)[-1].removesuffix(".py"), issue_text):
        removed = []  # the issue names the test file: its tests are the issue's to change
    if removed:
        return (
            f"not written: this change removes {len(removed)} line(s) of the repository's tests "
            f"from {path} (`{removed[0][:80]}`). Those tests check the fix: change the code they "
            f"test, not the tests."
        )
    document = removed_lines(path, before, after, issue_text)
    return removal_refusal(path, document, whole) if document else None


SEND_LINES = (
    "To fix the issue, send only the lines that change: edit_file with oldText the exact lines "
    "as they are now (a few lines, not the whole function) and newText those lines as they "
    "should read."
)
SEND_FILE = (
    "To fix the issue, write the file with all of its current lines and only the lines the fix "
    "needs changed, or change just those lines with edit_file (oldText the exact lines as they "
    "are now, newText as they should read)."
)


def _removed_checks(path: str, change: LineChange, base: str | None) -> list[str]:
    """Assertions and test definitions of the repository's tests (lines of `base`) the change
    deletes, when it deletes more such lines than it writes: changing an assertion (a rename)
    or a test the pass added is not removing a check."""
    if not path.endswith(".py") or base is None:
        return []
    deleted = [line.strip() for _, line in change.deleted if ASSERTING.search(line)]
    added = Counter(line.strip() for line in change.added if ASSERTING.search(line))
    if len(deleted) <= sum(added.values()):
        return []
    original = {line.strip() for line in base.splitlines()}
    return [line for line in deleted if line in original and not added[line]]


def _shrunk_definitions(old: Spans, new: Spans) -> list[tuple[str, str]]:
    """(name, "the N lines of `name` with M") for each long definition the change keeps,
    shortened to a third or less."""
    found = []
    for name, (first, last) in old.items():
        lines, kept = last - first + 1, new.get(name)
        kept_lines = kept[1] - kept[0] + 1 if kept else 0
        if lines >= SHRUNK_DEFINITION_LINES and kept and 3 * kept_lines <= lines:
            found.append((name, f"the {lines} lines of `{name}` with {kept_lines}"))
    return found


Spans = dict[str, tuple[int, int]]
"""Qualified name -> (first line, last line) of each function and class of a Python file."""


def _spans(path: str, text: str) -> Spans:
    """The definitions of a Python file that parses (none otherwise), methods included."""
    if not path.endswith(".py"):
        return {}
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    found: Spans = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found[prefix + node.name] = (node.lineno, node.end_lineno or node.lineno)
                if isinstance(node, ast.ClassDef):
                    visit(node.body, prefix + node.name + ".")

    visit(tree.body, "")
    return found


def _definitions_emptied(spans: Spans, deleted: set[int]) -> list[tuple[str, int, int]]:
    """(name, lines deleted, lines) of the outermost definitions the deletion empties at least
    half of."""
    hit: list[tuple[int, int, int, str]] = []
    for name, (first, last) in spans.items():
        gone = sum(1 for number in range(first, last + 1) if number in deleted)
        size = last - first + 1
        if size >= ELISION_DELETION_LINES and 2 * gone >= size:
            hit.append((first, last, gone, name))
    outermost = [h for h in hit if not any(o[0] <= h[0] and h[1] <= o[1] and o != h for o in hit)]
    return [(name, gone, last - first + 1) for first, last, gone, name in outermost]


def _listed(emptied: list[tuple[str, int, int]]) -> str:
    """` (`name`: N of its M lines; …)`, or ""."""
    shown = [f"`{name}`: {gone} of its {size} lines" for name, gone, size in emptied]
    if not shown:
        return ""
    more = f" and {len(shown) - 3} more" if len(shown) > 3 else ""
    return " (" + "; ".join(shown[:3]) + more + ")"


REMOVAL = re.compile(
    r"\b(remove[sd]?|removing|delete[sd]?|deleting|drop(s|ped)?|get rid of|simplif(y|ies)|"
    r"rewrite|replace)\b",
    re.IGNORECASE,
)
"""Words of an issue that asks for code to go (or to be written anew)."""


def _named(name: str, issue_text: str) -> bool:
    """The issue asks for code to go or be rewritten and writes this name (the last part of a
    qualified one) as a word: naming the function the bug is in is not asking to delete it."""
    last = name.rsplit(".", 1)[-1]
    if not last or not REMOVAL.search(issue_text):
        return False
    return re.search(rf"(?<![\w.]){re.escape(last)}(?!\w)", issue_text) is not None
