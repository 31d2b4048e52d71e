"""Tests of the repository that fail before the change because of the reported bug: the
issue's reproduction when they exercise what the issue names and fail the way it says.

A released package often has tests failing before any change: some because of the bug the
issue reports (they call the function it names and find the value it shows), others because of
the environment (a locale that is not installed, an optional dependency that is missing). The
first kind is a reproduction a pass should use, as it uses the issue's own test; the second
stays "failing before, not ours". Which is which is decided in two steps, both cheap and
bounded:

- exercising(): the failing test's own source (read with ast from the repository's test file)
  calls or reaches a function, method or class that the issue writes as code (in backticks, in
  a code block or a traceback, or an identifier in its title such as `Lifo.pop`) and that the
  repository itself defines;
- reproduces(): its output, run again alone, shows what the issue says: the exception the issue
  names, the wrong value the issue shows as the result, or the value the issue says it
  expected. An import of a module the repository does not have, or a locale error, is the
  environment, whatever else matches.

planner.verification.runs runs the tests and records the decision (`issue_reproduction`,
planner.verification.reproduction.records reads it back); nothing is written into the
repository for such a test.
"""

from __future__ import annotations

import ast
import builtins
import doctest
import keyword
import re
from dataclasses import dataclass
from pathlib import Path

from planner.model.file_blocks import code_blocks
from planner.text.issue import sanitize_untrusted
from planner.tools.files.paths import read_in_tree
from planner.verification.reproduction.stated_calls import stated_calls
from planner.verification.reproduction.transcript import (
    EXPECTING,
    SENTENCE_END,
    SPAN,
    expected_values,
    literal,
    prose,
    source_files,
)

MAX_CONSIDERED = 50
"""Failing tests of the baseline whose source is read (a broken import fails hundreds)."""
MAX_CHECKED = 5
"""Of those that exercise what the issue names, the most that are run again."""
SOURCE_LINES = 60
"""Lines of a reproducing test's source kept for prompts."""
SOURCE_BYTES = 6_000
TAIL_CHARS = 1_200
"""Characters of its failing output kept for prompts (the end, where pytest says why)."""
MAX_FILE_BYTES = 1_000_000
"""Larger test or source files are not read."""

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
CODE_LIKE = re.compile(
    r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+\b"  # Lifo.pop, stats.median
    r"|\b[A-Za-z_]\w*(?=\()"  # median(
    r"|\b[a-z]\w*_\w+\b"  # parse_duration
    r"|\b[A-Z][a-z0-9]+[A-Z]\w*\b"  # LruCache
)
"""Words of the title and prose that are code even outside backticks."""
EXCEPTION_NAME = re.compile(r"\b([A-Z]\w*(?:Error|Exception))\b")
RAISED = re.compile(
    r"^(?:E\s+|FAILED\s+\S+\s+-\s+|[\w./\\-]+\.py:\d+:\s+)"
    r"(?:[A-Za-z_][\w]*\.)*([A-Za-z_]\w*(?:Error|Exception))\b",
    re.MULTILINE,
)
"""The exception a failing pytest test raised: its `E` line, the `file.py:12: KeyError` line
under the traceback, or the short summary's `FAILED id - KeyError: ...`."""
NOT_RAISED = re.compile(r"DID NOT RAISE <class '(?:[\w.]+\.)?(\w+)'>")
COMPARED = re.compile(
    r"^E\s+(?:AssertionError: )?assert (?P<actual>.+?) == (?P<expected>.+?)\s*$"
    r"|^E\s+AssertionError: (?P<first>.+?) != (?P<second>.+?)\s*$",
    re.MULTILINE,
)
"""pytest's `E  assert 2 == 2.5` (what was found, then what the test expected) and
unittest's `AssertionError: 2 != 2.5`."""
MISSING_MODULE = re.compile(r"No module named '([\w.]+)'")
LOCALE_PROBLEM = re.compile(r"locale\.Error|unsupported locale setting", re.IGNORECASE)
MAX_VALUE_CHARS = 200


@dataclass(frozen=True)
class Exercising:
    """A test failing before the change that reaches what the issue names."""

    test: str
    """Its pytest node id (`tests/test_stats.py::test_median`)."""
    names: tuple[str, ...]
    """What it reaches that the issue names."""
    source: str
    """Its source, bounded (SOURCE_LINES)."""


