"""Line diffs that stay fast on large files.

difflib.SequenceMatcher with autojunk off is exact, but its time grows with the product of the
two lengths where lines repeat (blank lines, `}`, `return None`): comparing a 3,000-line module
with the 4,000 lines a model wrote over it took more than half a minute, during which the pass
could do nothing else. Texts small enough are compared exactly, as before. Larger ones are
compared as git's patience diff does: the lines both share at their start and end are matched,
then the lines that occur once in each text anchor the match (the longest run of them in the
same order), and the gaps between anchors are compared the same way, exactly once small. A gap
with no such line left is compared with difflib's popular-line heuristic (`autojunk`).
"""

from __future__ import annotations

import bisect
import difflib
from collections import Counter
from collections.abc import Sequence

Opcode = tuple[str, int, int, int, int]
"""As difflib's get_opcodes: (tag, i1, i2, j1, j2), `tag` one of equal, replace, delete, insert."""

EXACT_CELLS = 1_000_000
"""Line pairs (old lines x new lines) compared exactly; about a second at the worst."""
MAX_DEPTH = 20
"""Gaps inside gaps anchored anew at most this deep; deeper, the heuristic compares them."""


def line_opcodes(old: Sequence[str], new: Sequence[str]) -> list[Opcode]:
    """What turns `old` into `new`, line by line, as difflib's opcodes."""
    return _joined(_large(old, new, 0, 0, 0))


def kept_lines(old: Sequence[str], new: Sequence[str]) -> int:
    """How many lines of `old` stand unchanged in `new`."""
    return sum(i2 - i1 for tag, i1, i2, _, _ in line_opcodes(old, new) if tag == "equal")


def _large(old: Sequence[str], new: Sequence[str], i0: int, j0: int, depth: int) -> list[Opcode]:
    """Opcodes of `old` against `new`, both starting at line i0 and j0 of the whole texts."""
    if len(old) * len(new) <= EXACT_CELLS:
        return _compared(old, new, i0, j0, autojunk=False)
    start = _shared_start(old, new)
    end = _shared_start(old[start:][::-1], new[start:][::-1])
    codes: list[Opcode] = [("equal", i0, i0 + start, j0, j0 + start)]
    old_middle, new_middle = old[start : len(old) - end], new[start : len(new) - end]
    codes += _anchored(old_middle, new_middle, i0 + start, j0 + start, depth)
    codes.append(("equal", i0 + len(old) - end, i0 + len(old), j0 + len(new) - end, j0 + len(new)))
    return codes


def _anchored(old: Sequence[str], new: Sequence[str], i0: int, j0: int, depth: int) -> list[Opcode]:
    anchors = _unique_in_order(old, new) if depth < MAX_DEPTH else []
    if not anchors:
        return _compared(old, new, i0, j0, autojunk=True)
    codes: list[Opcode] = []
    i_at = j_at = 0
    for i, j in [*anchors, (len(old), len(new))]:
        codes += _large(old[i_at:i], new[j_at:j], i0 + i_at, j0 + j_at, depth + 1)
        if i < len(old):
            codes.append(("equal", i0 + i, i0 + i + 1, j0 + j, j0 + j + 1))
        i_at, j_at = i + 1, j + 1
    return codes


def _compared(
    old: Sequence[str], new: Sequence[str], i0: int, j0: int, *, autojunk: bool
) -> list[Opcode]:
    """difflib's opcodes of `old` against `new`, moved to where they start in the whole texts."""
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=autojunk)
    return [(t, i1 + i0, i2 + i0, j1 + j0, j2 + j0) for t, i1, i2, j1, j2 in matcher.get_opcodes()]


def _unique_in_order(old: Sequence[str], new: Sequence[str]) -> list[tuple[int, int]]:
    """Lines that occur once in each text, as (old line, new line): the longest run of them
    that stands in the same order in both."""
    in_old, in_new = Counter(old), Counter(new)
    where_new = {line: j for j, line in enumerate(new) if in_new[line] == 1}
    pairs = [
        (i, where_new[line])
        for i, line in enumerate(old)
        if in_old[line] == 1 and line in where_new
    ]
    return _longest_increasing(pairs)


def _longest_increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest subsequence of `pairs` (in order of their first) increasing in the second:
    patience sorting."""
    tops: list[int] = []  # the smallest second ending a run of each length
    ends: list[int] = []  # the index in pairs of that run's last pair
    before: list[int] = []  # for each pair, the index of the pair before it in its run
    for index, (_, j) in enumerate(pairs):
        length = bisect.bisect_left(tops, j)
        if length == len(tops):
            tops.append(j)
            ends.append(index)
        else:
            tops[length] = j
            ends[length] = index
        before.append(ends[length - 1] if length else -1)
    run: list[tuple[int, int]] = []
    index = ends[-1] if ends else -1
    while index >= 0:
        run.append(pairs[index])
        index = before[index]
    return run[::-1]


def _shared_start(one: Sequence[str], other: Sequence[str]) -> int:
    count = 0
    for first, second in zip(one, other, strict=False):
        if first != second:
            break
        count += 1
    return count


def _joined(codes: list[Opcode]) -> list[Opcode]:
    """Adjacent equal runs as one, as difflib gives them."""
    joined: list[Opcode] = []
    for code in codes:
        if code[1] == code[2] and code[3] == code[4]:
            continue  # an empty middle
        if joined and code[0] == "equal" and joined[-1][0] == "equal":
            tag, i1, _, j1, _ = joined[-1]
            joined[-1] = (tag, i1, code[2], j1, code[4])
        else:
            joined.append(code)
    return joined
