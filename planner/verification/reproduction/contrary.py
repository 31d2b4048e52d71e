"""Checks of the model's issue test that expect what the issue reports as wrong are removed.

A small model reads the symptom as the specification: for an issue whose traceback ends in
`KeyError` where the user expected a default value, the 1.5B wrote `with
pytest.raises(KeyError): settings.get("port")`. That test fails on the right fix and passes on
the bug, so the right change is rejected and the pass spends its budget on wrong ones. A check
is contrary when it expects, for a call, the very result the issue reports:

- `pytest.raises(E)` (or `assertRaises(E)`) around a call the issue reports raising `E`: a
  call of the issue's prose ("`f(x)` raises `E`", stated_calls), a `>>>` session whose call
  shows `E`, or a function named in a traceback the issue shows that ends in `E`. Not when the
  issue says `E` is what should be raised ("should raise `E`");
- `assert f(x) == V` (or `is V`) where the issue reports that `f(x)` gives `V`: in its prose, or
  as the output of a `>>>` session paired with a value the issue expected instead
  (transcript.pair).

Such a check is removed before the test runs, with its test function when that has no other
check; the removal is recorded with the issue's test (phase.py). A contrary check that shares
a function with a check that fails on the bug would otherwise survive failing_only().
"""

from __future__ import annotations

import ast
import doctest
import re
from dataclasses import dataclass
from pathlib import Path

from planner.model.file_blocks import code_blocks
from planner.verification.reproduction.issue_test import TEST_NAME, without_statements
from planner.verification.reproduction.stated_calls import stated_calls
from planner.verification.reproduction.transcript import expected_values, literal, pair

RAISES = frozenset({"raises", "assertRaises", "assertRaisesRegex"})
"""Calls that expect an exception: `pytest.raises`, unittest's `assertRaises`."""
FRAME = re.compile(r'^\s*File "[^"\n]*", line \d+, in (\w+)')
EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*)(?::|\s*$)")
SESSION_LANGUAGES = ("", "python", "py", "python3", "pycon", "pytb")

CHECKS = (ast.Assert, ast.With, ast.AsyncWith)
"""Statements of a test function that check something."""
CallKey = tuple[str, str]
"""The called name (`f` of `module.f(...)`) and a dump of the call's arguments."""


@dataclass(frozen=True)
class Reported:
    """A result the issue reports for a call: an exception it raises or a value it gives.
    `arguments` None: any call of `function` (a traceback names functions, not calls)."""

    function: str
    arguments: str | None
    exception: str = ""
    value: tuple[object] | None = None


def without_contrary_checks(
    test: str | None, issue_body: str, workspace: Path
) -> tuple[str | None, list[str]]:
    """`test` without its checks that expect a result the issue reports as wrong (None when no
    test function is left), and the names of the test functions they were in. A function
    left with no other check goes as a whole: its set-up served the wrong check."""
    if test is None:
        return None, []
    reported = reported_results(issue_body, workspace)
    if not reported:
        return test, []
    try:
        tree = ast.parse(test)
    except SyntaxError:
        return test, []
    removed: list[ast.stmt] = []
    names: list[str] = []
    for node in tree.body:
        if not (isinstance(node, ast.FunctionDef) and TEST_NAME.match(node.name)):
            continue
        contrary = [s for s in node.body if any(_contrary(n, reported) for n in ast.walk(s))]
        if not contrary:
            continue
        names.append(node.name)
        checks = [s for s in node.body if isinstance(s, CHECKS) and s not in contrary]
        removed += contrary if checks else [node]
    if not removed:
        return test, []
    return without_statements(test, removed), names


def reported_results(issue_body: str, workspace: Path) -> list[Reported]:
    """What the issue reports its calls give: its prose's calls, its `>>>` sessions and its
    tracebacks; an exception the issue says should be raised is left out."""
    found = [*_from_prose(issue_body, workspace), *_from_sessions(issue_body)]
    found += _from_tracebacks(issue_body)
    return [result for result in found if not _expected_exception(result.exception, issue_body)]


def _from_prose(issue_body: str, workspace: Path) -> list[Reported]:
    found: list[Reported] = []
    for stated in stated_calls(issue_body, workspace):
        key = _key_of(stated.call)
        if stated.expected or key is None:
            continue
        if stated.raises:
            found.append(Reported(*key, exception=stated.value))
        elif (value := literal(stated.value)) is not None:
            found.append(Reported(*key, value=value))
    return found


