"""Calls the issue's prose shows with their result, as checks added to the issue's test:
`` `word_count("a  b")` (two spaces) returns 3 ``.

Bug reports state the call and what it gives inline as often as in a `>>>` session. A test the
model writes for such an issue may leave that call out: for "`word_count("a  b")` returns 3 and
`word_count("")` returns 1; an empty or blank text has 0 words" the 1.5B model tested only
blank texts, a change for blank texts passed it and the repository's tests, and the pass ended
`completed` with `"a  b"` still 3. The call the issue shows is the one check the report cannot
do without.

What is read, sentence by sentence, outside code blocks:
- a backticked call of the repository's code with literal arguments only (`f("a  b", 2)`),
  then within a few words `returns`/`gives`/`raises` and a value: the result the
  issue reports. It becomes a *reported* check: the call no longer gives that value (or no
  longer raises that exception);
- "instead of (returning) Y", "rather than Y" or "should return Y" after it, or
  "`f(x)` should return Y": the result the issue expects. It becomes a *stated* check: the call
  gives Y.

Nothing is read from a sentence that calls a result right, correct, fine or as expected, or
where the words between call and verb say it holds always, never, still or not; nor a reported
value the issue also gives as expected. A reported check alone proves only that the symptom is
gone, not that the result is right: the issue's test keeps reported checks only beside a check
of its own (phase.py).
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass
from pathlib import Path

from planner.verification.reproduction.transcript import (
    PURE_MODULES,
    SENTENCE_END,
    SPAN,
    builtin_exception,
    confined,
    expected_values,
    import_of,
    literal,
    prose,
    unbound_names,
)

REPORTED_PREFIX = "test_issue_reported_"
"""Test functions that check only that a result the issue reports is gone."""
STATED_PREFIX = "test_issue_states_"
"""Test functions that check a result the issue states it expected."""
RESULT = re.compile(
    r"^(?P<gap>[^`]{0,30}?)\b(?:(?P<should>should|must|ought to)\s+(?:return|give|be)"
    r"|(?P<verb>returns|returned|gives|gave|raises|raised|yields))\s+"
    r"(?P<value>`[^`\n]+`|[^\s`,;]+)",
    re.IGNORECASE,
)
"""What follows a call: a few words, then the verb and the value."""
EXPECTED = re.compile(
    r"^[^`]{0,30}?\b(?:instead of(?: returning| giving)?|rather than|should (?:return|give|be)"
    r"|but (?:expected|should be))\s+(?P<value>`[^`\n]+`|[^\s`,;]+)",
    re.IGNORECASE,
)
"""What the issue expected instead, after the reported value."""
HOLDS_ANYWAY = re.compile(
    r"\b(always|never|still|not|no longer|n't|sometimes|also|correctly|already)\b", re.IGNORECASE
)
"""Words between a call and its verb that make the result no symptom (`always returns 8000`
is a default a feature keeps)."""
RIGHT = re.compile(
    r"\b(right|correct|correctly|fine|works?|as expected|as documented|as it should)\b",
    re.IGNORECASE,
)
"""A sentence that says a result is right is not read."""


@dataclass(frozen=True)
class StatedCall:
    """A call the issue shows, with the result it reports or the result it expects."""

    call: str
    value: str
    expected: bool
    raises: bool = False


def stated_calls(issue_body: str, workspace: Path) -> list[StatedCall]:
    """The calls of the issue's prose with their reported or expected result, in order,
    each once; only calls of the repository's own code with literal arguments."""
    expected_elsewhere = {_normal(value) for value in expected_values(issue_body)}
    found: list[StatedCall] = []
    for sentence in SENTENCE_END.split(prose(issue_body)):
        if RIGHT.search(sentence):
            continue
        for stated in _in_sentence(sentence, workspace):
            reported_as_expected = not stated.expected and (
                _normal(stated.value) in expected_elsewhere
            )
            if stated not in found and not reported_as_expected:
                found.append(stated)
    return found


def _in_sentence(sentence: str, workspace: Path) -> list[StatedCall]:
    found: list[StatedCall] = []
    for span in SPAN.finditer(sentence):
        call = span.group(1).strip()
        if not _plain_call(call, workspace):
            continue
        after = sentence[span.end() :]
        result = RESULT.match(after)
        if result is None or HOLDS_ANYWAY.search(result.group("gap")):
            continue
        value = _value(result.group("value"))
        if value is None:
            continue
        if result.group("should"):
            if literal(value) is not None:
                found.append(StatedCall(call, value, expected=True))
            continue
        raises = result.group("verb").lower().startswith("rais")
        if raises and not builtin_exception(value):
            continue
        if not raises and literal(value) is None and not result.group("value").startswith("`"):
            continue  # a bare word ("returns nothing") is no value
        found.append(StatedCall(call, value, expected=False, raises=raises))
        instead = EXPECTED.match(after[result.end() :])
        expected = _value(instead.group("value")) if instead else None
        if expected is not None and literal(expected) is not None:
            found.append(StatedCall(call, expected, expected=True))
    return found


