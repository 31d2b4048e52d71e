"""The issue's own test: before the change, the model turns the behaviour the issue states
into a pytest file, and planner runs it with the repository's tests (docs/verification.md).

A repository's tests rarely cover what an issue reports (that is why it was reported), so
without a test of the issue a wrong fix passes them: asked to parse `1h30m`, the 1.5B model
kept the one-unit parser and its tests passed. SWE-agent has the model write a reproduction
script; here it is a test file, so its failures read like any test's and go back to the model
through the same repair path.

The file is planner's, not the model's to edit: it is recorded in the history, placed in the
working tree only while the tests run, and written for good (so the pull request carries it
as a regression test) once it passes. An import it needs but lacks is added (with_imports()),
only checks whose values the issue states are kept (grounded()), one test per assertion
(one_check_each()), and of those only the ones that fail on the code before the change
(failing_only()); when none is left it is dropped.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel

from planner.model.file_blocks import code_blocks
from planner.text.issue import sanitize_untrusted
from planner.tools.files.paths import read_in_tree
from planner.tools.files.python_merge import complete_module
from planner.verification.reproduction.transcript import SPAN

EXAMPLE_LINES = 40
"""Lines of an existing test file shown as the example of the repository's test style."""
TEST_DIRECTORIES = ("tests", "test")
TEST_NAME = re.compile(r"^test", re.IGNORECASE)
MAX_TEST_BYTES = 20_000
SHORT_VALUE = 3
"""Texts up to this long, and numbers, must be stated as a word of their own."""


class IssueTest(BaseModel):
    """A test file written from the issue: where it goes and what it holds."""

    __test__ = False  # not a pytest test class, whatever its name

    path: str
    content: str


SLUG_WORDS = 6
"""A test file named from the issue's title keeps this many of its words."""


def issue_test_path(workspace: Path, number: int | str, title: str = "") -> str:
    """`tests/test_planner_issue_12.py` where the repository keeps its tests, else at the
    root; a name no file has yet. An issue without a number (a local issue file such as
    ISSUE.md) is named from a slug of its title: `tests/test_empty_input_crashes_parse.py`."""
    folder = next((name for name in TEST_DIRECTORIES if (workspace / name).is_dir()), "")
    stem, suffix = _test_stem(str(number), title), ""
    while (workspace / folder / f"{stem}{suffix}.py").exists():
        suffix = f"_{int(suffix[1:] or 1) + 1}"
    return f"{folder}/{stem}{suffix}.py" if folder else f"{stem}{suffix}.py"


def _test_stem(number: str, title: str) -> str:
    if number.isdigit():
        return f"test_planner_issue_{number}"
    words = re.findall(r"[a-z0-9]+", title.lower())[:SLUG_WORDS]
    return "test_" + "_".join(words or ["planner_issue", *re.findall(r"\w+", number)])


def example_test(workspace: Path, modules: list[str]) -> tuple[str, str]:
    """An existing test file to copy the imports and style from: one that imports a module the
    issue is about, else the shortest; ("", "") when there is none."""
    files = sorted(_test_files(workspace), key=lambda path: path.stat().st_size)
    about = [path for path in files if any(_imports(workspace, path, m) for m in modules)]
    if not about + files:
        return "", ""
    chosen = (about or files)[0]
    relative = chosen.relative_to(workspace).as_posix()
    lines = _read(workspace, chosen).splitlines()[:EXAMPLE_LINES]
    return relative, "\n".join(lines)


def _test_files(workspace: Path) -> list[Path]:
    roots = [workspace / name for name in TEST_DIRECTORIES if (workspace / name).is_dir()]
    found = [path for root in roots for path in root.rglob("test_*.py")]
    return found or list(workspace.glob("test_*.py"))


def _imports(workspace: Path, path: Path, module: str) -> bool:
    pattern = rf"^\s*(?:from|import)\s+{re.escape(module)}\b"
    return re.search(pattern, _read(workspace, path), re.MULTILINE) is not None


