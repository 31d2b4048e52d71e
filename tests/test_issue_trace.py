"""Candidates asked for where the issue's test goes (issue 46, planner.verification.fixes.trace).

The issue names the entry point (`read`); the wrong value comes from a helper two calls deeper
(`_number`) that shares no word with the issue, while other short functions do. The issue's
test, run once under the profiler, says which functions it ran and which returned the value
its assertion found wrong: that helper is the first definition asked for. A real git
repository and real pytest; the model is the scripted stand-in over HTTP.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from planner.outcome.result import PassResult
from planner.run.runner import PassSetup, run_pass
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_text
from planner.text.issue import IssueContext
from planner.verification.fixes.assertion import wrong_value
from planner.verification.fixes.candidates import Spot
from planner.verification.fixes.mutants import mutants, raised_in
from planner.verification.fixes.trace import MARK, read_trace, traced_argv
from tests.plans import completion
from tests.test_candidates import module_repo
from tests.test_verification_pass import config, of_type

READINGS = '''"""Temperature readings."""


def read(text):
    """The reading of a line such as `-5 degrees`."""
    amount, unit = text.split(" ", 1)
    return Reading(_number(amount), unit)


class Reading:
    def __init__(self, value, unit):
        self.value = value
        self.unit = unit


def degrees_of(readings):
    """The degrees of every reading, in order."""
    return [reading.value for reading in readings if reading.unit == "degrees"]


def warmest_reading(readings):
    """The reading with the most degrees."""
    return max(readings, key=lambda reading: reading.value)


def format_reading(reading):
    """A reading as a line of text, its minus sign included."""
    return f"{reading.value} {reading.unit}"


def _number(amount):
    sign = 1
    if amount.startswith("-"):
        sign = 1
        amount = amount[1:]
    return sign * int(amount)
'''
READING_TESTS = """from readings import format_reading, read


def test_positive():
    assert read("5 degrees").value == 5


def test_format():
    assert format_reading(read("7 degrees")) == "7 degrees"
