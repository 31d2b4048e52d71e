"""Mechanical candidate fixes: one small change to one line the issue's test ran.

Many bugs are one token off: `<` where `<=` was meant, `1` for `-1`, `and` for `or`, a
missing `not`. A small model shown the function often does not see it, and a person reading
the diff of such a fix sees at once whether it is right. Before the model is asked for candidates
(planner.verification.candidate_phase), the classic mutation operators of program repair
are applied, one at a time, to the lines of the candidates' definitions that the issue's test
ran (planner.verification.fixes.trace): a line the test never reaches cannot be what makes it fail,
and leaving such lines alone keeps the number of tries small and the fixes honest. Each change
is judged exactly as a model's candidate is: the issue's test, then the tests of the changed
file; the first whose tests all pass wins.

The operators: first, the builtin exception the issue's test fails with added to an `except`
clause of the spot that the test reached and that catches others (PyTER's repair of an uncaught
TypeError by handling it where its neighbours are handled). Then a comparison to its neighbours
(`<` and `<=`, `>` and `>=`, `==` and `!=`), `+` and `-`, `//` and `/`, `and` and `or`, `True`
and `False`, `is`/`is not`, `in`/`not in`, a `not` removed, an integer one more or one less, and
a number's sign. Then, per line, the two that change a call or an expression's order rather than
an operator (TBar's "mutate method invocation" and "swap operands" fix patterns): a call of a
builtin or method to its dual (`min`/`max`, `iter`/`reversed`, `startswith`/`endswith`, ...),
and the operands of a non-commutative binary operation swapped (`":" + dashes` → `dashes + ":"`,
`a - b` → `b - a`).
The file's formatting is kept: only the tokens or operands change.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Collection, Iterator
from dataclasses import dataclass

from planner.verification.fixes.candidates import Spot, joined
from planner.verification.reproduction.transcript import builtin_exception

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
DUALS: dict[str, str] = {
    **{a: b for a, b in (("min", "max"), ("any", "all"), ("iter", "reversed"))},
    **{a: b for a, b in (("startswith", "endswith"), ("lstrip", "rstrip"), ("ljust", "rjust"))},
    **{a: b for a, b in (("find", "rfind"), ("index", "rindex"), ("floor", "ceil"))},
    **{a: b for a, b in (("upper", "lower"), ("appendleft", "append"), ("popleft", "pop"))},
}
"""Calls (a builtin, or a method after `.`) and the call of opposite meaning, each way."""
DUALS |= {b: a for a, b in DUALS.items()}
ORDERED = (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.Add, ast.LShift, ast.RShift)
"""Binary operations whose operands' order can matter (`+` joins strings and lists)."""
RAISED = re.compile(r"^E\s+([A-Z]\w*):", re.MULTILINE)
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


@dataclass(frozen=True, slots=True)
class Edit:
    """One change of one line: its columns (characters) and the new text; `whole_line` when
    the change is told by the whole line before and after (the parts alone would not say it)."""

    row: int
    start: int
    end: int
    new: str
    whole_line: bool = False


def mutants(
    text: str, spot: Spot, lines: Collection[int], raised: Collection[str] = ()
) -> Iterator[Mutant]:
    """The file with an exception of `raised` (raised_in()) caught by a handler of the spot
    that the test reached, then with one token of the spot's lines in `lines` changed, line by
    line, then with a call changed to its dual or two operands swapped; only changes after
    which the file parses."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
        tree = ast.parse(text)
    except (tokenize.TokenError, SyntaxError, ValueError):
        return
    source = text.splitlines()
    seen: set[str] = set()
    edits = [
        *_caught_edits(tree, source, spot, lines, raised),
        *_token_edits(tokens, spot, lines),
        *_order_edits(tree, source, spot, lines),
    ]
    for edit in edits:
        line = source[edit.row - 1]
        changed = line[: edit.start] + edit.new + line[edit.end :]
        result = joined(text, [*source[: edit.row - 1], changed, *source[edit.row :]])
        if result is None or result == text or result in seen:
            continue
        seen.add(result)
        old = line[edit.start : edit.end].strip() or line[edit.start : edit.end]
        told = f"`{old}` → `{edit.new.strip() or '(removed)'}`"
        if edit.whole_line:
            told = f"`{line.strip()}` → `{changed.strip()}`"
        yield Mutant(edit.row, f"line {edit.row}: {told}", result)


def _token_edits(
    tokens: list[tokenize.TokenInfo], spot: Spot, lines: Collection[int]
) -> Iterator[Edit]:
    """Each one-token change."""
    for index, token in enumerate(tokens):
        row = token.start[0]
        if not (spot.start <= row <= spot.end) or row not in lines or token.end[0] != row:
            continue
        before = tokens[index - 1] if index else None
        after = tokens[index + 1] if index + 1 < len(tokens) else None
        for start, end, new in _changes(token, before, after):
            yield Edit(row, start, end, new)


def raised_in(output: str) -> list[str]:
    """The builtin exceptions a failing test run's output shows raised (pytest's `E   TypeError:
    ...` lines), AssertionError aside: an assertion failing is the test's own finding."""
    found = dict.fromkeys(match.group(1) for match in RAISED.finditer(output))
    return [name for name in found if builtin_exception(name) and name != "AssertionError"]


