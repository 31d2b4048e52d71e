"""What the issue's test runs: the functions it calls and the values they return.

A bug the issue describes by its behaviour ("negative numbers lose their sign") is rarely in a
function the issue names: the issue names the entry point (`parse.parse`), the wrong value
comes from a helper several calls deeper (`int_convert.__call__`). The issue's test, failing
on the code before the change, knows the way there. It is run once more under a profiler that
records, while the test itself runs (not its collection or fixtures), every function of the
repository it calls, which function of the repository called it, the simple values
(numbers, strings, short lists of them) each returns, in the order they were returned, and
the functions of the traceback when the test fails with an exception.

The definitions asked for (planner.verification.candidate_phase) are those the test ran, the
ones its failure points to first (Trace.ranked): a function whose returned value is the part
of the wrong value the assertion found that the expected value does not hold (`'Total: 12'`
for `'Total: -12'`: the function under the formatter that returned 12), deepest first; then
one that returned the very value the assertion found wrong (`assert 12 == -12`: 12), the
earliest such return first, which is the innermost function to produce it; then the
traceback's functions, innermost first. The others follow, ranked by the issue's words.

The profiler runs as the tests do (the verification's user and environment, the effect check).
Its output is the tests' output, untrusted: it is read as bounded data and only compared with
the repository's own definitions and with the assertion's text; nothing of it reaches a prompt.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field

from planner.verification.fixes.assertion import MAX_VALUE_CHARS, Comparison, compared, pieces

Resolve = Callable[[str], "str | None"]
"""A path as the repository has it (None: no file of the repository)."""
MARK = "@@planner-ran@@"
INSTALLED = "site-packages:"
"""Starts the line of the profiler's findings."""
MAX_FUNCTIONS = 2_000
MAX_VALUES = 8
"""Distinct values kept per function."""
MAX_LINES = 400
"""Lines recorded as run per function."""
MAX_CALLERS = 8
"""Distinct callers kept per function."""
MAX_HOPS = 8
"""Frames of other code (the standard library, pytest) looked through for a function's caller
of the repository: a function registered with `functools.singledispatch` is called by its
wrapper there."""
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
callers = {{}}
raised = {{}}
returns = [0]
wanted = {{}}
def inside(frame):
    code = frame.f_code
    name = code.co_filename
    if name not in wanted:
        wanted[name] = os.path.isabs(name) and not name.startswith(SKIP)
    return wanted[name] and code.co_name[:1] != "<"
def caller(frame):
    frame = frame.f_back
    for _ in range({MAX_HOPS}):
        if frame is None or inside(frame):
            return frame
        frame = frame.f_back
    return None
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
        if event == "call" and inside(frame):
            found = callers.setdefault(key, set())
            above = caller(frame) if len(found) < {MAX_CALLERS} else None
            if above is not None:
                found.add((above.f_code.co_filename, above.f_code.co_firstlineno))
        if event == "return" and len(values) < {MAX_VALUES}:
            text = shown(arg)
            returns[0] += 1
            if text is not None and len(text) <= {MAX_VALUE_CHARS}:
                if all(text != known for known, _ in values):
                    values.append((text, returns[0]))
    except Exception:
        pass
covered = {{}}
def lines(frame, event, arg):
    if event == "line":
        code = frame.f_code
        found = covered.setdefault((code.co_filename, code.co_firstlineno), set())
        if len(found) < {MAX_LINES}:
            found.add(frame.f_lineno)
    return lines
def trace(frame, event, arg):
    return lines if inside(frame) else None
def frames(error):
    # the traceback's functions, innermost first; an exception it was raised from after them
    for _ in range(3):
        if error is None:
            return
        tb, found = error.__traceback__, []
        while tb is not None:
            if inside(tb.tb_frame):
                found.append((tb.tb_frame.f_code.co_filename, tb.tb_frame.f_code.co_firstlineno))
            tb = tb.tb_next
        yield from reversed(found)
        error = error.__cause__ or error.__context__
def failed(outcome):
    try:
        error = outcome.excinfo[1] if outcome.excinfo else None
        for key in frames(error):
            raised.setdefault(key, len(raised) + 1)
    except Exception:
        pass