def _from_sessions(issue_body: str) -> list[Reported]:
    """Each session call that shows an exception, and each output paired with a value the
    issue expected instead (the others may be right: a session shows context too)."""
    expected = expected_values(issue_body)
    found: list[Reported] = []
    for block in code_blocks(issue_body):
        if block.language not in SESSION_LANGUAGES:
            continue
        examples = _examples("\n".join(block.lines))
        paired = {check.example for check in pair(examples, expected) if check.equality}
        for index, example in enumerate(examples):
            key = _key_of(example.source)
            if key is None:
                continue
            if example.exc_msg is not None:
                found.append(Reported(*key, exception=_exception_name(example.exc_msg)))
            elif index in paired and (value := literal(example.want)) is not None:
                found.append(Reported(*key, value=value))
    return found


def _examples(text: str) -> list[doctest.Example]:
    try:
        return doctest.DocTestParser().get_examples(text)
    except ValueError:
        return []


def _from_tracebacks(issue_body: str) -> list[Reported]:
    """For each traceback the issue shows: every function its frames name, with the
    exception it ends in."""
    found: list[Reported] = []
    functions: list[str] | None = None
    for line in issue_body.splitlines():
        if line.strip().startswith("Traceback (most recent call last)"):
            functions = []
        elif functions is not None and (frame := FRAME.match(line)):
            functions.append(frame.group(1))
        elif functions is not None and not line[:1].isspace():
            end = EXCEPTION_LINE.match(line)  # the first line outdented again ends it
            if end is not None:
                name = _exception_name(end.group(1))
                found += [Reported(function, None, exception=name) for function in functions]
            functions = None
    return found


def _exception_name(text: str) -> str:
    """`KeyError` of `KeyError: 'port'` and of `mypkg.errors.KeyError`."""
    return text.split(":", 1)[0].strip().rsplit(".", 1)[-1]


def _expected_exception(name: str, issue_body: str) -> bool:
    """The issue says `name` is what should be raised."""
    if not name:
        return False
    should = (
        r"\b(?:should|must|ought to|expect\w*(?: it)? to|supposed to|is to)\s+"
        rf"(?:still\s+|only\s+)?raise\s+(?:an?\s+)?`?(?:[\w.]+\.)?{re.escape(name)}\b"
    )
    return re.search(should, issue_body, re.IGNORECASE) is not None


def _key_of(source: str) -> CallKey | None:
    try:
        node = ast.parse(source.strip(), mode="eval").body
    except SyntaxError:
        return None
    return _call_key(node) if isinstance(node, ast.Call) else None


def _call_key(call: ast.Call) -> CallKey:
    function = call.func
    name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
    arguments = [ast.dump(argument) for argument in call.args]
    arguments += [f"{keyword.arg}={ast.dump(keyword.value)}" for keyword in call.keywords]
    return name, ", ".join(arguments)


def _contrary(node: ast.AST, reported: list[Reported]) -> bool:
    if isinstance(node, (ast.With, ast.AsyncWith)):
        raised = {name for item in node.items for name in _expected_raise(item.context_expr)}
        calls = [inner for statement in node.body for inner in ast.walk(statement)]
        keys = [_call_key(call) for call in calls if isinstance(call, ast.Call)]
        return any(_raises_reported(key, raised, reported) for key in keys)
    if isinstance(node, ast.Assert):
        return _asserts_reported(node.test, reported)
    return False


def _expected_raise(expression: ast.expr) -> list[str]:
    """The exception names `pytest.raises(E)` / `self.assertRaises((E, F))` expects."""
    if not (isinstance(expression, ast.Call) and expression.args):
        return []
    if _call_key(expression)[0] not in RAISES:
        return []
    first = expression.args[0]
    names = first.elts if isinstance(first, ast.Tuple) else [first]
    return [ast.unparse(name).rsplit(".", 1)[-1] for name in names]


def _raises_reported(key: CallKey, raised: set[str], reported: list[Reported]) -> bool:
    return any(
        result.exception in raised
        and result.function == key[0]
        and result.arguments in (None, key[1])
        for result in reported
    )


def _asserts_reported(test: ast.expr, reported: list[Reported]) -> bool:
    """`assert f(x) == V` or `assert f(x) is V` (either side) for a value reported of `f(x)`."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    if not isinstance(test.ops[0], (ast.Eq, ast.Is)):
        return False
    sides = [test.left, test.comparators[0]]
    for call, other in (sides, sides[::-1]):
        value = literal(ast.unparse(other))
        if not isinstance(call, ast.Call) or value is None:
            continue
        key = _call_key(call)
        if any(_same(result, key, value) for result in reported):
            return True
    return False


def _same(result: Reported, key: CallKey, value: tuple[object]) -> bool:
    if result.value is None or (result.function, result.arguments) != key:
        return False
    return type(result.value[0]) is type(value[0]) and result.value == value
