"""A large file shown as windows around the definitions a text points to.

Each definition (planner.grounding.localise) is shown with its line numbers and the names of
its callers: whole when it fits, else its first lines and the lines around the names the text
writes as code, gaps marked with the lines they leave out. A file none of whose definitions is
pointed to is shown as an outline: its definitions and their lines. Never a file's first lines.
"""

from __future__ import annotations

from collections.abc import Sequence

from planner.grounding.localise import Definition, Location, clues, definitions_of
from planner.grounding.tokens import estimate_tokens
from planner.tools.files.edits import numbered

MAX_WINDOWS = 4
"""Definitions shown per file at most."""
CONTEXT_LINES = 2
"""Lines kept around a line of a long definition that uses a name the texts give."""
FIRST_WINDOW_SHARE = 0.6
"""Of the room left, what one window may take while more definitions wait."""
MIN_WINDOW_TOKENS = 60


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
    if budget < MIN_WINDOW_TOKENS:
        return ""
    start, end = definition.start - 1, min(definition.end, len(lines))
    body = lines[start:end]
    if lines_within(body, budget) == len(body):
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


def lines_within(lines: list[str], budget: int) -> int:
    """How many of `lines`, shown line-numbered, fit in `budget` tokens."""
    used = 0
    for count, line in enumerate(lines):
        used += estimate_tokens(line) + 2  # the line number
        if used > budget:
            return count
    return len(lines)