class Profiled:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        sys.setprofile(profile)
        threading.setprofile(profile)
        sys.settrace(trace)
        threading.settrace(trace)
        try:
            outcome = yield
        finally:
            sys.setprofile(None)
            threading.setprofile(None)
            sys.settrace(None)
            threading.settrace(None)
        failed(outcome)
code = pytest.main(sys.argv[1:], plugins=[Profiled()])
def place(name):
    if not os.path.isabs(name) or name.startswith(SKIP):
        return None
    real = os.path.realpath(name)
    if "site-packages" + os.sep in name:
        path = '{INSTALLED}' + name.rsplit("site-packages" + os.sep, 1)[1]
    elif real.startswith(ROOT):
        path = real[len(ROOT):]
    else:
        return None
    return path.replace(os.sep, "/")
found = []
size = 0
for (name, line), values in seen.items():
    path = place(name)
    if path is None:
        continue
    above = sorted(
        [where, first] for where, first in
        ((place(other), first) for other, first in callers.get((name, line), ()))
        if where is not None
    )
    item = [
        path, line, values, sorted(covered.get((name, line), ())), above,
        raised.get((name, line), 0),
    ]
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
    callers: tuple[tuple[str, int], ...] = ()
    """(path, first line) of the functions that called it (paths as `path` has them)."""
    raised: int = 0
    """Its place in the traceback of the test's failure, 1 for the innermost (0: none)."""

    @property
    def key(self) -> tuple[str, int]:
        return (self.path, self.line)


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
        return [
            (path, item.line) for item in self._returning(lambda text: text == value)
            for path in [_in_repository(item.path, resolve)] if path is not None
        ]  # fmt: skip

    def ranked(self, failure: str, resolve: Resolve) -> list[Ranked]:
        """The repository's functions the test ran that its failure (the failing run's output)
        points to, the likeliest place of the bug first:

        1. those whose returned value is a part of the wrong value its assertion found (a
           number formatted into the string, an item of the list) that the expected value
           does not hold, called under a function that returned the wrong value, deepest first;
        2. those that returned the wrong value itself, the earliest return first (innermost);
        3. those whose returned value is a part of the wrong value, where no expected value
           is known, deepest first;
        4. the functions of the traceback when the test failed with an exception, innermost
           first.

        A function that passes the wrong value on or formats it is where the test sees it,
        seldom where it is computed: the number in `'Total: 12'` comes from deeper down."""
        comparison = compared(failure)
        exact = self._returning(comparison.is_actual) if comparison is not None else []
        flowing, unsure = self._flowing(comparison, exact) if comparison is not None else ([], [])
        raised = sorted((item for item in self.ran if item.raised), key=lambda i: i.raised)
        tiers = [(FLOWS, flowing), (RETURNED_WRONG, exact), (FLOWS, unsure), (RAISED, raised)]
        found: dict[tuple[str, int], str] = {}
        for why, items in tiers:
            for item in items:
                path = _in_repository(item.path, resolve)
                if path is not None:
                    found.setdefault((path, item.line), why)
        return [Ranked(path, line, why) for (path, line), why in found.items()]

    def depths(self, resolve: Resolve) -> dict[tuple[str, int], int]:
        """How many calls below the test each function of the repository ran (the test's own
        function: 0; a function it calls: 1)."""
        depth = _distances(self._roots(), self._callees())
        found: dict[tuple[str, int], int] = {}
        for item in self.ran:
            path = _in_repository(item.path, resolve)
            if path is not None and item.key in depth:
                found[(path, item.line)] = min(
                    depth[item.key], found.get((path, item.line), depth[item.key])
                )
        return found

    def _returning(self, wanted: Callable[[str], bool]) -> list[Ran]:
        """The functions that returned a `wanted` value (by its repr), the earliest first."""
        found = []
        for item in self.ran:
            when = next((order for text, order in item.returned if wanted(text)), None)
            if when is not None:
                found.append((when, item))
        return [item for _, item in sorted(found, key=lambda pair: pair[0])]

    def _flowing(self, comparison: Comparison, exact: list[Ran]) -> tuple[list[Ran], list[Ran]]:
        """The functions called under those that returned the wrong value (under the test
        when none did) that returned a part of it: those whose part the expected value does
        not hold, and those where no expected value is known; deepest first. A part the
        expected value holds too is right where it is computed."""
        callees = self._callees()
        below = _distances([item.key for item in exact] or self._roots(), callees)
        depth = _distances(self._roots(), callees)
        expected = comparison.expected
        whole, right = pieces(comparison.actual), pieces(expected) if expected is not None else None
        found: list[tuple[int, int, Ran]] = []
        for item in self.ran:
            if below.get(item.key, 0) == 0:  # not under a source, or a source itself
                continue
            parts = [(pieces(text), order) for text, order in item.returned]
            orders = [
                order for part, order in parts
                if part and part <= whole and (right is None or not part <= right)
            ]  # fmt: skip
            if orders:
                found.append((-depth.get(item.key, 0), min(orders), item))
        ranked = [item for _, _, item in sorted(found, key=lambda entry: entry[:2])]
        return (ranked, []) if right is not None else ([], ranked)

    def _callees(self) -> dict[tuple[str, int], set[tuple[str, int]]]:
        keys = {item.key for item in self.ran}
        callees: dict[tuple[str, int], set[tuple[str, int]]] = {}
        for item in self.ran:
            for caller in item.callers:
                if caller in keys and caller != item.key:
                    callees.setdefault(caller, set()).add(item.key)
        return callees

    def _roots(self) -> list[tuple[str, int]]:
        """The functions no function of the trace called: the test's own."""
        keys = {item.key for item in self.ran}
        return [
            item.key for item in self.ran
            if not any(caller in keys and caller != item.key for caller in item.callers)
        ]  # fmt: skip


