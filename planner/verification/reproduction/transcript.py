"""The issue's own example as its test: an interpreter session the issue shows (`>>>` lines)
and the value it says it expected become a pytest file, with no model call.

Users report a bug as they met it: a `>>>` session whose last output is wrong, then "Expected
`['a', 'c']`". That session is the most faithful test of the issue there is: it states the
calls, the set-up and the value, and nothing else. Asked for a test of such an issue instead,
the 1.5B model wrote a unittest class importing a mixin that did not exist, with fifty
invented assertions; the fix then had no test to prove it.

What is built, from the issue's text alone:
- the sentences that say what was expected ("expected", "should", "instead", ...) give the
  expected values: their backticked spans, minus code that is not a value (`f(x)`);
- each expected value is paired with one output of the session: an exception the session
  shows (equality: the call should have returned it; an exception is the bug above all), a
  shown value of the same type (equality; an int and a float are both numbers, and a `None`
  printed is replaced by any value), or shown text that is not a value and lacks it
  (the test asserts it appears in what the call prints or returns; text the call itself
  holds is its input, not its output). Pairs go best first, by how alike the shown
  output and the value are; a tie goes to the later output, where a session usually shows the
  bug. A sentence that lists several values ("I expected `2`, `3` and `4`") for as many
  calls that show a result pairs them in order instead (in_order());
- one test function per pair replays the session up to that call (earlier calls that raised
  in the session may raise again) and checks it: an equality of `print(x)` is one of `x` (or
  of str(x): print shows no quotes), of `port = get(...)` that raised one of its value.

script.py builds the same file from a script the issue shows, with its output.

Names the session uses without importing them (a session that starts after `from tabulate
import tabulate`) are imported from the module of the repository that defines them. A session
that imports anything but the repository's own modules, or names a builtin that runs, imports
or opens something, or a dunder, is not replayed (confined()): the model writes the test then.

The file then goes through the same path as a test the model writes: it runs on the code
before the change and only its checks that fail there are kept (phase.py).
"""

from __future__ import annotations

import ast
import builtins
import doctest
import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path

from planner.model.file_blocks import code_blocks
from planner.tools.files.paths import read_in_tree

