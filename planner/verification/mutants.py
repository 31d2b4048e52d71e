"""Mechanical candidate fixes: one small change to one line the issue's test ran.

Many bugs are one token off: `<` where `<=` was meant, `1` for `-1`, `and` for `or`, a
missing `not`. A small model shown the function often does not see it, and a person reading
the diff of such a fix sees at once whether it is right. When no model candidate passes
(planner.verification.candidate_phase), the classic mutation operators of program repair
are applied, one at a time, to the lines of the candidates' definitions that the issue's test
ran (planner.verification.trace): a line the test never reaches cannot be what makes it fail,
and leaving such lines alone keeps the number of tries small and the fixes honest. Each change
is judged exactly as a model's candidate is: the issue's test, then the tests of the changed
file; the first whose tests all pass wins.

The operators: a comparison to its neighbours (`<` and `<=`, `>` and `>=`, `==` and `!=`), `+`
and `-`, `//` and `/`, `and` and `or`, `True` and `False`, `is`/`is not`, `in`/`not in`, a
`not` removed, an integer one more or one less, and a number's sign. The file's formatting is
kept: only the token changes.
"""

from __future__ import annotations

import io
import tokenize
from collections.abc import Collection, Iterator
from dataclasses import dataclass

from planner.verification.candidates import Spot, joined

SWAPS: dict[str, tuple[str, ...]] = {
    "<": ("<=", ">"),
    "<=": ("<", ">="),
    ">": (">=", "<"),
    ">=": (">", "<="),
    "==": ("!=",),
    "!=": ("==",),
    "+": ("-",),
    "-": ("+",),
    "//": ("/",),
    "/": ("//",),
    "+=": ("-=",),
    "-=": ("+=",),
    "and": ("or",),
    "or": ("and",),
    "True": ("False",),
    "False": ("True",),
}
"""Each token and what it is changed to."""
UNARY_BEFORE = frozenset(
    {"=", "(", "[", "{", ",", ":", "==", "!=", "<", "<=", ">", ">=", "+=", "-=", "return",
     "yield", "else", "if", "in", "and", "or", "not", "lambda"}
)  # fmt: skip
"""A `-` after one of these is a sign, and a number after one of these can take one."""


@dataclass(frozen=True, slots=True)
class Mutant:
    line: int
    change: str
    """`line 1923: \\`<\\` → \\`<=\\``."""
    text: str
    """The whole file with the change."""


def mutants(text: str, spot: Spot, lines: Collection[int]) -> Iterator[Mutant]:
    """The file with one token of the spot's lines in `lines` changed, line by line; only
    changes after which the file parses."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return
    source = text.splitlines()
    seen: set[str] = set()
    for index, token in enumerate(tokens):
        row = token.start[0]
        if not (spot.start <= row <= spot.end) or row not in lines or token.end[0] != row:
            continue
        before = tokens[index - 1] if index else None
        after = tokens[index + 1] if index + 1 < len(tokens) else None
        for start, end, new in _changes(token, before, after):
            line = source[row - 1]
            changed = line[:start] + new + line[end:]
            result = joined(text, [*source[: row - 1], changed, *source[row:]])
            if result is None or result == text or result in seen:
                continue
            seen.add(result)
            old = line[start:end].strip() or line[start:end]
            shown_new = new.strip() or "(removed)"
            yield Mutant(row, f"line {row}: `{old}` → `{shown_new}`", result)


def _changes(
    token: tokenize.TokenInfo,
    before: tokenize.TokenInfo | None,
    after: tokenize.TokenInfo | None,
) -> Iterator[tuple[int, int, str]]:
    """(start column, end column, new text) of each change of `token`."""
    start, end, word = token.start[1], token.end[1], token.string
    sign = word == "-" and _unary(before)
    if token.type in (tokenize.OP, tokenize.NAME) and word in SWAPS and not sign:
        for new in SWAPS[word]:
            yield start, end, new
    if token.type == tokenize.NAME:
        yield from _negations(token, before, after)
    if token.type == tokenize.OP and word == "-" and _unary(before) and _number(after):
        yield start, end, ""  # a sign taken away
    if _number(token):
        value = int(word)
        yield start, end, str(value + 1)
        yield start, end, str(value - 1)
        if value and _unary(before):
            yield start, end, f"-{word}"


def _negations(
    token: tokenize.TokenInfo,
    before: tokenize.TokenInfo | None,
    after: tokenize.TokenInfo | None,
) -> Iterator[tuple[int, int, str]]:
    start, end, word = token.start[1], token.end[1], token.string
    following = after.string if after is not None else ""
    preceding = before.string if before is not None else ""
    if word == "is" and following != "not":
        yield start, end, "is not"
    elif word == "in" and preceding != "not":
        yield start, end, "not in"
    elif word == "not" and preceding == "is":
        yield before.end[1] if before is not None else start, end, ""  # `is not` → `is`
    elif word == "not" and after is not None and after.start[0] == token.start[0]:
        yield start, after.start[1], ""  # `not x` → `x`, `not in` → `in`


def _unary(before: tokenize.TokenInfo | None) -> bool:
    return before is None or before.string in UNARY_BEFORE or before.type == tokenize.NEWLINE


def _number(token: tokenize.TokenInfo | None) -> bool:
    """A plain decimal integer (not `0x10`, `1_000`, `1.5` or `1j`)."""
    return token is not None and token.type == tokenize.NUMBER and token.string.isdigit()