def _read(workspace: Path, path: Path) -> str:
    """A test file's text, read without following links ("" for a link or a special file)."""
    data = read_in_tree(workspace, path.relative_to(workspace))
    return "" if data is None else data.decode("utf-8", errors="replace")


def issue_test_from_reply(reply: str | None, stated: str) -> str | None:
    """The test file a reply holds: its first Python block, cut before a line that does not
    parse (a reply stopped at the output limit, a repeated assertion going on forever), with
    only what `stated` (the issue and the example test) says (grounded()), and at least one
    test function left; None otherwise."""
    for parsed in _parsed_blocks(reply):
        text = grounded(with_imports(_without_copies(parsed, stated), stated), stated)
        text = one_check_each(text) if text is not None else None
        if text is not None and len(text.encode()) <= MAX_TEST_BYTES:
            return sanitize_untrusted(text, MAX_TEST_BYTES) + "\n"
    return None


def _without_copies(text: str, stated: str) -> str:
    """`text` without its own definitions of what the issue or the example test names: the
    1.5B copied `is_leap` (wrong, as the repository has it) into its test of leap years, so the
    test checked its copy, failed on the code before the change and on the right fix alike.
    With the copy gone the name comes from the repository, as the example imports it."""
    copies = {
        line
        for node in ast.parse(text).body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and not TEST_NAME.match(node.name)
        and not any("fixture" in ast.unparse(d) for d in node.decorator_list)
        and re.search(rf"(?<![\w.]){re.escape(node.name)}\b", stated)
        for line in _line_span(node)
    }
    return _without(text, copies) if copies else text


def _parsed_blocks(reply: str | None) -> Iterator[str]:
    """The parsing start of each Python block of `reply`."""
    for block in code_blocks(reply):
        if block.language not in ("", "python", "py", "python3"):
            continue
        text = _parsed_prefix(block.lines)
        if text is not None:
            yield text


def with_imports(text: str, stated: str) -> str:
    """`text` with an import for each name it uses but never binds: the import line `stated`
    (the example test) has for it, else `import name` for pytest or a standard-library module
    (python_merge.complete_module, as for a file the model writes). The 1.5B used
    `pytest.raises` without importing pytest; the test failed with a NameError on the right fix
    too, and the model rewrote the fixed stack.py into a test program. Only a line that is one
    import statement is taken from `stated`, which holds the issue's text: `import os;
    os.system(...)` is not an import line."""
    imports = [line.strip() for line in stated.splitlines() if _one_import(line)]
    return complete_module("\n".join(["import pytest", *imports]), text, _no_user).text


def _one_import(line: str) -> bool:
    if not re.match(r"^(from\s+[\w.]+\s+)?import\s", line):
        return False
    try:
        body = ast.parse(line.strip()).body
    except SyntaxError:
        return False
    return len(body) == 1 and isinstance(body[0], (ast.Import, ast.ImportFrom))


def _no_user(name: str) -> None:
    """No other file uses a name of the test: nothing else is put back."""
    return None


def grounded(text: str, stated: str) -> str | None:
    """`text` with only the checks whose values `stated` holds: in each test function an
    assertion with a value the issue does not state is removed, and a function whose set-up
    holds such a value, or that is left without a check or without any stated value, is
    removed. None when no test function is left.

    A small model's own arithmetic is often wrong (`parse_duration("1h1m1s") == 371`) and it
    invents rules (a missing APP_PORT raising ValueError where the issue says 8000): a test
    holding them would fail on a correct fix and send the model away from it."""
    tests = _tests(text)
    arguments = _stated_arguments(stated)
    dropped: set[int] = set()
    for test in tests:
        dropped |= _ungrounded_lines(test, stated, arguments)
    if all(_line_span(test) <= dropped for test in tests):
        return None
    return _without(text, dropped)