def exercising(
    workspace: Path, failing: list[str], issue_text: str
) -> tuple[list[Exercising], list[str]]:
    """Of the baseline's failing pytest tests, those whose source reaches a function, method
    or class the issue names in code and the repository defines; with them, the others."""
    named = code_names(issue_text)
    parsed: dict[str, ast.Module | None] = {}
    nodes = {test: _test_node(workspace, test, parsed) for test in failing[:MAX_CONSIDERED]}
    reached = {test: _reached(node) & named for test, node in nodes.items() if node is not None}
    union = set().union(*reached.values())
    defined = set(_defined(workspace, union)) if union else set()  # one pass over the files
    found = [
        Exercising(test, tuple(sorted(names & defined)), _source(workspace, test, node))
        for test, names in reached.items()
        if names & defined and (node := nodes[test]) is not None
    ]
    used = {item.test for item in found}
    return found, [test for test in nodes if test not in used]


def code_names(issue_text: str) -> set[str]:
    """The identifiers the issue writes as code: in backticks, in code blocks (a traceback's
    frames too), and code-like words of its prose (`Lifo.pop`, `median(`, `parse_duration`);
    builtins and keywords aside."""
    parts = SPAN.findall(issue_text)
    parts += ["\n".join(block.lines) for block in code_blocks(issue_text)]
    parts += CODE_LIKE.findall(prose(issue_text))
    names = {name for part in parts for name in IDENTIFIER.findall(part)}
    return {
        name
        for name in names
        if len(name) > 2
        and not keyword.iskeyword(name)
        and not hasattr(builtins, name)
        and not name.startswith("test")
    }


def _test_node(
    workspace: Path, test: str, parsed: dict[str, ast.Module | None]
) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The test function a node id names (`file.py::Class::test[param]`) in the repository's
    file; None when it is not there (or the id is no plain path)."""
    path, _, rest = test.partition("::")
    if not rest or path.startswith(("-", "/")) or not path.endswith(".py"):
        return None
    if path not in parsed:
        parsed[path] = _parse(workspace, path)
    module = parsed[path]
    if module is None:
        return None
    names = [part.split("[", 1)[0] for part in rest.split("::")]
    body: list[ast.stmt] = module.body
    for index, name in enumerate(names):
        last = index == len(names) - 1
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef) if last else (ast.ClassDef,)
        node = next((n for n in body if isinstance(n, kinds) and n.name == name), None)
        if node is None:
            return None
        if last:
            assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            return node
        assert isinstance(node, ast.ClassDef)
        body = node.body
    return None


def _parse(workspace: Path, path: str) -> ast.Module | None:
    data = read_in_tree(workspace, path, MAX_FILE_BYTES + 1)
    if data is None or len(data) > MAX_FILE_BYTES:
        return None
    try:
        return ast.parse(data.decode("utf-8", errors="replace"))
    except (SyntaxError, ValueError, RecursionError):
        return None


def _reached(node: ast.AST) -> set[str]:
    """What the test calls or reads by name: `median(...)`, `Lifo()`, `stack.pop()`,
    `stack.size`."""
    found: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            found.add(child.id)
        elif isinstance(child, ast.Attribute):
            found.add(child.attr)
    return found


def _defined(workspace: Path, names: set[str]) -> list[str]:
    """Those of `names` the repository's own code defines (a function, method or class)."""
    pattern = "|".join(re.escape(name) for name in sorted(names))
    definition = re.compile(rf"^\s*(?:async\s+)?(?:def|class)\s+({pattern})\b", re.MULTILINE)
    found: set[str] = set()
    for path in source_files(workspace):
        data = read_in_tree(workspace, path, MAX_FILE_BYTES + 1)
        if data is None or len(data) > MAX_FILE_BYTES:
            continue
        found |= set(definition.findall(data.decode("utf-8", errors="replace")))
        if found == names:
            break
    return sorted(found)