RETURNED_WRONG = "returned_wrong"
FLOWS = "flows"
RAISED = "raised"
RAN = "ran"
"""Why a function ranks where it does (Ranked.why): what the issue's test saw of it."""


@dataclass(frozen=True, slots=True)
class Ranked:
    """A function of the repository the issue's test ran, and why it is suspected."""

    path: str
    line: int
    """The line its code starts on."""
    why: str
    """RETURNED_WRONG, FLOWS or RAISED."""


def _distances(
    sources: list[tuple[str, int]], callees: dict[tuple[str, int], set[tuple[str, int]]]
) -> dict[tuple[str, int], int]:
    """The fewest calls from any of `sources` to each function they lead to."""
    distance = dict.fromkeys(sources, 0)
    frontier = list(distance)
    while frontier:
        following = []
        for key in frontier:
            for callee in sorted(callees.get(key, ())):
                if callee not in distance:
                    distance[callee] = distance[key] + 1
                    following.append(callee)
        frontier = following
    return distance


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
    if not isinstance(entry, list) or not 3 <= len(entry) <= 6:
        return None
    path, line, values = entry[:3]
    ran = entry[3] if len(entry) >= 4 and isinstance(entry[3], list) else []
    above = entry[4] if len(entry) >= 5 and isinstance(entry[4], list) else []
    raised = entry[5] if len(entry) == 6 and type(entry[5]) is int and entry[5] > 0 else 0
    if not isinstance(path, str) or not isinstance(line, int) or not isinstance(values, list):
        return None
    returned = tuple(
        (value[0], value[1])
        for value in values[:MAX_VALUES]
        if isinstance(value, list) and len(value) == 2
        if isinstance(value[0], str) and isinstance(value[1], int)
    )
    lines = tuple(n for n in ran[:MAX_LINES] if isinstance(n, int))
    callers = tuple(
        (where[0][:1_000], where[1])
        for where in above[:MAX_CALLERS]
        if isinstance(where, list) and len(where) == 2
        if isinstance(where[0], str) and type(where[1]) is int
    )
    return Ran(path[:1_000], line, returned, lines, callers, raised)


def _in_repository(path: str, resolve: Resolve) -> str | None:
    if not path.startswith(INSTALLED):
        return resolve(path)
    installed = path.removeprefix(INSTALLED)
    return resolve(installed) or resolve(f"src/{installed}")
