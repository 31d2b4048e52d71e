"""Changes that destroy code the model did not mean to touch, told to it before anything runs.

Seen from the 1.5B on real packages, each ending the pass at the approval gate because a diff
that long cannot be approved in bulk: `tabulate()` (650 lines) replaced by its signature and
`# ... (rest of the function remains unchanged)`; a whole `__init__.py` written as one line;
91 lines of a test module deleted to append one test; the assertions of an existing test
replaced by invented ones. None of these is what the model meant, so the model hears what its
change would do and how to send the lines it means instead. A change the model sends again,
unchanged, is taken as meant and goes on to the gate like any other.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from planner.engine.config import TEST_PATHS
from planner.engine.verification import is_test_file

MASS_DELETION_LINES = 20
"""A change deleting at least this many lines while adding at most half as many is a mass
deletion (a fix changes lines; it rarely deletes dozens and writes a few)."""
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
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    deleted: list[tuple[int, str]] = []
    added: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
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
) -> str | None:
    """Why writing `after` over `before` at `path` destroys code the model did not mean to
    touch, with what to send instead; None when it does not. `test_paths`: what a test file
    is (verification.test_paths); `whole`: the model wrote the file whole (write_file);
    `base`: the file as the repository has it (its checks are the repository's tests)."""
    send = SEND_FILE if whole else SEND_LINES
    change = line_change(before, after)
    lost = len(change.deleted)
    where = _definitions_hit(path, before, {number for number, _ in change.deleted})
    elided = [line.strip() for line in change.added if ELISION.search(line)]
    elided = [line for line in elided if line not in before]
    if elided and lost >= ELISION_DELETION_LINES:
        return (
            f"not written: the new text stands for code it leaves out with `{elided[0][:80]}`, "
            f"but planner writes text exactly as given, so this change would delete {lost} lines "
            f"of {path}{where}. {send}"
        )
    if lost >= MASS_DELETION_LINES and 2 * len(change.added) <= lost:
        return (
            f"not written: this change deletes {lost} lines of {path}{where} and adds "
            f"{len(change.added)}. {send} {SEND_AGAIN}"
        )
    removed = _removed_checks(path, change, base) if is_test_file(path, test_paths) else []
    if removed:
        return (
            f"not written: this change removes {len(removed)} line(s) of the repository's tests "
            f"from {path} (`{removed[0][:80]}`). Those tests check the fix: change the code they "
            f"test, not the tests. {SEND_AGAIN}"
        )
    return None


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
SEND_AGAIN = "If the issue asks for exactly this, send the same change again."


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


def _definitions_hit(path: str, before: str, deleted: set[int]) -> str:
    """` (most of `name`, N of its M lines)` for the definitions the deletion empties."""
    if not path.endswith(".py") or not deleted:
        return ""
    try:
        tree = ast.parse(before)
    except (SyntaxError, ValueError):
        return ""
    hit: list[tuple[int, int, int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first, last = node.lineno, node.end_lineno or node.lineno
            gone = sum(1 for number in range(first, last + 1) if number in deleted)
            size = last - first + 1
            if size >= ELISION_DELETION_LINES and 2 * gone >= size:
                hit.append((first, last, gone, node.name))
    outermost = [h for h in hit if not any(o[0] <= h[0] and h[1] <= o[1] and o != h for o in hit)]
    shown = [
        f"`{name}`: {gone} of its {last - first + 1} lines" for first, last, gone, name in outermost
    ]
    if not shown:
        return ""
    more = f" and {len(shown) - 3} more" if len(shown) > 3 else ""
    return " (" + "; ".join(shown[:3]) + more + ")"