def _ungrounded_lines(
    test: ast.FunctionDef, stated: str, arguments: dict[str, set[str]]
) -> set[int]:
    """The lines of `test` to remove: some of its assertions, or all of it."""
    dropped: set[int] = set()
    kept: list[ast.stmt] = []
    for statement in test.body:
        if isinstance(statement, ast.Assert) and (
            _raises_as_value(statement) or _argument_as_result(statement, arguments)
        ):
            dropped |= _line_span(statement)
        elif _is_docstring(statement) or _values(statement) <= _stated_values(statement, stated):
            kept.append(statement)
        elif isinstance(statement, ast.Assert):
            dropped |= _line_span(statement)
        else:
            return _line_span(test)  # its set-up is made up: so is what it checks
    checks = [s for s in kept if isinstance(s, (ast.Assert, ast.With))]
    if not checks or not any(_values(s) for s in checks):
        return _line_span(test)
    return dropped


def _stated_arguments(stated: str) -> dict[str, set[str]]:
    """For each function the issue writes a call of in backticks (`to_fahrenheit(100)`), its
    literal arguments (as `repr` texts)."""
    found: dict[str, set[str]] = {}
    for span in SPAN.finditer(stated):
        try:
            call = ast.parse(span.group(1).strip(), mode="eval").body
        except SyntaxError:
            continue
        if not isinstance(call, ast.Call):
            continue
        name = _called_name(call)
        for argument in call.args:
            if isinstance(argument, ast.Constant):
                found.setdefault(name, set()).add(repr(argument.value))
    return found


def _argument_as_result(check: ast.Assert, arguments: dict[str, set[str]]) -> bool:
    """`assert f(B) == A` where the issue calls `f(A)` and never `f(B)`: the argument the issue
    gives is expected back as the result. The 1.5B read "`to_fahrenheit(100)` returns 148.0;
    water boils at 212 °F" as `to_fahrenheit(212) == 100`; that test, kept, passed a fix that
    turned to_fahrenheit into the Celsius formula, and the pass ended `completed` wrong."""
    test = check.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and len(test.comparators) == 1):
        return False
    if not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    for call, expected in (sides, sides[::-1]):
        if not (isinstance(call, ast.Call) and isinstance(expected, ast.Constant)):
            continue
        given = arguments.get(_called_name(call), set())
        own = {repr(a.value) for a in call.args if isinstance(a, ast.Constant)}
        if repr(expected.value) in given and own and not own & given:
            return True
    return False


def _called_name(call: ast.Call) -> str:
    """`f` of `f(...)` and of `module.f(...)`; "" for anything else called."""
    function = call.func
    return function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")


def _raises_as_value(check: ast.Assert) -> bool:
    """An assertion comparing with `pytest.raises(...)`: the 1.5B wrote `assert mean([]) ==
    pytest.raises(ValueError)`, which fails on the code before the change and on the right fix
    alike (the call raises before the comparison). `raises` checks only as a `with`."""
    return any(
        isinstance(node, ast.Call) and _called_name(node) == "raises" for node in ast.walk(check)
    )


def one_check_each(text: str) -> str:
    """A test function that only asserts is split into one function per assertion (repeats
    left out), so each check is judged on its own against the code before the change
    (failing_only())."""
    lines = text.splitlines()
    out: list[str] = []
    done = 0
    for node in ast.parse(text).body:
        asserts = _only_asserts(node)
        if len(asserts) < 2:  # also: not a test, or one with set-up
            continue
        assert isinstance(node, ast.FunctionDef)
        first = min(_line_span(node))
        out += lines[done : first - 1]
        unique = {ast.dump(check): check for check in asserts}.values()  # a loop repeats one
        for number, check in enumerate(unique, 1):
            header = f"def {node.name}_{number}({ast.unparse(node.args)}):"
            out += [header, *lines[check.lineno - 1 : check.end_lineno], "", ""]
        done = node.end_lineno or node.lineno
    return "\n".join(out + lines[done:]).rstrip()


