"""What the issue's test runs: the functions it calls and the values they return.

A bug the issue describes by its behaviour ("negative numbers lose their sign") is rarely in a
function the issue names: the issue names the entry point (`parse.parse`), the wrong value
comes from a helper several calls deeper (`int_convert.__call__`). The issue's test, failing
on the code before the change, knows the way there. It is run once more under a profiler that
records, while the test itself runs (not its collection or fixtures), every function of the
repository it calls and the simple values (numbers, strings, short lists of them) each
returns, in the order they were returned.

Two things come of it (planner.verification.candidate_phase): the definitions asked for are
those the test ran, ranked by the issue's words, and a function that returned the very value
the test's assertion found wrong (`assert 12 == -12`: 12) comes first, the earliest such
return first, which is the innermost function to produce it.

The profiler runs as the tests do (the verification's user and environment, the effect check).
Its output is the tests' output, untrusted: it is read as bounded data and only compared with
the repository's own definitions and with the assertion's text; nothing of it reaches a prompt.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field

Resolve = Callable[[str], "str | None"]
"""A path as the repository has it (None: no file of the repository)."""
MARK = "@@planner-ran@@"
INSTALLED = "site-packages:"
"""Starts the line of the profiler's findings."""
MAX_FUNCTIONS = 2_000
MAX_VALUES = 8
"""Distinct values kept per function."""
MAX_VALUE_CHARS = 200
MAX_LINES = 400
"""Lines recorded as run per function."""
MAX_CHARS = 100_000
"""Of findings printed at most: they must reach planner whole (a run's output is kept to
verification.max_output_bytes, cut in the middle)."""

# The profiler, run as `python -c PROFILER <pytest arguments>`. Kept short and free of
# dependencies: it runs in the repository's environment, whatever pytest is installed there.
PROFILER = f"""
import json, os, sys, sysconfig, threading
import _pytest, pluggy, pytest
ROOT = os.path.realpath(os.getcwd()) + os.sep
SKIP = tuple(
    [os.path.dirname(module.__file__) + os.sep for module in (_pytest, pluggy, pytest)]
    + [sysconfig.get_paths()[name] + os.sep for name in ("stdlib", "platstdlib")]
)
SIMPLE = (int, float, complex, str, bytes, bool, type(None))
seen = {{}}
returns = [0]
def shown(value):
    if isinstance(value, SIMPLE):
        return repr(value)
    if type(value) in (list, tuple) and len(value) <= 20 and all(
        isinstance(item, SIMPLE) for item in value
    ):
        return repr(value)
    return None
def profile(frame, event, arg):
    if event != "call" and event != "return":
        return
    try:
        code = frame.f_code
        if code.co_name[:1] == "<":
            return
        key = (code.co_filename, code.co_firstlineno)
        values = seen.get(key)
        if values is None:
            if len(seen) >= {MAX_FUNCTIONS * 4}:
                return
            values = seen[key] = []
        if event == "return" and len(values) < {MAX_VALUES}:
            text = shown(arg)
            returns[0] += 1
            if text is not None and len(text) <= {MAX_VALUE_CHARS}:
                if all(text != known for known, _ in values):
                    values.append((text, returns[0]))
    except Exception:
        pass
covered = {{}}
wanted = {{}}
def lines(frame, event, arg):
    if event == "line":
        code = frame.f_code
        found = covered.setdefault((code.co_filename, code.co_firstlineno), set())
        if len(found) < {MAX_LINES}:
            found.add(frame.f_lineno)
    return lines
def trace(frame, event, arg):
    name = frame.f_code.co_filename
    if name not in wanted:
        wanted[name] = os.path.isabs(name) and not name.startswith(SKIP)
    return lines if wanted[name] and frame.f_code.co_name[:1] != "<" else None
class Profiled:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        sys.setprofile(profile)
        threading.setprofile(profile)
        sys.settrace(trace)
        threading.settrace(trace)
        try:
            yield
        finally:
            sys.setprofile(None)
            threading.setprofile(None)
            sys.settrace(None)
            threading.settrace(None)
code = pytest.main(sys.argv[1:], plugins=[Profiled()])
found = []
size = 0
for (name, line), values in seen.items():
    if not os.path.isabs(name) or name.startswith(SKIP):
        continue
    real = os.path.realpath(name)
    if "site-packages" + os.sep in name:
        path = '{INSTALLED}' + name.rsplit("site-packages" + os.sep, 1)[1]
    elif real.startswith(ROOT):
        path = real[len(ROOT):]
    else:
        continue
    item = [path.replace(os.sep, "/"), line, values, sorted(covered.get((name, line), ()))]
    size += len(json.dumps(item)) + 2
    if size > {MAX_CHARS} or len(found) >= {MAX_FUNCTIONS}:
        break
    found.append(item)
print()
print({MARK!r} + json.dumps(found))
sys.exit(int(code))
"""