def _source(workspace: Path, test: str, node: ast.AST) -> str:
    """The test function's lines, decorators included, at most SOURCE_LINES."""
    data = read_in_tree(workspace, test.partition("::")[0], MAX_FILE_BYTES) or b""
    lines = data.decode("utf-8", errors="replace").splitlines()
    decorators = getattr(node, "decorator_list", [])
    start = min([getattr(node, "lineno", 1), *(d.lineno for d in decorators)]) - 1
    end = getattr(node, "end_lineno", None) or start + 1
    shown = lines[start:end]
    text = "\n".join(shown[:SOURCE_LINES])
    if len(shown) > SOURCE_LINES:
        text += f"\n# … {len(shown) - SOURCE_LINES} more lines"
    return sanitize_untrusted(text, SOURCE_BYTES)


def reproduces(output: str, issue_text: str, workspace: Path) -> tuple[bool, str]:
    """Whether a failing test's output shows what the issue reports, and why (or why not):
    the environment first (a missing module the repository does not have, a locale), then
    the exception the issue names, the wrong result it shows, or the result it expects."""
    environment = _environment(output, workspace)
    if environment:
        return False, f"the environment: {environment}"
    named = set(EXCEPTION_NAME.findall(issue_text)) - {"AssertionError"}
    raised = [name for name in RAISED.findall(output) if name in named]
    if raised:
        return True, f"it raises {raised[0]}, which the issue names"
    missed = [name for name in NOT_RAISED.findall(output) if name in named]
    if missed:
        return True, f"it expects {missed[0]}, which the issue names, and none is raised"
    shown, expected = _shown_values(issue_text, workspace), _expected(issue_text, workspace)
    for actual, wanted in _comparisons(output):
        if _normal(actual) in shown:
            return True, f"it finds {_short(actual)}, the result the issue reports"
        if _normal(wanted) in expected:
            return True, f"it expects {_short(wanted)}, the result the issue expects"
    return False, "its failure does not show what the issue reports"


def _environment(output: str, workspace: Path) -> str:
    for module in MISSING_MODULE.findall(output):
        top = module.split(".")[0]
        if not _repository_module(workspace, top):
            return f"the module {top!r} is not installed"
    if LOCALE_PROBLEM.search(output):
        return "a locale is not available"
    return ""


def _repository_module(workspace: Path, name: str) -> bool:
    return any(
        (workspace / root / f"{name}.py").is_file() or (workspace / root / name).is_dir()
        for root in ("", "src")
    )


def _comparisons(output: str) -> list[tuple[str, str]]:
    """(found, expected) of each failed equality the output shows."""
    pairs = []
    for match in COMPARED.finditer(output):
        actual = match.group("actual") or match.group("first") or ""
        wanted = match.group("expected") or match.group("second") or ""
        if len(actual) <= MAX_VALUE_CHARS and len(wanted) <= MAX_VALUE_CHARS:
            pairs.append((actual.strip(), wanted.strip()))
    return pairs


def _shown_values(issue_text: str, workspace: Path) -> set[str]:
    """The results the issue shows: a `>>>` session's output, what its prose says a call
    returns, and the backticked values of its sentences that do not say what was expected."""
    values = [call.value for call in stated_calls(issue_text, workspace) if not call.expected]
    for block in code_blocks(issue_text):
        values += [example.want.strip() for example in _examples("\n".join(block.lines))]
    for sentence in SENTENCE_END.split(prose(issue_text)):
        if not EXPECTING.search(sentence):
            values += SPAN.findall(sentence)
    return {_normal(value) for value in values if value.strip()}


def _expected(issue_text: str, workspace: Path) -> set[str]:
    """The results the issue says it expected."""
    values = [call.value for call in stated_calls(issue_text, workspace) if call.expected]
    return {_normal(value) for value in [*values, *expected_values(issue_text)]}


def _examples(text: str) -> list[doctest.Example]:
    try:
        return [e for e in doctest.DocTestParser().get_examples(text) if e.want.strip()]
    except ValueError:
        return []


def _normal(value: str) -> str:
    parsed = literal(value)
    return repr(parsed[0]) if parsed is not None else value.strip()


def _short(value: str) -> str:
    text = " ".join(value.split())
    return f"`{text[:60]}`"


def bounded_tail(output: str) -> str:
    """The end of a failing output as prompts show it: at most TAIL_CHARS, sanitised."""
    return sanitize_untrusted(output[-TAIL_CHARS:], TAIL_CHARS * 4)
