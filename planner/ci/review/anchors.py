"""Where a review comment's lines are now, and the suggestion it carries (pure functions).

A comment was made on lines of one commit; the branch may have moved since (planner's own
commits, a person's push). For a task the lines are looked for in the current file by their
text: where the forge says they are when the text is still there, else the occurrence nearest
to where they were (the model reads the thread and the lines around). Lines that are nowhere
any more make the comment outdated: it is reported, never guessed at.

Suggestions are stricter (`suggestion_range`): one is applied only where the forge still
tracks the thread and every line it replaces reads exactly as the reviewer saw it in the
commit they reviewed. A thread the forge calls outdated, or lines that moved, are reported as
outdated, never applied elsewhere (GitHub refuses those too).

Suggestions: GitHub's ```suggestion block replaces the commented lines; GitLab's
```suggestion:-A+B replaces the commented line with A lines above and B below it, and its plain
```suggestion is `-0+0`, the commented line alone (on a comment on several lines too). The
block's lines are written as they are, byte for byte, with the line ending the file uses there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from planner.ci.forges.threads import ReviewThread

OPENING = re.compile(
    r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})[ \t]*suggestion"
    r"(?::-(?P<above>\d+)\+(?P<below>\d+))?[ \t]*$"
)
HUNK_HEADER = re.compile(r"^@@ -\d+(?:,\d+)? \+(?P<start>\d+)(?:,\d+)? @@")
OLD_SIDE = re.compile(r"^@@ -(?P<start>\d+)(?:,(?P<count>\d+))? \+")
CONTEXT_LINES = 6
"""Lines shown before and after the commented ones."""


@dataclass(frozen=True)
class Suggestion:
    lines: tuple[str, ...]
    """The replacement, one string per line, without line endings (empty: delete the lines)."""
    above: int | None = None
    below: int | None = None
    """GitLab's `-A+B`: lines above and below the commented line (None: the commented lines)."""


@dataclass(frozen=True)
class Anchor:
    """The commented lines in the current file, 1-based and inclusive."""

    start: int
    end: int
    moved: bool = False
    """Found by their text somewhere else than the forge said (the branch moved since)."""


# -- suggestions ---------------------------------------------------------------------------------


def suggestions_in(body: str) -> list[Suggestion]:
    """Every suggestion block of a comment (a web editor's CRLF line breaks are not part of
    the text; any other byte is)."""
    lines = [line.removesuffix("\r") for line in body.split("\n")]
    found: list[Suggestion] = []
    index = 0
    while index < len(lines):
        opening = OPENING.match(lines[index])
        if opening is None:
            index += 1
            continue
        block, index = _block(lines, index + 1, opening)
        above, below = opening["above"], opening["below"]
        offsets = (int(above), int(below)) if above is not None and below is not None else None
        found.append(Suggestion(tuple(block), *(offsets or (None, None))))
    return found


def _block(lines: list[str], start: int, opening: re.Match[str]) -> tuple[list[str], int]:
    """The block's lines (the opening's indentation taken off each) and the index after its
    closing fence; an unclosed block runs to the end of the comment."""
    fence, indent = opening["fence"], len(opening["indent"])
    closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
    block: list[str] = []
    for index in range(start, len(lines)):
        if closing.match(lines[index]):
            return block, index + 1
        line = lines[index]
        block.append(line[min(indent, len(line) - len(line.lstrip(" "))) :])
    return block, len(lines)


def suggested_range(
    anchor: Anchor, suggestion: Suggestion, gitlab: bool = False
) -> tuple[int, int]:
    """The lines the suggestion replaces (1-based, inclusive): GitHub's the commented lines;
    GitLab's the commented line (the last of a range) with `-A+B` lines around it."""
    if suggestion.above is None or suggestion.below is None:
        return (anchor.end, anchor.end) if gitlab else (anchor.start, anchor.end)
    return anchor.end - suggestion.above, anchor.end + suggestion.below


def suggestion_range(
    thread: ReviewThread,
    suggestion: Suggestion,
    current: list[str],
    original: list[str] | None,
    gitlab: bool = False,
) -> tuple[int, int] | None:
    """Where the suggestion applies in `current` (the file's lines now), or None when it must
    not be applied: the forge no longer tracks the thread, or any line it would replace differs
    from that line in `original` (the file in the commit the reviewer saw)."""
    said, seen = _forge_range(thread), thread.original_line
    if said is None or seen is None or original is None or thread.side != "new":
        return None
    reviewed = Anchor(thread.original_start_line or seen, seen)
    first_seen, last_seen = suggested_range(reviewed, suggestion, gitlab)
    first, last = suggested_range(Anchor(*said), suggestion, gitlab)
    if first_seen < 1 or last_seen > len(original) or first < 1 or last > len(current):
        return None
    if last - first != last_seen - first_seen:
        return None
    if current[first - 1 : last] != original[first_seen - 1 : last_seen]:
        return None
    return first, last


