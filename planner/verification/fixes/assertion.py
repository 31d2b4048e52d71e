"""What a failing test's assertion compared, and what those values are made of.

pytest writes a failing `assert actual == expected` as `E  assert 12 == -12`; a longer string
it shortens on that line (`'Balance of t...e month: 13'`) and shows whole, or without a long
common start, in a line diff below it. Both values are read back here, as their repr, for the
trace of the issue's test (planner.verification.fixes.trace): which function returned the
wrong value, and which returned a part of it (`pieces`: a number formatted into the string,
an item of the list) that the expected value does not hold. The output is the test's,
untrusted: it is only parsed as literals (ast.literal_eval, never run) and compared.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

MAX_VALUE_CHARS = 200
"""A value's repr longer than this is neither recorded by the profiler nor compared whole."""


ASSERTION = re.compile(r"^(E\s+)(?:AssertionError: )?assert (.+?) (==|!=) (.+)$", re.MULTILINE)
SKIPPING = re.compile(r"^Skipping (\d+) identical (leading|trailing) characters")
MAX_DIFF_CHARS = 2_000
"""Of each string read back from the diff pytest shows under a shortened comparison."""


@dataclass(frozen=True, slots=True)
class Comparison:
    """What a failing `assert actual == expected` shows of its two values."""

    actual: str
    """The actual value's repr: whole, or of the part pytest's diff shows (`leading` and
    `trailing` characters left out, the same in both values)."""
    expected: str | None
    """The expected value's repr, the same part of it (None: not known, as for `!=`)."""
    leading: int = 0
    trailing: int = 0
    ends: tuple[str, str] = ("", "")
    """The start and the end of the actual value's repr as the comparison's line shows them."""

    def is_actual(self, text: str) -> bool:
        """`text` (a repr) is the actual value."""
        if not (self.leading or self.trailing):
            return text == self.actual
        value, shown = _string(text), _string(self.actual)
        if value is None or shown is None:
            return False
        middle = value[self.leading : len(value) - self.trailing]
        return (
            len(value) == self.leading + len(shown) + self.trailing
            and middle == shown
            and text.startswith(self.ends[0])
            and text.endswith(self.ends[1])
        )


def compared(failure: str) -> Comparison | None:
    """The values the first failing `assert actual == expected` of a pytest run's output
    compared (`E  assert 12 == -12`: `12` and `-12`); None when it shows no such comparison, or
    not the actual value. Two strings pytest shortens on that line (`'Balance of t...es, 1
    refund)'`) are read from the diff it shows under it."""
    match = ASSERTION.search(failure)
    if match is None:
        return None
    actual, operator, expected = (match.group(n).strip() for n in (2, 3, 4))
    if operator == "==" and _shortened_strings(actual, expected):
        return _diffed(failure[match.end() :], len(match.group(1)) + 2, actual)
    if len(actual) > MAX_VALUE_CHARS or "..." in actual:
        return None
    known = operator == "==" and len(expected) <= MAX_VALUE_CHARS and "..." not in expected
    return Comparison(actual, expected if known else None)


def _shortened_strings(*values: str) -> bool:
    return any("..." in v for v in values) and all(v[:1] in ("'", '"') for v in values)


def _diffed(after: str, indent: int, line_shows: str) -> Comparison | None:
    """The two strings of the line diff pytest shows under the comparison (difflib.ndiff's:
    `- ` the expected value's lines, `+ ` the actual one's, `  ` both's, `? ` hints), each
    line `indent` characters in, after the characters it says it skips; None when it shows
    none."""
    actual: list[str] = []
    expected: list[str] = []
    skipped = {"leading": 0, "trailing": 0}
    for line in after.split("\n")[1:]:
        if not line.startswith("E"):
            break
        code, text = line[indent : indent + 2], line[indent + 2 :]
        skipping = SKIPPING.match(line[indent:])
        if skipping is not None and not line[1:indent].strip():
            skipped[skipping.group(2)] = int(skipping.group(1))
        if line[1:indent].strip() or code not in ("- ", "+ ", "  "):
            continue
        if code != "- ":
            actual.append(text)
        if code != "+ ":
            expected.append(text)
    if actual == expected:  # no diff of lines
        return None
    head, _, tail = line_shows.partition("...")
    return Comparison(
        repr("\n".join(actual)[:MAX_DIFF_CHARS]),
        repr("\n".join(expected)[:MAX_DIFF_CHARS]),
        skipped["leading"],
        skipped["trailing"],
        (head, tail),
    )


def _string(text: str) -> str | None:
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, str) else None


def wrong_value(failure: str) -> str | None:
    """The value a failing `assert actual == expected` found (pytest's `E  assert 12 == -12`:
    `12`), as its repr; None when the failure shows no such comparison or not that value
    whole."""
    comparison = compared(failure)
    if comparison is None or comparison.leading or comparison.trailing:
        return None
    return comparison.actual if len(comparison.actual) <= MAX_VALUE_CHARS else None


TOKEN = re.compile(r"(?:(?<![\w.])-)?\d+(?:\.\d+)?|[^\W\d]\w*")
"""A number (its minus sign unless it follows a word: `2024-05` is two numbers) or a word."""
MAX_PIECES = 200


def pieces(text: str) -> frozenset[str]:
    """What a value (its repr, as the profiler and pytest show it) is made of: the items of a
    list or a dict, the words and numbers of a string (numbers as Python writes them: `07`
    is 7). None, a bool or an empty value has none: too common to say where a value came
    from."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        value = text
    if value is None or isinstance(value, bool):
        return frozenset()
    found: set[str] = set()
    _collect(value, found, 0)
    return frozenset(found)


def _collect(value: object, found: set[str], depth: int) -> None:
    if len(found) >= MAX_PIECES or depth > 3:
        return
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    if isinstance(value, dict):
        for key, item in list(value.items())[:MAX_PIECES]:
            _collect(key, found, depth + 1)
            _collect(item, found, depth + 1)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in list(value)[:MAX_PIECES]:
            _collect(item, found, depth + 1)
    else:
        text = value if isinstance(value, str) else repr(value)
        found.update(_canonical(token) for token in TOKEN.findall(text)[:MAX_PIECES])


def _canonical(token: str) -> str:
    if not token[-1:].isdigit():
        return token
    try:
        return repr(float(token)) if "." in token else str(int(token))
    except ValueError:
        return token
