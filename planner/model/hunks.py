"""A change between two versions of a file, as edit_file edits.

A code block holding new versions of some definitions of a large file the prompt showed in
parts is put into the file (planner.model.definitions); it is applied as edit_file edits, not
as a write of the whole file: the effect is the definitions replaced, and that is what the
tools and the approval gate should see (overwriting a file of 150 kB is a high-risk write that
waits for a person; replacing one function in it is an edit). Each edit's oldText is the lines
that change, widened by the lines around them until it matches one place of the file.
"""

from __future__ import annotations

from planner.text.line_diff import line_opcodes

MAX_CONTEXT = 20
"""Lines of context added on each side at most to make an oldText unique."""


def edits_between(before: str, after: str) -> list[dict[str, str]] | None:
    """edit_file edits turning `before` into `after`, in order; None when one cannot be made
    to match one place only."""
    old, new = before.splitlines(True), after.splitlines(True)
    edits: list[dict[str, str]] = []
    for tag, i1, i2, j1, j2 in line_opcodes(old, new):
        if tag == "equal":
            continue
        edit = _unique_edit(old, new, (i1, i2), (j1, j2))
        if edit is None:
            return None
        edits.append(edit)
    return _merged(edits, before)


def _unique_edit(
    old: list[str], new: list[str], span: tuple[int, int], target: tuple[int, int]
) -> dict[str, str] | None:
    (i1, i2), (j1, j2) = span, target
    text = "".join(old)
    for context in range(MAX_CONTEXT + 1):
        before = max(0, i1 - context)
        after = min(len(old), i2 + context)
        old_text = "".join(old[before:after])
        if old_text.strip() and text.count(old_text) == 1:
            lead = old[before:i1]
            tail = old[i2:after]
            return {"oldText": old_text, "newText": "".join([*lead, *new[j1:j2], *tail])}
    return None


def _merged(edits: list[dict[str, str]], before: str) -> list[dict[str, str]] | None:
    """Edits whose widened oldTexts overlap cannot apply one after another: such a change is
    one edit of the whole span instead (None when even that is ambiguous)."""
    spans = []
    for edit in edits:
        start = before.find(edit["oldText"])
        spans.append((start, start + len(edit["oldText"])))
    if all(spans[n][1] <= spans[n + 1][0] for n in range(len(spans) - 1)):
        return edits
    return None