EXPECTING = re.compile(
    r"\b(expect\w*|should|instead|supposed to|ought to|must (?:be|give|return)"
    r"|correct (?:result|output|answer))\b",
    re.IGNORECASE,
)
"""A sentence that says what the result should have been."""
SPAN = re.compile(r"`([^`\n]+)`")
SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+(?=[A-Z`(\"'])|\n\s*\n")
VALUE_TOKEN = re.compile(r"-?\d[\d_,.]*|'[^'\n]*'|\"[^\"\n]*\"|[\w.:-]+")
MAX_DEFINITION_FILES = 2_000
"""Python files searched for a name the session uses without importing it."""
MAX_DEFINITION_BYTES = 1_000_000
"""Larger files are not read for it."""
MAX_TEST_BYTES = 20_000
"""A longer session is no test a person reviews: the model writes one instead."""
SKIPPED_FOLDERS = {"tests", "test", "docs", "doc", "examples", "build", "dist", ".git"}
UNSAFE_NAMES = frozenset(
    {
        *("eval", "exec", "compile", "open", "input", "breakpoint", "exit", "quit"),
        *("getattr", "setattr", "delattr", "globals", "locals", "vars", "memoryview"),
    }
)
"""Builtins a replayed statement may not name: they run, import or open what the session
does not show, or reach objects' insides."""
PURE_MODULES = frozenset(
    {
        *("collections", "datetime", "decimal", "fractions", "itertools", "json", "math"),
        *("re", "statistics", "string", "textwrap"),
    }
)
"""Standard-library modules a session may import besides the repository's: they compute, and
open, run or reach nothing (not operator's attrgetter, nor typing, which evaluates strings)."""


@dataclass(frozen=True)
class Check:
    """One expected value paired with the session's call it belongs to."""

    example: int
    expected: str
    equality: bool


def transcript_test(issue_body: str, workspace: Path) -> str | None:
    """A pytest file built from the issue's `>>>` session and the values it says it expected;
    None when the issue shows no session or states no expected value that belongs to one."""
    groups = expected_groups(issue_body)
    expected = list(dict.fromkeys(value for group in groups for value in group))
    if not expected:
        return None
    for block in code_blocks(issue_body):
        if block.language not in ("", "python", "py", "python3", "pycon", "pytb"):
            continue
        examples = _examples("\n".join(block.lines))
        if not all(confined(example.source, workspace) for example in examples):
            continue  # the model writes the test, under its own rules
        checks = in_order(examples, groups) or pair(examples, expected)
        test = example_test_file(examples, checks, workspace) if checks else ""
        if test and len(test.encode()) <= MAX_TEST_BYTES:
            return test
    return None


def expected_values(text: str) -> list[str]:
    """The backticked spans of the sentences outside code blocks that say what was
    expected, in order, each once; code that is not a value (`f(x)`) is left out."""
    return list(dict.fromkeys(value for group in expected_groups(text) for value in group))


def expected_groups(text: str, reported: re.Pattern[str] | None = None) -> list[list[str]]:
    """The values of expected_values() by sentence, repeats kept: "I expected `2`, `3`, `3`
    and `4`" is one group of four. A span the words before it in its sentence match
    `reported` with is what the user got, not what they expected ("it prints `9` but should
    print `12`")."""
    groups: list[list[str]] = []
    for sentence in SENTENCE_END.split(prose(text)):
        if not EXPECTING.search(sentence):
            continue
        group = [
            span.group(1)
            for span in SPAN.finditer(sentence)
            if _is_value(span.group(1))
            and not (reported and reported.search(sentence[: span.start()]))
        ]
        if group:
            groups.append(group)
    return groups


def prose(text: str) -> str:
    """`text` without its fenced code blocks."""
    lines, inside = [], False
    for line in text.splitlines():
        if re.match(r"^\s*(```|~~~)", line):
            inside = not inside
            continue
        if not inside:
            lines.append(line)
    return "\n".join(lines)


def _is_value(span: str) -> bool:
    """A literal (`-5`, `['a', 'c']`) or text that is not Python code (`1,234,567`,
    `----:`); not a call, a name or an expression (`typedkey(3)`, `maxsplit=2`)."""
    if literal(span) is not None:
        return True
    try:
        ast.parse(span.strip(), mode="eval")
    except SyntaxError:
        return not re.search(r"\w\(|=", span)
    return False


def builtin_exception(name: str) -> bool:
    """`name` is a builtin exception class (`ValueError`, `TypeError`, ...)."""
    found = getattr(builtins, name, None)
    return isinstance(found, type) and issubclass(found, Exception)


def literal(text: str) -> tuple[object] | None:
    """(value,) when `text` is one Python literal, else None."""
    try:
        return (ast.literal_eval(text.strip()),)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _examples(text: str) -> list[doctest.Example]:
    try:
        return doctest.DocTestParser().get_examples(text)
    except ValueError:  # a prompt line that is not a well-formed session
        return []


def confined(source: str, workspace: Path) -> bool:
    """The statement reaches nothing but the repository's own modules and plain builtins: it
    imports only modules of the repository (or pure standard-library ones), and names no
    builtin that runs, imports or opens anything and no dunder name or attribute. The session
    is the issue's text, written by anyone: `>>> import os; os.system(...)` in it must not run
    in the job, nor go into the pull request."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            modules = [node.module or ""] if node.level == 0 else [""]
        else:
            modules = []
        if any(not _repository_module(name, workspace) for name in modules):
            return False
        if isinstance(node, ast.Name) and (node.id in UNSAFE_NAMES or node.id.startswith("__")):
            return False
        if isinstance(node, ast.Attribute) and node.attr.startswith("__"):
            return False
    return True


def _repository_module(name: str, workspace: Path) -> bool:
    """`name` is a pure standard-library module, or its top-level package is a module or
    package of the repository (at its root or under src/), not a link."""
    top = name.split(".")[0]
    if name in PURE_MODULES:
        return True
    if not top.isidentifier():
        return False
    for folder in (workspace, workspace / "src"):
        for candidate in (folder / f"{top}.py", folder / top / "__init__.py"):
            if candidate.is_file() and not any(
                path.is_symlink() for path in (candidate, candidate.parent)
            ):
                return True
    return False


def pair(examples: list[doctest.Example], expected: list[str]) -> list[Check]:
    """Each expected value with the session output it belongs to, best pairs first; an
    output and a value are used once each."""
    candidates = []
    for index, example in enumerate(examples):
        for value in expected:
            fit = _fit(example, value)
            if fit is not None:
                candidates.append((fit[0], index, value, fit[1]))
    candidates.sort(key=lambda item: (item[0], item[1]), reverse=True)
    checks: list[Check] = []
    for _score, index, value, equality in candidates:
        if any(c.example == index or c.expected == value for c in checks):
            continue
        checks.append(Check(example=index, expected=value, equality=equality))
    return sorted(checks, key=lambda check: check.example)


def in_order(examples: list[doctest.Example], groups: list[list[str]]) -> list[Check]:
    """The values of one sentence that expects several ("I expected `2`, `3` and `4`"), paired
    in order with the session's calls that show a result, when there are as many of them:
    the user lists what each call should have given, as pair()'s likeness cannot tell three
    numbers apart. A value the call already shows is right: it is no check, but keeps its
    place. Only values (literals) line up; empty when no sentence lines up so."""
    shown = [i for i, example in enumerate(examples) if _shows(example)]
    for group in groups:
        if len(group) < 2 or len(group) != len(shown):
            continue
        if any(literal(value) is None for value in group):
            continue  # a name or an input among them: the list is not of results
        checks = [_in_place(examples[i], i, value) for i, value in zip(shown, group, strict=True)]
        if all(check is not None for check in checks):
            return [check for check in checks if check and check.expected]
    return []


def _shows(example: doctest.Example) -> bool:
    return example.exc_msg is not None or bool(example.want.strip())


def _in_place(example: doctest.Example, index: int, value: str) -> Check | None:
    """The check of `value` for the call; one without a value when the call shows it already
    (right as it is); None when `value` cannot be the call's result."""
    fit = _fit(example, value)
    if fit is not None:
        return Check(example=index, expected=value, equality=fit[1])
    parsed = literal(value)
    if parsed is not None and example.exc_msg is None and literal(example.want) == parsed:
        return Check(example=index, expected="", equality=True)
    return None


def _fit(example: doctest.Example, value: str) -> tuple[float, bool] | None:
    """How well `value` fits as what `example` should have shown, and whether the check is
    an equality; None when it cannot be its expected result."""
    shown = example.want.strip()
    if example.exc_msg is not None:  # an exception a session shows is the bug, above all
        checkable = checked_expression(example.source) is not None
        return (3.0, True) if checkable and literal(value) is not None else None
    if not shown or not _expression(example.source):
        return None
    parsed, shown_parsed = literal(value), literal(shown)
    if shown_parsed is not None:  # a value: only another value of its type replaces it
        if parsed is None or checked_expression(example.source) is None:
            return None
        if shown_parsed[0] is not None and _kind(parsed[0]) != _kind(shown_parsed[0]):
            return None  # `None` printed is no value: any value replaces it
        return (1.0 + _likeness(value, shown), True) if parsed != shown_parsed else None
    if value in shown or value in example.source:
        return None  # shown already, or an input of the call: not what it should show
    return _likeness(value, shown), False


def _kind(value: object) -> str:
    """A value's type, where an int and a float are both a number (a mean shown `1` should
    be `1.5`); a bool is no number."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "number"
    return type(value).__name__


def _likeness(value: str, shown: str) -> float:
    """How close `value` comes to a token of the shown output (0 to 1)."""
    tokens = VALUE_TOKEN.findall(shown) or [shown]
    return max(SequenceMatcher(None, value, token).ratio() for token in tokens)


def _expression(source: str) -> bool:
    try:
        ast.parse(source.strip(), mode="eval")
    except SyntaxError:
        return False
    return True


def checked_expression(source: str) -> str | None:
    """What a check of the statement compares: the statement when it is an expression, the
    value of an assignment to one name (`port = get("port", 8000)` that raised), `x` of
    `print(x)`; None for any other statement, and a print of several values or with keywords
    (what it shows is no value)."""
    source = source.strip()
    if _expression(source):
        printing = re.match(r"print\s*\(", source) is not None
        return printed_argument(source) if printing else source
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    if len(tree.body) != 1:
        return None
    statement = tree.body[0]
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return None
    if not isinstance(statement.targets[0], ast.Name):
        return None
    return ast.get_source_segment(source, statement.value)


def printed_argument(source: str) -> str | None:
    """`x` of a statement `print(x)`: the one value the call shows, as str() writes it."""
    try:
        call = ast.parse(source.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
        return None
    if call.func.id != "print" or len(call.args) != 1 or call.keywords:
        return None
    if isinstance(call.args[0], ast.Starred):
        return None
    return ast.get_source_segment(source.strip(), call.args[0])


def example_test_file(examples: list[doctest.Example], checks: list[Check], workspace: Path) -> str:
    """The pytest file of `checks`: one test function each, replaying `examples` up to the
    checked one."""
    functions = [_test_function(examples, check, number) for number, check in enumerate(checks, 1)]
    body = "\n\n\n".join(functions)
    shows = any(not check.equality for check in checks)
    modules = [name for name in ("contextlib", "io") if f"{name}." in body or shows]
    header = ['"""The example the issue shows, with the result it says it expected."""', ""]
    header += [f"import {name}" for name in modules] + imports_for(body, workspace)
    if shows:
        header += ["", "", *SHOWN_HELPER]
    return "\n".join(header).rstrip() + "\n\n\n" + body + "\n"


SHOWN_HELPER = [
    "def _shown(call):",
    '    """What the interpreter shows for a call: what it prints, then its value."""',
    "    printed = io.StringIO()",
    "    with contextlib.redirect_stdout(printed):",
    "        value = call()",
    '    return printed.getvalue() + ("" if value is None else repr(value))',
]


def _test_function(examples: list[doctest.Example], check: Check, number: int) -> str:
    lines = [f"def test_issue_example_{number}():"]
    for example in examples[: check.example]:
        lines += _replayed(example)
    source = examples[check.example].source.strip()
    return "\n".join(lines + _check_lines(source, check))


def _check_lines(source: str, check: Check) -> list[str]:
    """The assertion of `check` on the statement `source`."""
    expected = check.expected.strip()
    if not check.equality:
        return [f"    assert {check.expected!r} in _shown(lambda: {source})"]
    printed = printed_argument(source)
    if printed is not None:  # print() returns None: the check is of what it shows
        return [  # str() is all print shows: `12` and `'12'` print alike
            f"    printed = ({printed})",
            f"    assert printed == {expected} or str(printed) == {expected!r}",
        ]
    return [f"    assert ({checked_expression(source)}) == {expected}"]


def _replayed(example: doctest.Example) -> list[str]:
    """An earlier statement of the session, as the test runs it: one that raised there may
    raise again."""
    lines = example.source.rstrip().splitlines()
    source = [f"    {line}" if line.strip() else "" for line in lines]
    if example.exc_msg is None:
        return source
    return ["    with contextlib.suppress(Exception):", *[f"    {line}" for line in source]]


def imports_for(body: str, workspace: Path) -> list[str]:
    """An import for each name the session uses but never binds, from the repository's
    module that defines it (or the repository's module of that name)."""
    return [line for name in unbound_names(body) if (line := import_of(name, workspace))]


def unbound_names(body: str) -> list[str]:
    """The names `body` uses that it never binds and no builtin provides, in order."""
    try:
        tree = ast.parse(body)
    except SyntaxError:
        return []
    bound = {"contextlib", "io", "_shown", *dir(builtins)}
    used: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                bound.add(node.id)
            elif node.id not in used:
                used.append(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return [name for name in used if name not in bound]


def import_of(name: str, workspace: Path) -> str | None:
    """`from module import name` for the shallowest module of the repository that defines
    `name` at its top level."""
    definition = re.compile(rf"^(?:def|class)\s+{re.escape(name)}\b|^{re.escape(name)}\s*=", re.M)
    for path in source_files(workspace):
        if (workspace / path).lstat().st_size > MAX_DEFINITION_BYTES:
            continue
        data = read_in_tree(workspace, path)
        if data is None or not definition.search(data.decode("utf-8", errors="replace")):
            continue
        module = _module_name(path)
        if module:
            return f"from {module} import {name}"
    return f"import {name}" if _repository_module(name, workspace) else None


def source_files(workspace: Path) -> list[Path]:
    """The repository's Python files outside tests and docs, shallowest first."""
    found: list[Path] = []
    for path in workspace.rglob("*.py"):
        relative = path.relative_to(workspace)
        skipped = SKIPPED_FOLDERS & set(relative.parts[:-1])
        if skipped or relative.name.startswith(("test_", "setup")):
            continue
        found.append(relative)
        if len(found) >= MAX_DEFINITION_FILES:
            break
    return sorted(found, key=lambda path: (len(path.parts), path.name != "__init__.py", str(path)))


def _module_name(path: Path) -> str:
    parts = list(path.with_suffix("").parts)
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    valid = all(part.isidentifier() for part in parts)
    return ".".join(parts) if parts and valid else ""