"""
ISSUE = IssueContext(
    repository="octo/calc",
    number="3",
    title="Negative readings lose their minus sign",
    body=(
        "Every negative reading comes out positive:\n\n```python\n"
        '>>> from readings import read\n>>> read("-5 degrees").value\n5\n```\n\n'
        "I expected `-5`. The degrees of a warm reading are right.\n"
    ),
)
FIXED = (
    "The line `sign = 1` under the `if` should be `sign = -1`.\n\n```python\n"
    "def _number(amount):\n    sign = 1\n    if amount.startswith('-'):\n        sign = -1\n"
    "        amount = amount[1:]\n    return sign * int(amount)\n```\n"
)


def readings_repo(root: Path) -> Path:
    return module_repo(root, "readings", READINGS, READING_TESTS)


def mechanical_pass(
    workspace: Path, server: ScriptedModelServer, issue: IssueContext
) -> PassResult:
    """A pass with mechanical candidates and no model candidates; the model only completes."""
    server.add(completion())
    settings = {
        "verification.issue_test": True,
        "verification.candidates": 0,
        "verification.mutants": 20,
        "planning.decompose": False,
    }
    return run_pass(PassSetup(config=config(server, **settings), workspace=workspace), issue)


def test_the_function_that_returned_the_wrong_value_is_asked_for_first(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = readings_repo(tmp_path / "repo")
    scripted_model.add(reply_text("candidate", FIXED), completion())
    settings = {
        "verification.issue_test": True,
        "verification.candidates": 3,
        "planning.decompose": False,
    }
    result = run_pass(
        PassSetup(config=config(scripted_model, **settings), workspace=workspace), ISSUE
    )

    assert result.status == "completed", result.stop_reason
    located = [e for e in of_type(workspace, "candidates") if e["status"] == "located"]
    assert located[0]["profiled"] is True and located[0]["ran"] >= 3
    number_line = READINGS.splitlines().index("def _number(amount):") + 1
    assert located[0]["returned_wrong"][0] == f"readings.py:{number_line}"
    asked = str(scripted_model.requests[0].body["messages"][-1]["content"])
    assert f"Function `_number` of readings.py (lines {number_line}-" in asked
    assert "it returns the wrong value the test's assertion shows" in asked
    judged = of_type(workspace, "candidate")
    assert [(c["spot"], c["outcome"]) for c in judged] == [("readings.py:_number", "passes")]
    assert "sign = -1" in (workspace / "readings.py").read_text(encoding="utf-8")
    # the profiler left nothing in the tree: the change is the fix and the issue's test
    assert not list(workspace.rglob("__pycache__"))


def test_a_bug_one_token_off_is_fixed_by_a_mechanical_candidate_without_a_model_call(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = readings_repo(tmp_path / "repo")
    result = mechanical_pass(workspace, scripted_model, ISSUE)

    assert result.status == "completed", result.stop_reason
    assert [request.kind for request in scripted_model.requests] == ["completion"]
    lines = READINGS.splitlines()
    fixed = lines.index("        sign = 1") + 1  # the one inside the minus branch
    judged = of_type(workspace, "candidate")
    # only lines the issue's test ran, the first line of `_number` first: each change there
    # fails the issue's test; the right one in the branch passes every test
    assert [c["change"] for c in judged] == [
        f"line {fixed - 2}: `1` → `2`",
        f"line {fixed - 2}: `1` → `0`",
        f"line {fixed - 2}: `1` → `-1`",
        f"line {fixed}: `1` → `2`",
        f"line {fixed}: `1` → `0`",
        f"line {fixed}: `1` → `-1`",
    ]
    assert [c["outcome"] for c in judged] == [*["issue_test_fails"] * 5, "passes"]
    text = (workspace / "readings.py").read_text(encoding="utf-8")
    assert text == READINGS.replace("        sign = 1\n", "        sign = -1\n")
    done = [e for e in of_type(workspace, "task") if e["status"] == "completed"]
    assert done[0]["summary"] == (
        f"mechanical candidate fix (line {fixed}: `1` → `-1`) for readings.py:_number "
        "(+1/-1 lines): its tests pass"
    )
    note = result.verification
    assert note is not None and not note.unfinished
    assert (
        f"This change began as candidate fix 6 (a mechanical change: line {fixed}: `1` → `-1`), "
        "for `readings.py:_number`, after 5 taken back." in note.details()
    )


# -- the parts ---------------------------------------------------------------------------------


def test_the_profiled_run_reports_what_ran_and_what_it_returned(tmp_path: Path) -> None:
    """The profiler, run by itself on a failing test: functions of the repository only (not
    pytest's or the standard library's), each with the values it returned in order."""
    workspace = readings_repo(tmp_path / "repo")
    test = workspace / "tests" / "test_issue.py"
    test.write_text(
        'from readings import read\n\ndef test_it():\n    assert read("-5 degrees").value == -5\n',
        encoding="utf-8",
    )
    argv = traced_argv([sys.executable, "-m", "pytest", "-q", "tests/test_issue.py"], "python3")
    assert argv is not None
    import subprocess

    done = subprocess.run(argv, cwd=workspace, capture_output=True, text=True, timeout=120)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output  # the test's own result is kept
    trace = read_trace(output)
    assert trace is not None
    paths = {"readings.py", "tests/test_issue.py"}
    ran = trace.lines(lambda path: path if path in paths else None)
    lines = READINGS.splitlines()
    started = {lines.index(f"def {name}") + 1 for name in ("read(text):", "_number(amount):")}
    assert started <= {line for path, line in ran if path == "readings.py"}
    assert not any("_pytest" in path or "pluggy" in path for path, _ in ran)
    assert wrong_value(output) == "5"
    # the lines that ran: the minus branch of `_number` did, `degrees_of` never did
    covered = trace.covered(lambda path: path if path in paths else None)["readings.py"]
    assert lines.index("        sign = 1") + 1 in covered
    assert lines.index("        amount = amount[1:]") + 1 in covered
    degrees = lines.index("def degrees_of(readings):") + 1
    assert not covered & set(range(degrees, degrees + 3))
    wrong = trace.returning("5", lambda path: path if path in paths else None)
    assert wrong[0] == ("readings.py", lines.index("def _number(amount):") + 1)


def test_the_profilers_output_is_read_as_untrusted_data() -> None:
    """A test can print anything: a forged or broken line gives no finding or only
    well-formed ones, and paths outside the repository match nothing."""
    assert read_trace("no findings here") is None
    assert read_trace(f"{MARK}{{not json") is None
    assert read_trace(f'{MARK}{{"a": 1}}') is None
    forged = [
        ["../../etc/passwd", 1, []],
        ["readings.py", "12", []],
        ["readings.py", 4, [["5", 1], ["x"], [3, 2]]],
        "junk",
        ["site-packages:readings.py", 9, []],
    ]
    trace = read_trace(f"output\n{MARK}{json.dumps(forged)}\n")
    assert trace is not None
    known = {"readings.py", "src/pkg/mod.py"}
    resolve = lambda path: path if path in known else None  # noqa: E731
    assert trace.lines(resolve) == [("readings.py", 4), ("readings.py", 9)]
    assert trace.returning("5", resolve) == [("readings.py", 4)]
    # an installed copy is matched to its source in the repository, `src/` layout included
    installed = read_trace(f'{MARK}[["site-packages:pkg/mod.py", 3, []]]')
    assert installed is not None and installed.lines(resolve) == [("src/pkg/mod.py", 3)]


def test_the_wrong_value_is_the_left_side_of_a_failing_comparison() -> None:
    assert wrong_value("E       assert 12 == -12\n") == "12"
    assert wrong_value("E   AssertionError: assert 'a b' == 'a  b'\n") == "'a b'"
    assert wrong_value("E       assert [1, 2] != [1, 2]") == "[1, 2]"
    assert wrong_value("E       TypeError: unhashable type") is None
    assert wrong_value("E       assert 'aaaaaaa...' == 'b'") is None  # cut by pytest: unknown


def test_mechanical_changes_keep_the_formatting_and_touch_only_the_lines_given() -> None:
    text = (
        "def f(items, limit):\n"
        "    if len(items) < limit and not items[0]:\n"
        "        return items[-1]\n"
        "    return x is not None  # < stays in a comment\n"
    )
    spot = Spot("m.py", "f", "def", 1, 4, text)
    changes = [m.change for m in mutants(text, spot, {2})]
    assert changes == [
        "line 2: `<` → `<=`",
        "line 2: `<` → `>`",
        "line 2: `and` → `or`",
        "line 2: `not` → `(removed)`",
        "line 2: `0` → `1`",
        "line 2: `0` → `-1`",
    ]
    by_change = {m.change: m.text for m in mutants(text, spot, {2, 3, 4})}
    assert by_change["line 2: `not` → `(removed)`"].splitlines()[1] == (
        "    if len(items) < limit and items[0]:"
    )
    assert by_change["line 3: `-` → `(removed)`"].splitlines()[2] == "        return items[1]"
    assert by_change["line 4: `not` → `(removed)`"].splitlines()[3] == (
        "    return x is None  # < stays in a comment"
    )
    assert all(m.line in (2, 3, 4) for m in mutants(text, spot, {2, 3, 4}))
    # a line outside the definition, or one no test ran, is never changed
    assert not list(mutants(text, Spot("m.py", "f", "def", 3, 4, text), {2}))


def test_a_call_changes_to_its_dual_and_ordered_operands_swap_with_their_parentheses() -> None:
    """The two changes that are not one token: a call of opposite meaning (`iter` for
    `reversed`: the least recently used key taken from the wrong end) and the operands of an
    operation whose order matters (`":" + dashes` for `dashes + ":"`). What each changed line
    computes is checked, not only its text."""
    text = (
        "def f(order, w, a, b, c):\n"
        '    mark = ":" + ("-" * (w - 1))\n'
        "    rest = (a - b) - c\n"
        "    key = next(reversed(order))\n"
        '    return mark, rest, key, order[0].startswith("é"), max(a, b) - 1\n'
    )
    spot = Spot("m.py", "f", "def", 1, 5, text)
    by_change = {m.change: m.text for m in mutants(text, spot, {2, 3, 4, 5})}
    swapped = 'line 2: `mark = ":" + ("-" * (w - 1))` → `mark = ("-" * (w - 1)) + ":"`'
    assert swapped in by_change
    assert "line 3: `rest = (a - b) - c` → `rest = c - (a - b)`" in by_change
    assert "line 3: `rest = (a - b) - c` → `rest = (b - a) - c`" in by_change
    assert "line 4: `reversed` → `iter`" in by_change
    assert "line 5: `startswith` → `endswith`" in by_change
    assert "line 5: `max` → `min`" in by_change
    results = {}
    for change in (swapped, "line 3: `rest = (a - b) - c` → `rest = c - (a - b)`"):
        namespace: dict[str, object] = {}
        exec(by_change[change], namespace)
        function = namespace["f"]
        assert callable(function)
        results[change] = function(["x", "y"], 3, 10, 4, 1)
    assert results[swapped][0] == "--:"
    assert results["line 3: `rest = (a - b) - c` → `rest = c - (a - b)`"][1] == 1 - (10 - 4)
    # a line the test did not run keeps its calls and operands
    assert not [m for m in mutants(text, spot, {1}) if m.line != 1]


def test_only_pytest_commands_are_profiled() -> None:
    argv = traced_argv(["python3", "-m", "pytest", "-q", "t.py"], "python3")
    assert argv is not None and argv[:2] == ["python3", "-c"] and argv[3:] == ["-q", "t.py"]
    argv = traced_argv(["/venv/bin/pytest", "-x", "t.py"], "python3")
    assert argv is not None and argv[:2] == ["python3", "-c"] and argv[3:] == ["-x", "t.py"]
    assert traced_argv(["tox", "-e", "py"], "python3") is None


LOOKUP = '''"""Nested lookups."""


def get_in(keys, coll, default=None):
    """The value at the path `keys` in `coll`, or `default` where the path does not exist."""
    for key in keys:
        try:
            coll = coll[key]
        except (KeyError, IndexError):
            return default
    return coll
'''
LOOKUP_TESTS = """from lookup import get_in