def _only_asserts(node: ast.stmt) -> list[ast.Assert]:
    if not (isinstance(node, ast.FunctionDef) and TEST_NAME.match(node.name)):
        return []
    if node.decorator_list:
        return []
    body = [statement for statement in node.body if not _is_docstring(statement)]
    asserts = [statement for statement in body if isinstance(statement, ast.Assert)]
    return asserts if len(asserts) == len(body) else []


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def failing_only(text: str, path: str, failing: list[str]) -> str | None:
    """`text` without the test functions that passed on the code before the change (they
    test nothing the issue reports, or hold its wrong value: `word_count("a  b") == 3`);
    None when none failed. A failure of the whole file (an import of what is still to be
    written) keeps all."""
    if path in failing:
        return text
    names = {name.split("::", 1)[1].split("[")[0] for name in failing if "::" in name}
    tests = _tests(text)
    passed = [test for test in tests if test.name not in names]
    if len(passed) == len(tests):
        return None
    return _without(text, {line for test in passed for line in _line_span(test)}) + "\n"


def without_statements(text: str, statements: list[ast.stmt]) -> str | None:
    """`text` without `statements` (parsed from it: test functions, or statements of their
    bodies); None when no test function is left."""
    dropped = {line for statement in statements for line in _line_span(statement)}
    left = _without(text, dropped)
    return left + "\n" if _tests(left) else None


def _tests(text: str) -> list[ast.FunctionDef]:
    """The module's top-level test functions."""
    return [
        node
        for node in ast.parse(text).body
        if isinstance(node, ast.FunctionDef) and TEST_NAME.match(node.name)
    ]


def _without(text: str, dropped: set[int]) -> str:
    """`text` without the lines numbered in `dropped` (from 1), and without the blank lines
    that followed them (a statement's end is never inside a string)."""
    lines = text.splitlines()
    kept: list[str] = []
    after_dropped = False
    for number, line in enumerate(lines, 1):
        if number in dropped or (after_dropped and not line.strip()):
            after_dropped = True
            continue
        after_dropped = False
        kept.append(line)
    return "\n".join(kept).rstrip()


def _line_span(node: ast.stmt) -> set[int]:
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    return set(range(first, (node.end_lineno or node.lineno) + 1))


def _values(node: ast.AST) -> set[str]:
    """The literal values a statement uses, as text (not docstrings, True/False/None)."""
    values = set()
    for inner in ast.walk(node):
        value = inner.value if isinstance(inner, ast.Constant) else None
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            values.add(str(value))
    return {value for value in values if value.strip()}


def _stated_values(node: ast.AST, stated: str) -> set[str]:
    return {value for value in _values(node) if _is_stated(value, stated)}


def _is_stated(value: str, stated: str) -> bool:
    """`value` is in `stated`: a number or a short word as a whole (3 is not stated by
    `1h30m`), a longer text anywhere."""
    if len(value) > SHORT_VALUE and not re.fullmatch(r"[\d.+-]+", value):
        return value in stated
    return re.search(rf"(?<![\w.]){re.escape(value)}(?![\w]|\.\d)", stated) is not None


def _parsed_prefix(lines: list[str]) -> str | None:
    """The longest start of `lines` that parses (whole lines), or None."""
    for end in range(len(lines), 0, -1):
        text = "\n".join(lines[:end]).rstrip()
        try:
            ast.parse(text)
        except SyntaxError:
            continue
        return text if text else None
    return None


@contextmanager
def placed(workspace: Path, test: IssueTest | None) -> Iterator[None]:
    """`test` in the working tree for the duration of a test run, then as it was before: a
    file something else put at its path (a model's command) is back after the run, but never
    runs in the test's place."""
    if test is None:
        yield
        return
    target = workspace / test.path
    before = target.read_bytes() if target.is_file() else None
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(test.content)
    try:
        yield
    finally:
        if before is None:
            target.unlink(missing_ok=True)
        else:
            target.write_bytes(before)


MISSING_MODULE = re.compile(r"No module named '([\w.]+)'")
MISSING_NAME = re.compile(r"cannot import name '(\w+)' from '([\w.]+)'")
COLLECTION_ERROR = re.compile(r"^E\s+(\w+(?:Error|Exception)\b.*)$", re.MULTILINE)