@dataclass(frozen=True, slots=True)
class Ran:
    """A function the issue's test ran."""

    path: str
    """Relative to the repository; for an installed copy, `site-packages:<its path there>`."""
    line: int
    """The line its code starts on (its first decorator's, as for a definition)."""
    returned: tuple[tuple[str, int], ...] = ()
    """The simple values it returned (their repr), each with when it was first returned."""
    lines: tuple[int, ...] = ()
    """The lines of it that ran."""


@dataclass(frozen=True, slots=True)
class Trace:
    ran: tuple[Ran, ...] = field(default_factory=tuple)

    def lines(self, resolve: Resolve) -> list[tuple[str, int]]:
        """(path, first line) of every function run in a repository file (an installed
        copy's functions matched to the file they came from)."""
        return [
            (path, item.line) for item in self.ran for path in [_in_repository(item.path, resolve)]
            if path is not None
        ]  # fmt: skip

    def covered(self, resolve: Resolve) -> dict[str, set[int]]:
        """The lines that ran, by repository file."""
        found: dict[str, set[int]] = {}
        for item in self.ran:
            path = _in_repository(item.path, resolve)
            if path is not None:
                found.setdefault(path, set()).update(item.lines)
        return found

    def returning(self, value: str, resolve: Resolve) -> list[tuple[str, int]]:
        """The repository's functions that returned `value`, the earliest return first."""
        found = []
        for item in self.ran:
            path = _in_repository(item.path, resolve)
            when = next((order for text, order in item.returned if text == value), None)
            if path is not None and when is not None:
                found.append((when, path, item.line))
        return [(path, line) for _, path, line in sorted(found)]


def traced_argv(argv: list[str], python: str) -> list[str] | None:
    """The pytest command `argv` run under the profiler (None: not a pytest command)."""
    for index in range(len(argv) - 1):
        if argv[index] == "-m" and argv[index + 1] == "pytest":
            return [*argv[:index], "-c", PROFILER, *argv[index + 2 :]]
    if argv and os.path.basename(argv[0]) in ("pytest", "py.test"):
        return [python, "-c", PROFILER, *argv[1:]]
    return None


def read_trace(output: str) -> Trace | None:
    """The profiler's findings in a run's output (None: it printed none, or they are not what
    it prints)."""
    line = next((ln for ln in reversed(output.splitlines()) if ln.startswith(MARK)), None)
    if line is None:
        return None
    try:
        found = json.loads(line[len(MARK) :])
    except ValueError:
        return None
    if not isinstance(found, list):
        return None
    ran = [item for item in (_ran(entry) for entry in found[:MAX_FUNCTIONS]) if item]
    return Trace(tuple(ran))


def _ran(entry: object) -> Ran | None:
    if not isinstance(entry, list) or len(entry) not in (3, 4):
        return None
    path, line, values = entry[:3]
    ran = entry[3] if len(entry) == 4 and isinstance(entry[3], list) else []
    if not isinstance(path, str) or not isinstance(line, int) or not isinstance(values, list):
        return None
    returned = tuple(
        (value[0], value[1])
        for value in values[:MAX_VALUES]
        if isinstance(value, list) and len(value) == 2
        if isinstance(value[0], str) and isinstance(value[1], int)
    )
    lines = tuple(n for n in ran[:MAX_LINES] if isinstance(n, int))
    return Ran(path[:1_000], line, returned, lines)


def _in_repository(path: str, resolve: Resolve) -> str | None:
    if not path.startswith(INSTALLED):
        return resolve(path)
    installed = path.removeprefix(INSTALLED)
    return resolve(installed) or resolve(f"src/{installed}")


ASSERTION = re.compile(r"^E\s+(?:AssertionError: )?assert (.+?) (?:==|!=) (.+)$", re.MULTILINE)


def wrong_value(failure: str) -> str | None:
    """The value a failing `assert actual == expected` found (pytest's `E  assert 12 == -12`:
    `12`), as its repr; None when the failure shows no such comparison."""
    match = ASSERTION.search(failure)
    if match is None:
        return None
    value = match.group(1).strip()
    return value if len(value) <= MAX_VALUE_CHARS and "..." not in value else None