def apply_suggestion(content: bytes, first: int, last: int, suggestion: Suggestion) -> bytes | None:
    """`content` with lines first..last replaced by the suggestion; None when those lines
    are not all in the file."""
    lines = content.splitlines(keepends=True)
    if first < 1 or last > len(lines) or last < first:
        return None
    ending = _ending(lines[last - 1]) or _ending(lines[first - 1]) or _file_ending(lines)
    try:
        written = "".join(line + ending for line in suggestion.lines).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no file can hold it as written
        return None
    if not _ending(lines[last - 1]) and written:
        written = written[: -len(ending.encode())]  # the file ended without a line break there
    return b"".join(lines[: first - 1]) + written + b"".join(lines[last:])


def _ending(line: bytes) -> str:
    for ending in ("\r\n", "\n", "\r"):
        if line.endswith(ending.encode()):
            return ending
    return ""


def _file_ending(lines: list[bytes]) -> str:
    return next((e for line in lines if (e := _ending(line))), "\n")


# -- where the lines are now ---------------------------------------------------------------------


def commented_lines(thread: ReviewThread, original: list[str] | None) -> list[str] | None:
    """The text of the commented lines when the comment was made: from the commit it was made
    on, else from the end of its diff hunk; None when neither says."""
    last = thread.original_line
    if last is None or thread.side == "old":
        return None
    first = thread.original_start_line or last
    if original is not None and 1 <= first <= last <= len(original):
        return original[first - 1 : last]
    from_hunk = new_side(thread.diff_hunk)
    count = last - first + 1
    return from_hunk[-count:] if len(from_hunk) >= count else None


def new_side(hunk: str) -> list[str]:
    """The lines a diff hunk leaves in the new file (context and added lines)."""
    kept = []
    for line in hunk.split("\n"):
        if line.startswith("@@") or line.startswith("\\"):
            continue
        if line[:1] in (" ", "+"):
            kept.append(line[1:])
    return kept


def locate(thread: ReviewThread, current: list[str], before: list[str] | None) -> Anchor | None:
    """The commented lines in `current` (the file's lines now), or None when they cannot be
    found (outdated). `before`: the lines as the comment saw them (commented_lines)."""
    said = _forge_range(thread)
    if said is not None and _holds(current, said, before):
        return Anchor(*said)
    if not before:
        return None
    near = said[0] if said else (thread.original_start_line or thread.original_line or 1)
    starts = [
        index + 1
        for index in range(len(current) - len(before) + 1)
        if current[index : index + len(before)] == before
    ]
    if not starts:
        return None
    start = min(starts, key=lambda found: (abs(found - near), found))
    return Anchor(start, start + len(before) - 1, moved=(start, start + len(before) - 1) != said)


def _forge_range(thread: ReviewThread) -> tuple[int, int] | None:
    if thread.line is None or thread.outdated:
        return None
    return thread.start_line or thread.line, thread.line


def _holds(current: list[str], span: tuple[int, int], before: list[str] | None) -> bool:
    start, end = span
    if not 1 <= start <= end <= len(current):
        return False
    return before is None or current[start - 1 : end] == before


def context_around(current: list[str], anchor: Anchor, lines: int = CONTEXT_LINES) -> str:
    """The commented lines with their neighbours, numbered as in the file (`>` marks them)."""
    first, last = max(1, anchor.start - lines), min(len(current), anchor.end + lines)
    width = len(str(last))
    shown = []
    for number in range(first, last + 1):
        mark = ">" if anchor.start <= number <= anchor.end else " "
        shown.append(f"{mark}{number:>{width}}| {current[number - 1]}")
    return "\n".join(shown)


def hunk_ending_at(diff: str, line: int) -> str:
    """From a file's diff, the hunk holding new-file line `line`, cut after it (the way GitHub
    shows a comment's hunk); '' when no hunk holds it."""
    hunk: list[str] = []
    number = 0
    for text in diff.split("\n"):
        header = HUNK_HEADER.match(text)
        if header:
            hunk, number = [text], int(header["start"])
            continue
        if not hunk or text.startswith("\\"):
            continue
        hunk.append(text)
        if text[:1] in (" ", "+"):
            if number == line:
                return "\n".join(hunk)
            number += 1
    return ""


def touches(diff: str, start: int, end: int) -> bool:
    """Whether a diff without context (`git diff -U0`) changes lines start..end of the old
    file, or adds lines next to them (between the line above and the line below)."""
    for line in diff.split("\n"):
        found = OLD_SIDE.match(line)
        if found is None:
            continue
        first, count = int(found["start"]), int(found["count"] or 1)
        if count == 0:  # lines added after old line `first`
            if start - 1 <= first <= end:
                return True
        elif first <= end and first + count - 1 >= start:
            return True
    return False


def text_lines(content: bytes | None) -> list[str] | None:
    """A file's lines as text, without line endings (bytes that are not UTF-8 kept as
    surrogates, so nothing is lost when compared)."""
    if content is None:
        return None
    return [line.decode("utf-8", "surrogateescape") for line in content.splitlines()]