def test_missing_key():
    assert get_in(["total"], {"items": []}, "none") == "none"
"""
LOOKUP_ISSUE = IssueContext(
    repository="octo/calc",
    number="3",
    title="get_in raises instead of returning the default",
    body=(
        "With a list on the path and a string key it raises:\n\n```python\n"
        '>>> from lookup import get_in\n>>> get_in(["items", "first"], {"items": ["apple"]}, '
        '"none")\nTraceback (most recent call last):\n  ...\n'
        "TypeError: list indices must be integers or slices, not str\n```\n\n"
        'I expected `"none"`, as for a missing key.\n'
    ),
)


def test_an_exception_the_issue_test_raises_through_a_handler_is_caught_there(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """The issue's test fails with TypeError raised inside a `try` whose handler catches
    KeyError and IndexError and returns the default: the mechanical change adds TypeError to
    that handler, without a model call, and every test passes."""
    workspace = module_repo(tmp_path / "repo", "lookup", LOOKUP, LOOKUP_TESTS)
    result = mechanical_pass(workspace, scripted_model, LOOKUP_ISSUE)

    assert result.status == "completed", result.stop_reason
    assert [request.kind for request in scripted_model.requests] == ["completion"]
    row = LOOKUP.splitlines().index("        except (KeyError, IndexError):") + 1
    judged = of_type(workspace, "candidate")
    assert judged[0]["change"] == (
        f"line {row}: `except (KeyError, IndexError):` → "
        "`except (KeyError, IndexError, TypeError):`"
    )
    assert judged[0]["outcome"] == "passes"
    text = (workspace / "lookup.py").read_text(encoding="utf-8")
    assert text == LOOKUP.replace("(KeyError, IndexError)", "(KeyError, IndexError, TypeError)")


def test_only_a_handler_the_test_reached_and_that_misses_the_exception_is_changed() -> None:
    text = (
        "def f(x):\n"
        "    try:\n"
        "        return x[0]\n"
        "    except KeyError:\n"
        "        return None\n"
        "    except TypeError:\n"
        "        raise\n"
        "    try:\n"
        "        return x[1]\n"
        "    except LookupError:\n"
        "        return 0\n"
    )
    spot = Spot("m.py", "f", "def", 1, 11, text)
    output = "E       AssertionError: assert 1 == 2\nE   ValueError: bad\nE   MyError: x\n"
    assert raised_in(output) == ["ValueError"]  # not the assertion, not an unknown class
    changes = [m.change for m in mutants(text, spot, {4, 10}, ["ValueError", "TypeError"])]
    caught = [change for change in changes if "except" in change]
    # TypeError is already caught by the first `try`; the second's handler gets both
    assert caught == [
        "line 4: `except KeyError:` → `except (KeyError, ValueError):`",
        "line 10: `except LookupError:` → `except (LookupError, ValueError):`",
        "line 10: `except LookupError:` → `except (LookupError, TypeError):`",
    ]
    assert not [c for c in mutants(text, spot, {3, 9}, ["ValueError"]) if "except" in c.change]