def _value(text: str) -> str | None:
    """A value as written: a backticked span, or a bare token without the sentence's full
    stop."""
    if text.startswith("`"):
        return text.strip("`").strip() or None
    token = text.rstrip(".")
    return token or None


def _normal(value: str) -> str:
    parsed = literal(value)
    return repr(parsed[0]) if parsed is not None else value.strip()


def _plain_call(source: str, workspace: Path) -> bool:
    """One call of the repository's own code (a name it defines, or an attribute of its
    module) with literal arguments only and at least one, reaching nothing confined()
    forbids."""
    try:
        node = ast.parse(source, mode="eval").body
    except SyntaxError:
        return False
    if not isinstance(node, ast.Call) or not (node.args or node.keywords):
        return False
    root = node.func
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name) or hasattr(builtins, root.id) or root.id in PURE_MODULES:
        return False
    arguments = [*node.args, *(keyword.value for keyword in node.keywords)]
    if any(keyword.arg is None for keyword in node.keywords):
        return False
    if any(literal(ast.unparse(argument)) is None for argument in arguments):
        return False
    return confined(source, workspace) and import_of(root.id, workspace) is not None


def with_stated_calls(test: str | None, issue_body: str, workspace: Path) -> str | None:
    """`test` (None: there is none) with a check for each call the issue's prose states a
    result of (also one `test` makes: it may expect the wrong value). None when there is
    neither test nor check; only a stated (expected) check makes a test on its own."""
    calls = stated_calls(issue_body, workspace)
    if test is None and not any(stated.expected for stated in calls):
        return test
    taken = set(re.findall(r"^def (\w+)", test or "", re.MULTILINE))
    functions: list[str] = []
    imports: list[str] = []
    for stated in calls:
        function = _check(stated, taken)
        needed = _imports(function, test or "", workspace)
        if needed is None:
            continue  # a name nothing provides would fail before the change for the wrong reason
        functions.append(function)
        imports += [line for line in needed if line not in imports]
    if not functions:
        return test
    return _joined(test, imports, "\n\n\n".join(functions))


def _imports(function: str, test: str, workspace: Path) -> list[str] | None:
    """The imports `function` needs beyond the test's own; None when a name it uses is
    provided by neither."""
    names = unbound_names(f"{test}\n{function}")
    lines = [import_of(name, workspace) for name in names]
    if any(line is None for line in lines):
        return None
    return [line for line in lines if line]


def _check(stated: StatedCall, taken: set[str]) -> str:
    prefix = STATED_PREFIX if stated.expected else REPORTED_PREFIX
    number = 1
    while f"{prefix}{number}" in taken:
        number += 1
    name = f"{prefix}{number}"
    taken.add(name)
    if stated.expected:
        return f"def {name}():\n    assert ({stated.call}) == {stated.value}"
    if stated.raises:
        told = f"the issue reports that {stated.call} raises {stated.value}"
        return (
            f"def {name}():\n    try:\n        {stated.call}\n"
            f"    except {stated.value} as error:\n"
            f"        raise AssertionError({told!r}) from error"
        )
    parsed = literal(stated.value)
    if parsed is not None and (parsed[0] is None or isinstance(parsed[0], bool)):
        return f"def {name}():\n    assert ({stated.call}) is not {stated.value}"
    if parsed is not None:
        return f"def {name}():\n    assert ({stated.call}) != {stated.value}"
    return f"def {name}():\n    assert str({stated.call}) != {stated.value!r}"


def _joined(test: str | None, imports: list[str], body: str) -> str:
    """The checks after the test, their imports after its own."""
    if not test:
        header = '"""What the issue states about its calls."""\n\n' + "\n".join(imports)
        return header.rstrip() + "\n\n\n" + body + "\n"
    lines = test.rstrip().splitlines()
    at = _after_imports(test)
    lines[at:at] = imports
    return "\n".join(lines) + "\n\n\n" + body + "\n"


def _after_imports(test: str) -> int:
    """The line index after the module's last top-level import (0 when it has none)."""
    try:
        tree = ast.parse(test)
    except SyntaxError:
        return 0
    ends = [
        node.end_lineno or node.lineno
        for node in tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom))
    ]
    return max(ends, default=0)


def only_reported(test: str) -> bool:
    """Every test function left is a reported check: the symptom is gone, nothing more."""
    try:
        tree = ast.parse(test)
    except SyntaxError:
        return False
    names = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test")
    ]
    return bool(names) and all(name.startswith(REPORTED_PREFIX) for name in names)