def collection_problem(tail: str, stated: str, workspace: Path) -> str:
    """Why a test file that failed as a whole (before any of its checks ran) is not a test of
    the issue ("" when it is): it imports a module neither the repository nor the issue has,
    or a name the issue does not state (a name to be written is stated), or it breaks in
    another way before any check (a NameError, a missing fixture)."""
    module = MISSING_MODULE.search(tail)
    if module is not None:
        top = module.group(1).split(".")[0]
        if _has_module(workspace, top) or _is_stated(top, stated):
            return ""
        return f"it imports `{module.group(1)}`, which neither the repository nor the issue has"
    name = MISSING_NAME.search(tail)
    if name is not None:
        if _is_stated(name.group(1), stated):
            return ""  # what the issue asks to add: failing to import it is the failure
        return f"it imports `{name.group(1)}` from `{name.group(2)}`, which the issue does not name"
    error = COLLECTION_ERROR.search(tail)
    if error is not None and not error.group(1).startswith(("AssertionError", "ImportError")):
        return f"it fails before any check: {error.group(1)[:200]}"
    return ""


def _has_module(workspace: Path, name: str) -> bool:
    for root in (workspace, workspace / "src", workspace / "lib"):
        if (root / f"{name}.py").is_file() or (root / name / "__init__.py").is_file():
            return True
        if (root / name).is_dir():
            return True  # a namespace package
    return False


def as_unittest(text: str, class_name: str) -> str | None:
    """The test file as a unittest.TestCase, for a repository whose tests unittest runs (its
    own command would not run plain test functions): each test function becomes a method,
    `pytest.raises(E)` becomes `self.assertRaises(E)`. None when a test takes a pytest fixture
    or uses pytest otherwise: then it stays as it is."""
    try:
        tests = _tests(text)
    except SyntaxError:
        return None
    if not tests or any(test.args.args or test.decorator_list for test in tests):
        return None
    lines = text.splitlines()
    converted = re.sub(
        r"\bpytest\.raises\(([^()]*)\)",
        lambda found: _assert_raises(found.group(1)),
        "\n".join(lines),
    )
    if re.search(r"\bpytest\.", converted):
        return None
    header, methods = _split_tests(ast.parse(converted), converted.splitlines(), tests)
    header = [line for line in header if not re.match(r"^import pytest\s*$", line)]
    if not any(re.match(r"^import unittest\b", line) for line in header):
        header.insert(_after_imports(header), "import unittest")
    body = [f"class {class_name}(unittest.TestCase):"]
    for method in methods:
        body += ["    " + line if line.strip() else "" for line in method] + [""]
    top = re.sub(r"\n{3,}", "\n\n", "\n".join(header).strip("\n"))
    return "\n".join([top, "", "", *body]).rstrip() + "\n"


def _assert_raises(arguments: str) -> str:
    parts = [part.strip() for part in arguments.split(",")]
    if len(parts) == 2 and parts[1].startswith("match="):
        return f"self.assertRaisesRegex({parts[0]}, {parts[1].removeprefix('match=')})"
    return f"self.assertRaises({arguments})"


def _split_tests(
    module: ast.Module, lines: list[str], tests: list[ast.FunctionDef]
) -> tuple[list[str], list[list[str]]]:
    """The module's lines outside its test functions, and each test as a method (`self`)."""
    names = {test.name for test in tests}
    header: list[str] = []
    methods: list[list[str]] = []
    done = 0
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name in names:
            header += lines[done : node.lineno - 1]
            method = lines[node.lineno - 1 : node.end_lineno]
            method[0] = re.sub(r"def (\w+)\(\)", r"def \1(self)", method[0], count=1)
            methods.append(method)
            done = node.end_lineno or node.lineno
    header += lines[done:]
    return header, methods


def _after_imports(header: list[str]) -> int:
    """The line after the module's docstring and its imports (a `from __future__` first)."""
    try:
        body = ast.parse("\n".join(header)).body
    except SyntaxError:
        return 0
    ends = [
        node.end_lineno or node.lineno
        for node in body
        if isinstance(node, (ast.Import, ast.ImportFrom)) or _is_docstring(node)
    ]
    return max(ends, default=0)