def _caught_edits(
    tree: ast.AST, source: list[str], spot: Spot, lines: Collection[int], raised: Collection[str]
) -> Iterator[Edit]:
    """Each `except` clause of the spot that the test reached (its line ran: an exception was
    matched against it) and that catches none of `raised`: with one of them added. `get_in`
    caught `(KeyError, IndexError)` and returned the default; a list indexed by a string
    raised TypeError through it, which the issue wanted handled the same way."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try):
            continue
        caught = {name for handler in node.handlers for name in _caught_names(handler)}
        for handler in node.handlers:
            kind, row = handler.type, handler.lineno
            if kind is None or not (spot.start <= row <= spot.end) or row not in lines:
                continue
            if kind.lineno != row or kind.end_lineno != row or kind.end_col_offset is None:
                continue
            line = source[row - 1].encode()
            start, end = _parenthesised(line, kind.col_offset, kind.end_col_offset)
            names = kind.elts if isinstance(kind, ast.Tuple) else [kind]
            written = [_operand(line[n.col_offset : n.end_col_offset or 0], n) for n in names]
            if any(text is None for text in written):
                continue
            for name in raised:
                if name not in caught:
                    new = "(" + ", ".join([*(t for t in written if t), name]) + ")"
                    yield Edit(row, *_columns(line, start, end), new, whole_line=True)


def _caught_names(handler: ast.ExceptHandler) -> list[str]:
    kind = handler.type
    names = kind.elts if isinstance(kind, ast.Tuple) else [kind] if kind is not None else []
    return [n.id if isinstance(n, ast.Name) else ast.unparse(n) for n in names]


def _order_edits(
    tree: ast.AST, source: list[str], spot: Spot, lines: Collection[int]
) -> Iterator[Edit]:
    """Each dual call and each operand swap on one line of the spot that the test ran."""
    for node in ast.walk(tree):
        row = getattr(node, "lineno", 0)
        if not (spot.start <= row <= spot.end) or row not in lines:
            continue
        if getattr(node, "end_lineno", None) != row:
            continue
        line = source[row - 1].encode()  # ast columns count UTF-8 bytes
        if isinstance(node, ast.Call):
            yield from _dual(node, row, line)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ORDERED):
            yield from _swapped(node, row, line)


def _dual(node: ast.Call, row: int, line: bytes) -> Iterator[Edit]:
    function = node.func
    if isinstance(function, ast.Name) and function.id in DUALS:
        start, end, name = function.col_offset, function.end_col_offset, function.id
    elif isinstance(function, ast.Attribute) and function.attr in DUALS:
        end = function.end_col_offset or 0
        start, name = end - len(function.attr.encode()), function.attr
    else:
        return
    if end is None or line[start:end].decode(errors="replace") != name:
        return
    yield Edit(row, *_columns(line, start, end), DUALS[name])


def _swapped(node: ast.BinOp, row: int, line: bytes) -> Iterator[Edit]:
    left, right = node.left, node.right
    if left.end_col_offset is None or right.end_col_offset is None:
        return
    if left.lineno != row or right.lineno != row:
        return
    start, left_end = _parenthesised(line, left.col_offset, left.end_col_offset)
    right_start, end = _parenthesised(line, right.col_offset, right.end_col_offset)
    left_text = _operand(line[start:left_end], left)
    right_text = _operand(line[right_start:end], right)
    between = line[left_end:right_start].decode(errors="replace")
    if left_text is None or right_text is None or left_text == right_text:
        return
    swapped = right_text + between + left_text
    yield Edit(row, *_columns(line, start, end), swapped, whole_line=True)


def _parenthesised(line: bytes, start: int, end: int) -> tuple[int, int]:
    """The span of an operand with the parentheses written around it."""
    while True:
        before = line[:start].rstrip()
        after = line[end:].lstrip()
        if not (before.endswith(b"(") and after.startswith(b")")):
            return start, end
        opening = len(before) - 1
        if opening > 0 and (
            line[opening - 1 : opening].isalnum() or line[opening - 1 : opening] in b"_)]"
        ):
            return start, end  # a call's parentheses, not the operand's
        start, end = opening, len(line) - len(after) + 1


def _operand(written: bytes, node: ast.expr) -> str | None:
    """An operand as it will stand in the other's place: in parentheses unless it is one
    name, value, call, attribute or subscript. None when the text is not the node (an
    f-string's inside)."""
    text = written.decode(errors="replace").strip()
    while text.startswith("(") and text.endswith(")") and _parses(text[1:-1]):
        text = text[1:-1].strip()
    try:
        same = ast.dump(ast.parse(text, mode="eval").body) == ast.dump(node)
    except SyntaxError:
        return None
    if not same:
        return None
    atoms = (ast.Name, ast.Constant, ast.Call, ast.Attribute, ast.Subscript)
    return text if isinstance(node, atoms) else f"({text})"


def _parses(text: str) -> bool:
    try:
        ast.parse(text, mode="eval")
    except SyntaxError:
        return False
    return True


def _columns(line: bytes, start: int, end: int) -> tuple[int, int]:
    """Byte columns of `line` as character columns."""
    return len(line[:start].decode(errors="replace")), len(line[:end].decode(errors="replace"))


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
