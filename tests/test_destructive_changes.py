"""Writes that would destroy code the model did not mean to touch go back to it.

The 1.5B on released packages replaced the 650-line `tabulate()` with its signature and
`# ... (rest of the function remains unchanged)`, wrote a whole `__init__.py` as one line, and
deleted the assertions of a package's tests. The approval gate held each of these for a person
(a diff that long cannot be approved in bulk) and the pass ended there. Now the model is told
what its change would delete and how to send the lines it means; the same change sent again
is refused again (at temperature 0 a small model repeats a reply whatever it meant), and a
deletion the issue asks for, naming what goes, is made.

The passes run over the scripted model server (real HTTP, the real openai client) on a real
git checkout.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_tool_calls
from planner.text.issue import IssueContext
from planner.tools.files.destructive import destructive_change
from tests.harness import Harness
from tests.plans import commit_all

BODY = "".join(f"        total += row[{n}] * {n}\n" for n in range(30))
TABLE = f"def table(rows):\n    total = 0\n    for row in rows:\n{BODY}    return total - 1\n"
MODULE = f"import math\n\n\n{TABLE}\n\ndef add(a, b):\n    return a - b\n"
ISSUE = IssueContext(
    repository="octo/repo",
    number="7",
    title="add() subtracts",
    body="`add(2, 3)` returns -1; it must return 5.",
)
SETTINGS = {"planning.enabled": False, "llm.tool_calling": "native", "llm.edit_format": "edit_file"}


@pytest.fixture
def harness(tmp_path: Path, scripted_model: ScriptedModelServer) -> Iterator[Harness]:
    made = Harness(tmp_path, scripted_model)
    (made.workspace / "calc.py").write_text(MODULE, encoding="utf-8")
    yield made


def edit(old: str, new: str, kind: str = "legacy") -> Any:
    return reply_tool_calls(
        kind, [("edit_file", {"path": "calc.py", "edits": [{"oldText": old, "newText": new}]})]
    )


def finish() -> Any:
    return reply_tool_calls("legacy", [("finish_task", {"status": "completed", "summary": "ok"})])


ELIDED = "def table(rows):\n    # ... (rest of the function remains unchanged)\n"
RIGHT = ("def add(a, b):\n    return a - b\n", "def add(a, b):\n    return a + b\n")


def test_an_edit_eliding_a_function_is_told_back_and_the_next_edit_fixes_the_issue(
    harness: Harness,
) -> None:
    harness.server.add(edit(TABLE, ELIDED), edit(*RIGHT), finish())
    result = harness.run(ISSUE, **SETTINGS)
    assert result.status == "completed", result.stop_reason
    assert (harness.workspace / "calc.py").read_text() == MODULE.replace(*RIGHT)  # table kept
    told = harness.server.requests[1].body["messages"][-1]["content"]
    assert "# ... (rest of the function remains unchanged)" in told
    assert "would delete 33 lines of calc.py (`table`: 33 of its 34 lines)" in told
    assert "oldText the exact lines" in told


def test_the_same_destructive_change_sent_again_is_refused_again(harness: Harness) -> None:
    """At temperature 0 the 1.5B sent the same 649-line deletion again: repeating a change is
    not meaning it. The task ends on the repeats and nothing is written."""
    emptied = edit(TABLE, "def table(rows):\n    return 0\n")
    harness.server.add(emptied, emptied, emptied, emptied)
    result = harness.run(ISSUE, **SETTINGS)
    assert result.status == "failed", result.stop_reason
    assert (harness.workspace / "calc.py").read_text() == MODULE
    told = harness.server.requests[1].body["messages"][-1]["content"]
    assert "deletes 33 lines of calc.py" in told and "adds 1" in told


def test_a_deletion_the_issue_asks_for_is_not_refused() -> None:
    emptied = MODULE.replace(TABLE, "")
    asked = "Remove the unused `table` function from calc.py."
    assert destructive_change("calc.py", MODULE, emptied, issue_text=asked) is None
    # Naming the function the bug is in is not asking to delete it.
    named = "`table([[1, 2]])` returns the wrong total."
    assert destructive_change("calc.py", MODULE, emptied, issue_text=named) is not None
    # An elision is never what an issue asks for.
    elided = MODULE.replace(TABLE, ELIDED)
    assert destructive_change("calc.py", MODULE, elided, issue_text=asked) is not None


def test_a_small_fix_inside_a_long_function_is_not_destructive() -> None:
    fixed = MODULE.replace("return total - 1", "return total")
    assert destructive_change("calc.py", MODULE, fixed) is None
    rewritten = MODULE.replace("math", "cmath")  # a whole-file write changing two lines
    assert destructive_change("calc.py", MODULE, rewritten) is None


def test_an_elision_comment_already_in_the_file_is_not_one_the_model_wrote() -> None:
    before = MODULE.replace("    total = 0\n", "    total = 0  # ... (rest unchanged)\n")
    after = before.replace("    return a - b\n", "    return a + b\n")
    assert destructive_change("calc.py", before, after) is None


def test_a_whole_module_written_as_one_line_names_the_definitions_it_empties() -> None:
    why = destructive_change("calc.py", MODULE, "from calc import add\n")
    assert why is not None
    assert "deletes 41 lines of calc.py" in why and "adds 1" in why
    assert "`table`: 34 of its 34 lines" in why


def test_a_long_definition_written_back_in_a_few_lines_is_told_back() -> None:
    """The 1.5B wrote cachetools' __init__.py from memory: merged definition by definition,
    its 20-line `Cache` replaced the real 100-line one, while the rest of the reply's lines
    kept the change from deleting twice what it added."""
    short = "def table(rows):\n    return sum(sum(row) for row in rows)\n"
    padded = MODULE.replace(TABLE, short) + "".join(f"\n\nX{n} = {n}\n" for n in range(20))
    why = destructive_change("calc.py", MODULE, padded)
    assert why is not None and "replaces the 34 lines of `table` with 2" in why
    # Rewriting a long function at its length is a change, not a loss.
    rewritten = MODULE.replace(" * ", " + ")
    assert destructive_change("calc.py", MODULE, rewritten) is None


TESTS = (
    "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    "    assert add(0, 0) == 0\n\n\ndef test_add_negative():\n    assert add(-1, 1) == 0\n"
)


def test_an_edit_dropping_assertions_of_the_repositorys_tests_is_told_back() -> None:
    weakened = TESTS.replace("    assert add(2, 3) == 5\n", "")
    why = destructive_change("tests/test_calc.py", TESTS, weakened, base=TESTS)
    assert why is not None and "`assert add(2, 3) == 5`" in why
    assert "change the code they test, not the tests" in why
    # Adding a test, changing an assertion (a rename) or moving one keeps every check.
    added = TESTS + "\n\ndef test_add_big():\n    assert add(10, 5) == 15\n"
    changed = TESTS.replace("add(2, 3) == 5", "plus(2, 3) == 5")
    moved = TESTS.replace("    assert add(0, 0) == 0\n", "").replace(
        "assert add(-1, 1) == 0\n", "assert add(-1, 1) == 0\n    assert add(0, 0) == 0\n"
    )
    for kept in (added, changed, moved):
        assert destructive_change("tests/test_calc.py", TESTS, kept, base=TESTS) is None
    # A test the pass added is the pass's own; the same lines outside a test file are the
    # module's business.
    assert destructive_change("tests/test_calc.py", TESTS, weakened, base=None) is None
    assert destructive_change("calc_checks.py", TESTS, weakened, base=TESTS) is None


def test_a_pass_removing_a_committed_assertion_is_told_and_one_it_added_is_not(
    harness: Harness,
) -> None:
    """The repository's version is read from git (HEAD), not from the file as the pass left it."""
    tests = harness.workspace / "tests"
    tests.mkdir()
    (tests / "test_calc.py").write_text(TESTS)
    commit_all(harness.workspace)
    weakened = TESTS.replace("    assert add(2, 3) == 5\n", "")
    harness.server.add(
        reply_tool_calls(
            "legacy", [("write_file", {"path": "tests/test_calc.py", "content": weakened})]
        ),
        edit(*RIGHT),
        finish(),
    )
    result = harness.run(ISSUE, **SETTINGS)
    assert result.status == "completed", result.stop_reason
    assert (tests / "test_calc.py").read_text() == TESTS
    told = harness.server.requests[1].body["messages"][-1]["content"]
    assert "removes 1 line(s) of the repository's tests" in told


def test_the_gate_refuses_before_a_person_could_be_asked(tmp_path: Path) -> None:
    """No record is proposed for the refused change: nobody is asked about what the model did
    not mean, and the file is untouched."""
    from tests.test_approval_gate import call, gate_for

    gate = gate_for(tmp_path, large_file_bytes=100)
    target = tmp_path / "repo" / "calc.py"
    target.write_text(MODULE)
    for _ in range(2):  # sent again, it is refused again
        result = gate.before_action("task_1", call("write_file", path="calc.py", content="x = 1\n"))
        assert result is not None and not result.ok and result.refused
        assert "write the file with all of its current lines" in str(result.error)
        assert gate.tool.records() == [] and target.read_text() == MODULE
