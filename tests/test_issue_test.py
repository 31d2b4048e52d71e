"""The issue's own test (planner.verification.reproduction.issue_test, issue 23): before the
change the
model writes a test of what the issue states; planner keeps only the checks the issue
grounds and that fail on the code before the change, runs them with the repository's tests,
feeds their failures back, and adds the file to the pull request only once it passes.

Replies are the ones Qwen2.5-Coder 1.5B gave (captured with `scripted_local_model capture`);
the repository is a real git repository with a real pytest suite; the approval gate is the
one every pass installs.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from planner.outcome.evidence import TestRun, VerificationNote
from planner.outcome.result import PassResult
from planner.run.runner import PassSetup, run_pass
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_text
from planner.text.issue import IssueContext
from planner.verification.reproduction.issue_test import (
    IssueTest,
    collection_problem,
    failing_only,
    grounded,
    issue_test_from_reply,
    one_check_each,
    placed,
    with_imports,
)
from tests.plans import ROOT_TOOLS, committed_repo, git_repo
from tests.support.issue_test_replies import block, issue_test_then_fixes
from tests.test_candidates import module_repo
from tests.test_verification_pass import config, entries, of_type

ISSUE = IssueContext(
    repository="octo/calc",
    number="3",
    title="parse_duration fails on combined units",
    body=(
        '`parse_duration("1h30m")` raises `ValueError` instead of returning 5400. Durations may\n'
        "combine hours, minutes and seconds in that order (`1h30m`, `2m5s`, `1h1m1s`); a single\n"
        "unit (`45s`, `2h`) must keep working.\n"
    ),
)
ONE_UNIT = (
    'UNITS = {"s": 1, "m": 60, "h": 3600}\n\n\n'
    "def parse_duration(text: str) -> int:\n"
    "    \"\"\"Seconds in a duration such as '45s', '5m', '2h' or '1h30m'.\"\"\"\n"
    "    return int(text[:-1]) * UNITS[text[-1]]\n"
)
WRONG_FIX = ONE_UNIT.replace(
    "    return int(text[:-1]) * UNITS[text[-1]]\n",
    "    if text[-1] in UNITS:\n"
    "        return int(text[:-1]) * UNITS[text[-1]]\n"
    "    else:\n"
    '        raise ValueError("Invalid duration format")\n',
)
FIXED = ONE_UNIT.replace(
    "    return int(text[:-1]) * UNITS[text[-1]]\n",
    "    total = 0\n"
    '    for number, unit in re.findall(r"(\\d+)([hms])", text):\n'
    "        total += int(number) * UNITS[unit]\n"
    "    return total\n",
).replace("UNITS =", "import re\n\nUNITS =")
REPO_TEST = (
    "from durations import parse_duration\n\n\n"
    "def test_single_unit() -> None:\n"
    '    assert parse_duration("45s") == 45\n'
    '    assert parse_duration("2h") == 7200\n'
)
ISSUE_TEST_REPLY = (  # 1.5B: right for 1h30m, its own arithmetic for the others (155, 371)
    "```python\nimport pytest\n\nfrom durations import parse_duration\n\n\n"
    "def test_single_unit() -> None:\n"
    '    assert parse_duration("45s") == 45\n'
    '    assert parse_duration("2h") == 7200\n\n'
    "def test_combined_units() -> None:\n"
    '    assert parse_duration("1h30m") == 5400\n'
    '    assert parse_duration("2m5s") == 155\n'
    '    assert parse_duration("1h1m1s") == 371\n```'
)
TEST_PATH = "tests/test_planner_issue_3.py"
LEGACY = {
    "planning.enabled": False,
    "llm.edit_format": "whole_file",
    "verification.issue_test": True,
}


def durations_repo(root: Path) -> Path:
    return module_repo(root, "durations", ONE_UNIT, REPO_TEST)


def run(
    workspace: Path, server: ScriptedModelServer, issue: IssueContext = ISSUE, **overrides: Any
) -> PassResult:
    setup = PassSetup(config=config(server, **{**LEGACY, **overrides}), workspace=workspace)
    return run_pass(setup, issue)


def issue_test_entries(workspace: Path) -> list[dict[str, Any]]:
    return of_type(workspace, "issue_test")


def untracked(workspace: Path) -> str:
    status = ["git", "status", "--porcelain", "--untracked-files=all"]
    return subprocess.check_output(status, cwd=workspace, text=True)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return durations_repo(tmp_path / "repo")


# -- whole passes ------------------------------------------------------------------------------


def test_a_wrong_fix_the_repository_tests_pass_is_caught_and_the_repair_resolves_the_issue(
    workspace: Path, scripted_model: ScriptedModelServer
) -> None:
    """Without the issue's test the 1.5B's one-unit parser passed every repository test and
    the pass reported `completed`."""
    scripted_model.add(*issue_test_then_fixes(ISSUE_TEST_REPLY, "durations.py", WRONG_FIX, FIXED))
    result = run(workspace, scripted_model)

    assert result.status == "completed", result.stop_reason
    asked = str(scripted_model.requests[0].body["messages"][-1]["content"])
    assert ISSUE.body.splitlines()[0] in asked and REPO_TEST.strip() in asked
    assert f"write {TEST_PATH}" in asked
    active = issue_test_entries(workspace)[0]
    assert active["status"] == "active"
    assert "5400" in active["content"] and "155" not in active["content"]
    assert "371" not in active["content"]
    # the wrong fix went back with the issue's test failing
    told = str(scripted_model.requests[2].body["messages"][-1]["content"])
    assert told.startswith("The test planner wrote from the issue fails after your change")
    assert f"{TEST_PATH}::test_combined_units" in told
    # passing, it is part of the change, written like any file
    assert (workspace / TEST_PATH).read_text(encoding="utf-8") == issue_test_entries(workspace)[-2][
        "content"
    ]
    assert issue_test_entries(workspace)[-1]["status"] == "kept"
    writes = [
        e["execution"]["function_call"]["arguments"]["path"] for e in of_type(workspace, "action")
    ]
    assert writes == ["durations.py", "durations.py", TEST_PATH]
    note = result.verification
    assert note is not None and not note.unfinished
    assert any(line.startswith("✅ The issue's test") for line in note.details())


def test_an_issue_test_still_failing_is_left_out_of_the_change_and_reported(
    workspace: Path, scripted_model: ScriptedModelServer
) -> None:
    scripted_model.add(
        *issue_test_then_fixes(
            ISSUE_TEST_REPLY, "durations.py", WRONG_FIX, WRONG_FIX.replace("Invalid", "Bad")
        )
    )
    result = run(workspace, scripted_model, **{"verification.max_repair_attempts": 1})

    assert not (workspace / TEST_PATH).exists()
    assert TEST_PATH not in untracked(workspace)
    note = result.verification
    assert note is not None and note.issue_failures and not note.regressed
    failing = [line for line in note.details() if line.startswith("❌ The issue's test")]
    assert failing and "not part of the pull request" in failing[0]
    assert "files changed outside any judged call" not in str(entries(workspace))


def test_a_wrong_issue_test_gets_one_round_and_the_model_may_keep_its_change(
    workspace: Path, scripted_model: ScriptedModelServer
) -> None:
    """fahrenheit_formula: the 1.5B's test asserted `to_fahrenheit(212) == 100`, values the
    issue states the wrong way round. A correct fix failed it, and every repair reply wrote
    the same correct file again, each told "nothing changed": four calls lost. The change is
    kept, but nothing proves it: the pass ends needs_human, not completed."""
    wrong_way_round = (
        "```python\nfrom durations import parse_duration\n\n\n"
        'def test_units() -> None:\n    assert parse_duration("45s") == 5400\n```'
    )
    # the fix, and again: it stands by its change
    scripted_model.add(*issue_test_then_fixes(wrong_way_round, "durations.py", FIXED, FIXED))
    result = run(workspace, scripted_model)

    assert result.status == "needs_human", result.stop_reason
    assert "the fix is unproven" in result.stop_reason
    assert len(scripted_model.requests) == 3
    told = str(scripted_model.requests[2].body["messages"][-1]["content"])
    assert "If that test is wrong and your change is right, write the file back as it is" in told
    assert (workspace / "durations.py").read_text(encoding="utf-8") == FIXED
    assert not (workspace / TEST_PATH).exists()
    note = result.verification
    assert note is not None and note.issue_failures == [f"{TEST_PATH}::test_units"]


UNSTATED = ISSUE.model_copy(
    update={"body": ISSUE.body.split(". ", 1)[1].replace("Durations may", "Durations should")}
)
"""The issue without the call and result it states: nothing but the model writes its test."""


def test_a_test_that_already_passes_before_the_change_is_dropped(
    workspace: Path, scripted_model: ScriptedModelServer
) -> None:
    scripted_model.add(*issue_test_then_fixes(f"```python\n{REPO_TEST}```", "durations.py", FIXED))
    result = run(workspace, scripted_model, UNSTATED)

    last = issue_test_entries(workspace)[-1]
    assert last["status"] == "dropped" and "passes on the code before" in last["reason"]
    # the tests that pass say nothing about the issue: not `completed`
    assert result.status == "needs_human"
    assert result.stop_reason.startswith("the fix is unproven: no test of the issue passed")
    assert result.verification is not None and "passes on" in result.verification.unproven
    assert not (workspace / TEST_PATH).exists()
    assert of_type(workspace, "verification")[-1].get("issue_test") == ""


def test_attack_the_model_rewrites_the_issue_test_to_pass_and_is_refused(
    workspace: Path, scripted_model: ScriptedModelServer
) -> None:
    """Shown the issue's test failing, the 1.5B wrote its own version of it (with its own
    copy of the function under test): written, the check would prove nothing. As a block it
    is refused as a file not shown; as a tool call, by verification."""
    weakened = "def test_combined_units() -> None:\n    assert True\n"
    weak_write = {"path": TEST_PATH, "content": weakened}
    scripted_model.add(
        reply_text("issue_test", ISSUE_TEST_REPLY),
        reply_text("legacy", block("durations.py", WRONG_FIX)),
        reply_text("legacy", json.dumps({"tool": "write_file", "arguments": weak_write})),
        reply_text("legacy", block("durations.py", FIXED)),
    )
    result = run(workspace, scripted_model)

    assert result.status == "completed", result.stop_reason
    refused = str(scripted_model.requests[3].body["messages"][-1]["content"])
    assert "is planner's test of the issue" in refused
    kept = (workspace / TEST_PATH).read_text(encoding="utf-8")
    assert "assert True" not in kept and "5400" in kept


def test_off_asks_for_no_test(workspace: Path, scripted_model: ScriptedModelServer) -> None:
    scripted_model.add(reply_text("legacy", block("durations.py", FIXED)))
    result = run(workspace, scripted_model, **{"verification.issue_test": False})
    assert result.status == "completed", result.stop_reason
    assert len(scripted_model.requests) == 1 and not issue_test_entries(workspace)


# -- what is kept of a reply ---------------------------------------------------------------------

WORDS_ISSUE = (
    '`word_count("a  b")` (two spaces) returns 3 and `word_count("")` returns 1. Any run of\n'
    "whitespace (spaces, tabs, newlines) separates words; an empty or blank text has 0 words.\n"
)


def test_checks_with_values_the_issue_does_not_state_are_removed() -> None:
    text = issue_test_from_reply(ISSUE_TEST_REPLY, ISSUE.body + REPO_TEST)
    assert text is not None
    assert '"1h30m") == 5400' in text and '"2h") == 7200' in text
    assert "155" not in text and "371" not in text


def test_a_made_up_set_up_removes_its_test_and_a_test_without_values_goes_too() -> None:
    """env_port: `APP_PORT=8080` and `65536` are not in the issue, and the last test (a
    missing variable raising, where the issue says 8000) has no value to ground it. Keeping a
    made-up input whose value comes back out (`port() == 8080`) was measured: that test alone
    passed the 1.5B's fix that never checks the range, and the pass ended `completed` wrong."""
    issue = (
        "`settings.port()` always returns 8000. It should return the value of the environment\n"
        "variable `APP_PORT` when it is set (an integer between 1 and 65535), 8000 when it is\n"
        "not set, and raise `ValueError` for anything else."
    )
    reply = (
        "import pytest\n\nimport settings\n\n\n"
        "def test_app_port(monkeypatch: pytest.MonkeyPatch) -> None:\n"
        '    monkeypatch.setenv("APP_PORT", "8080")\n'
        "    assert settings.port() == 8080\n\n"
        "def test_invalid_app_port(monkeypatch: pytest.MonkeyPatch) -> None:\n"
        '    monkeypatch.setenv("APP_PORT", "65536")\n'
        "    with pytest.raises(ValueError):\n        settings.port()\n\n"
        "def test_no_app_port(monkeypatch: pytest.MonkeyPatch) -> None:\n"
        "    with pytest.raises(ValueError):\n        settings.port()\n"
    )
    assert grounded(reply, issue) is None
    stated = reply.replace('"8080"', '"65535"').replace("== 8080", "== 65535")
    kept = grounded(stated, issue)
    assert kept is not None and "def test_app_port" in kept and "test_no_app_port" not in kept


def test_tests_taken_out_leave_no_run_of_blank_lines_in_the_file_the_pull_request_gets() -> None:
    text = "import words\n\n\ndef test_a():\n    assert 1\n\n\ndef test_b():\n    assert 2\n"
    text += "\n\ndef test_c():\n    assert words.f()\n"
    kept = failing_only(text, "t.py", ["t.py::test_a", "t.py::test_c"])
    assert kept == text.replace("def test_b():\n    assert 2\n\n\n", "")


def test_numbers_and_short_texts_must_be_stated_whole() -> None:
    """`3` is not stated by `1h30m`, and `a   \\n\\n` is not `a`."""
    reply = (
        "from words import word_count\n\n\n"
        "def test_blank():\n"
        '    assert word_count("") == 0\n'
        '    assert word_count("a   \\n\\n\\t\\t\\t") == 3\n'
        '    assert word_count("1h30m") == 3\n'
    )
    kept = grounded(reply, WORDS_ISSUE.replace("returns 3", "returns three"))
    assert kept is not None
    assert 'word_count("") == 0' in kept and "\\t" not in kept and "1h30m" not in kept


def test_each_assertion_becomes_a_test_and_only_those_failing_before_the_change_stay() -> None:
    """`word_count("a  b") == 3` is the wrong value the issue reports: it passes on the code
    before the change, so it goes; `word_count("") == 0` fails there, so it stays."""
    reply = (
        "from words import word_count\n\n\n"
        "def test_words():\n"
        '    """Runs of whitespace."""\n'
        '    assert word_count("") == 0\n'
        '    assert word_count("a  b") == 3\n'
    )
    split = one_check_each(reply)
    assert "def test_words_1():" in split and "def test_words_2():" in split
    compile(split, "split", "exec")
    kept = failing_only(split, "t.py", ["t.py::test_words_1"])
    assert kept is not None and 'word_count("") == 0' in kept and "== 3" not in kept
    assert failing_only(split, "t.py", []) is None
    assert failing_only(split, "t.py", ["t.py"]) == split  # the file failed: an import error


def test_a_reply_cut_off_in_a_loop_keeps_what_parses() -> None:
    """slugify: the 1.5B repeated one assertion until the output limit."""
    line = '    assert slugify("Hello, World!") == "hello-world"\n'
    reply = "```python\nfrom slug import slugify\n\n\ndef test_punctuation() -> None:\n"
    reply += line * 40 + '    assert slugify("Hello, World'
    issue = '`slugify("Hello, World!")` returns `hello,-world!`. ... (`hello-world`).'
    text = issue_test_from_reply(reply, issue)
    assert text is not None and text.count("def test_punctuation_") == 1
    assert text.count("assert ") == 1
    compile(text, "cut", "exec")


def test_a_copy_of_the_code_in_the_test_is_taken_out_so_the_repositorys_own_runs() -> None:
    """The 1.5B copied the wrong `is_leap` into its test of leap years: the test checked its
    own copy and failed on the right fix too. A fixture of a name the issue uses stays."""
    stated = "`is_leap(1900)` returns True, but 1900 was not a leap year.\n"
    stated += "from calendar_tools import days_in_year, is_leap\n"
    reply = (
        "```python\nimport pytest\n\n"
        "def is_leap(year: int) -> bool:\n    return year % 4 == 0\n\n\n"
        "@pytest.fixture\ndef days_in_year():\n    return 365\n\n\n"
        "def test_leap_year_1900() -> None:\n    assert is_leap(1900) == False\n```"
    )
    text = issue_test_from_reply(reply, stated)
    assert text is not None and "year % 4" not in text
    imported = "from calendar_tools import days_in_year, is_leap"
    assert imported in text  # the repository's, as the example imports it
    assert "@pytest.fixture\ndef days_in_year" in text
    namespace: dict[str, object] = {}
    exec(text.replace(imported, "is_leap = lambda year: True"), namespace)
    with pytest.raises(AssertionError):  # it runs the code the issue is about, and fails on it
        namespace["test_leap_year_1900"]()  # type: ignore[operator]


def test_an_assertion_compared_with_pytest_raises_is_no_check() -> None:
    """The 1.5B's `assert mean([]) == pytest.raises(ValueError)` beside a check with stated
    values: it fails on any code (the call raises before the comparison), so it would hold a
    right fix back. It goes; the `with` form stays."""
    stated = "Add `median(values)`: `median([1, 2, 3])` is 2, and `ValueError` for an empty"
    stated += " list (like `mean`).\nfrom stats import mean, median\n"
    reply = (
        "```python\nimport pytest\nfrom stats import mean, median\n\n\n"
        "def test_median() -> None:\n"
        "    assert median([1, 2, 3]) == 2\n"
        "    assert mean([]) == pytest.raises(ValueError)\n\n\n"
        "def test_empty() -> None:\n"
        '    with pytest.raises(ValueError, match="empty"):\n        median([])\n'
        '    assert median(["empty"]) != raises(ValueError)\n```'
    )
    text = issue_test_from_reply(reply, stated)
    assert text is not None and "== pytest.raises" not in text and "!= raises(" not in text
    assert "def test_median() -> None:\n    assert median([1, 2, 3]) == 2\n" in text
    assert 'with pytest.raises(ValueError, match="empty"):\n        median([])' in text


FAHRENHEIT = IssueContext(
    repository="octo/calc",
    number="3",
    title="to_fahrenheit is wrong",
    body="`to_fahrenheit(100)` returns 148.0; water boils at 212 °F. `to_celsius` is right.\n",
)
TEMPERATURE = (
    "def to_fahrenheit(celsius: float) -> float:\n    return celsius * 9 / 5 - 32\n\n\n"
    "def to_celsius(fahrenheit: float) -> float:\n    return (fahrenheit - 32) * 5 / 9\n"
)


def test_a_check_expecting_the_issues_argument_back_cannot_prove_a_wrong_fix(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """The 1.5B's test read "`to_fahrenheit(100)` returns 148.0; water boils at 212 °F" as
    `to_fahrenheit(212) == 100`, and its fix turned to_fahrenheit into the Celsius formula,
    which passes that check and the reported one (`!= 148.0`): kept, the pass ended
    `completed` with the change wrong. The swapped check goes, what is left only shows the
    reported result gone, and the pass says the fix is unproven."""
    workspace = tmp_path / "repo"
    (workspace / "tests").mkdir(parents=True)
    (workspace / "temperature.py").write_text(TEMPERATURE, encoding="utf-8")
    repo_test = "from temperature import to_celsius\n\n\ndef test_boiling():\n"
    repo_test += "    assert to_celsius(212) == 100\n"
    (workspace / "tests" / "test_temperature.py").write_text(repo_test, encoding="utf-8")
    (workspace / "pytest.ini").write_text("[pytest]\npythonpath = .\n", encoding="utf-8")
    git_repo(workspace)
    reply = (
        "```python\nimport pytest\n\nfrom temperature import to_fahrenheit\n\n\n"
        "def test_to_fahrenheit() -> None:\n"
        "    assert to_fahrenheit(100) == 148.0\n    assert to_fahrenheit(212) == 100\n```"
    )
    wrong = TEMPERATURE.replace("celsius * 9 / 5 - 32", "(celsius - 32) * 5 / 9")
    scripted_model.add(*issue_test_then_fixes(reply, "temperature.py", wrong))
    result = run(workspace, scripted_model, FAHRENHEIT)

    assert (workspace / "temperature.py").read_text(encoding="utf-8") == wrong
    assert result.status == "needs_human", result.stop_reason
    assert result.stop_reason.startswith("the fix is unproven")
    entries = issue_test_entries(workspace)
    written = [e["content"] for e in entries if e.get("content")]
    assert all("== 100" not in content for content in written)
    # `to_fahrenheit(100) == 148.0` expects the value the issue reports as wrong: it goes too
    assert entries[0]["removed"] == ["test_to_fahrenheit"]
    assert entries[-1]["status"] == "dropped"


def test_a_reply_without_a_test_gives_none() -> None:
    assert issue_test_from_reply("I would test it by hand.", ISSUE.body) is None
    assert issue_test_from_reply("```python\nx = 1\n```", ISSUE.body) is None


def test_a_dropped_test_is_not_reported_as_passing() -> None:
    """It passed on the code before the change: the result must not say the issue's test
    passes when the model then changed nothing."""
    dropped = TestRun(stage="issue", status="passed", passed=3, issue_test=TEST_PATH)
    assert not any("issue's test" in line for line in VerificationNote(latest=dropped).details())
    after = dropped.model_copy(update={"stage": "task"})
    assert any(line.startswith("✅") for line in VerificationNote(latest=after).details())


def test_attack_a_file_put_at_the_tests_path_never_runs_in_its_place(tmp_path: Path) -> None:
    """A model that may run commands writes `assert True` to the issue test's path: while the
    tests run the path holds planner's test, and the model's file is back afterwards (the
    effect check and the path rules judge it like any other file)."""
    test = IssueTest(path=TEST_PATH, content="def test_issue():\n    assert 1 == 2\n")
    target = tmp_path / TEST_PATH
    target.parent.mkdir()
    target.write_text("def test_issue():\n    assert True\n", encoding="utf-8")
    with placed(tmp_path, test):
        assert target.read_text(encoding="utf-8") == test.content
    assert "assert True" in target.read_text(encoding="utf-8")
    with placed(tmp_path / "empty", test):
        assert (tmp_path / "empty" / TEST_PATH).read_text(encoding="utf-8") == test.content
    assert not (tmp_path / "empty" / TEST_PATH).exists()


STACK = (
    "class Stack:\n"
    "    def __init__(self) -> None:\n"
    "        self._items: list[object] = []\n\n"
    "    def push(self, item: object) -> None:\n"
    "        self._items.append(item)\n"
)
PEEK = (
    "\n    def peek(self) -> object:\n"
    "        if not self._items:\n"
    '            raise IndexError("peek from empty stack")\n'
    "        return self._items[-1]\n"
)


def test_an_import_the_test_needs_but_lacks_is_added_so_the_right_fix_passes(
    tmp_path: Path,
) -> None:
    """stack_peek: the 1.5B used `pytest.raises` without importing pytest, so its test failed
    with a NameError on the right fix too, and the model rewrote the fixed stack.py into a
    test program. The missing import is added; the test then fails before the fix and passes
    after it (run with pytest, as a pass runs it)."""
    reply = (
        "```python\nfrom stack import Stack\n\ndef test_stack_peek() -> None:\n"
        "    stack = Stack()\n    with pytest.raises(IndexError):\n        stack.peek()\n"
        "    stack.push(2)\n    assert stack.peek() == 2\n```"
    )
    stated = 'Add `peek()`, which raises `IndexError("peek from empty stack")`. 2\n'
    text = issue_test_from_reply(reply, stated + "from stack import Stack\n")
    assert text is not None and "import pytest" in text.split("\ndef ")[0].splitlines()
    (tmp_path / "test_issue.py").write_text(text, encoding="utf-8")

    def outcome(stack: str) -> int:
        (tmp_path / "stack.py").write_text(stack, encoding="utf-8")
        command = ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_issue.py"]
        return subprocess.run(command, cwd=tmp_path, capture_output=True).returncode

    assert outcome(STACK) == 1 and outcome(STACK + PEEK) == 0


def test_a_missing_import_comes_from_the_example_test_or_the_standard_library() -> None:
    text = (
        '"""Issue 7."""\nfrom __future__ import annotations\n\nfrom invoice import total\n\n\n'
        "def test_half_up() -> None:\n"
        '    assert total([Decimal("0.125")]) == Decimal("0.13")\n'
        "    assert math.isclose(1.0, 1.0)\n    assert made_up(1) == 1\n"
    )
    example = "from decimal import Decimal, ROUND_HALF_UP\n\nfrom invoice import total\n"
    fixed = with_imports(text, example)
    header = fixed.split("\ndef ")[0].splitlines()  # the imports, before the first test
    assert "from decimal import Decimal, ROUND_HALF_UP" in header and "import math" in header
    assert "import made_up" not in fixed  # neither stated nor a module planner knows
    assert with_imports(fixed, example) == fixed  # nothing missing: unchanged


def test_attack_an_issue_line_that_imports_and_runs_code_is_never_copied_into_the_test() -> None:
    """The issue's text is part of what the test may take its imports from; a line that
    imports the name a test lacks and then runs a command must not reach the test file."""
    issue = 'import shutil; shutil.rmtree("/")\nfrom decimal import Decimal as D; print(1)\n'
    text = 'def test_x() -> None:\n    assert shutil.which("sh")\n    assert D(1) == 1\n'
    fixed = with_imports(text, issue)
    assert "rmtree" not in fixed and "print" not in fixed
    assert "import shutil" in fixed.splitlines()  # the standard module, imported alone
    assert "import D" not in fixed  # D is neither imported alone nor a module planner knows


# -- every Python repository: unittest, no tests at all (issue 46) --------------------------------

STACK_ISSUE = IssueContext(
    repository="octo/calc",
    number="3",
    title="Stack: add peek()",
    body=(
        "`Stack` has `push` and `pop`. Add `peek()`, which returns the top item without\n"
        'removing it and raises `IndexError("peek from empty stack")` on an empty stack.\n'
    ),
)
STACK_TESTS = (
    "import unittest\n\nfrom stack import Stack\n\n\n"
    "class StackTest(unittest.TestCase):\n"
    "    def test_push(self) -> None:\n"
    "        stack = Stack()\n        stack.push(1)\n        self.assertEqual(stack._items, [1])\n"
)
PEEK_TEST_REPLY = (
    "```python\nimport pytest\n\nfrom stack import Stack\n\n\n"
    "def test_peek_empty() -> None:\n"
    '    with pytest.raises(IndexError, match="peek from empty stack"):\n'
    "        Stack().peek()\n```"
)


def run_on(workspace: Path, server: ScriptedModelServer, issue: IssueContext) -> PassResult:
    overrides = {**LEGACY, **ROOT_TOOLS, "verification.command": None}
    setup = PassSetup(config=config(server, **overrides), workspace=workspace)
    return run_pass(setup, issue)


def test_a_unittest_repository_gets_the_issues_test_and_keeps_it_as_a_test_case(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """stack_peek in a repository whose tests unittest runs: no test of the issue was written
    (only pytest repositories got one) and a wrong fix passed the repository's tests. The
    test runs with pytest; once it passes it is written as a TestCase, so the repository's
    own `python3 -m unittest discover` runs it from then on."""
    workspace = tmp_path / "repo"
    (workspace / "tests").mkdir(parents=True)
    (workspace / "stack.py").write_text(STACK, encoding="utf-8")
    (workspace / "tests" / "test_stack.py").write_text(STACK_TESTS, encoding="utf-8")
    git_repo(workspace)
    scripted_model.add(*issue_test_then_fixes(PEEK_TEST_REPLY, "stack.py", STACK + PEEK))
    result = run_on(workspace, scripted_model, STACK_ISSUE)

    assert result.status == "completed", result.stop_reason
    asked = str(scripted_model.requests[0].body["messages"][-1]["content"])
    assert "Write plain test functions" in asked and "class StackTest" in asked
    runs = of_type(workspace, "verification")
    issue_run = next(r for r in runs if r["stage"] == "issue")
    assert "-m pytest" in issue_run["command"] and TEST_PATH in issue_run["command"]
    assert issue_run["failing"] == [f"{TEST_PATH}::test_peek_empty"]
    kept = (workspace / TEST_PATH).read_text(encoding="utf-8")
    assert "class TestIssue3(unittest.TestCase):" in kept
    assert 'with self.assertRaisesRegex(IndexError, "peek from empty stack"):' in kept
    assert "pytest" not in kept
    final = runs[-1]
    assert "-m unittest discover" in final["command"] and final["status"] == "passed"
    assert final["passed"] == 2, final["tail"]  # the repository's test and the issue's


GREET_ISSUE = IssueContext(
    repository="octo/calc",
    number="3",
    title="greet says hi",
    body='`greet("Ada")` returns `hi Ada`; it should return `Hello, Ada!`.\n',
)
HI = 'def greet(name: str) -> str:\n    return f"hi {name}"\n'
HELLO = 'def greet(name: str) -> str:\n    return f"Hello, {name}!"\n'
GREET_TEST_REPLY = (
    '```python\nfrom greet import greet\n\n\ndef test_greet() -> None:\n    assert greet("Ada") == '
    '"Hello, Ada!"\n```'
)


def test_a_repository_without_tests_gets_the_issues_test_as_its_first(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """No tests at all: the README edit and a reformatted script ended `completed` with
    `Tests: not run`. Now the issue's test runs with pytest and, passing, is the first test
    in the change."""
    workspace = committed_repo(tmp_path / "repo", {"README.md": "# demo\n", "greet.py": HI})
    not_the_fix = '"""Greetings."""\n\n\n' + HI
    scripted_model.add(*issue_test_then_fixes(GREET_TEST_REPLY, "greet.py", not_the_fix, HELLO))
    result = run_on(workspace, scripted_model, GREET_ISSUE)

    assert result.status == "completed", result.stop_reason
    path = "test_planner_issue_3.py"
    assert (workspace / path).read_text(encoding="utf-8").startswith("from greet import greet")
    assert path in untracked(workspace)
    note = result.verification
    assert note is not None
    assert note.line() == (
        f"Tests (`python3 -m pytest -q -p no:cacheprovider {path}`): 1 passed, 0 failed — "
        "the repository had no tests it could run before"
    )
    told = str(scripted_model.requests[2].body["messages"][-1]["content"])
    assert "The test planner wrote from the issue fails after your change" in told


def test_without_tests_a_change_that_leaves_the_issues_test_failing_is_not_completed(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = committed_repo(tmp_path / "repo", {"README.md": "# demo\n", "greet.py": HI})
    scripted_model.add(
        *issue_test_then_fixes(
            GREET_TEST_REPLY,
            "greet.py",
            '"""Greetings."""\n\n\n' + HI,
            '"""Greets people."""\n\n\n' + HI,
        )
    )
    result = run_on(workspace, scripted_model, GREET_ISSUE)

    assert result.status == "needs_human"
    assert "the fix is unproven" in result.stop_reason
    assert not (workspace / "test_planner_issue_3.py").exists()


def test_an_issue_test_that_imports_what_neither_the_repository_nor_the_issue_has_is_dropped(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """A 1.5B test imported a helper module it made up: it failed on the code before the
    change for that alone, and would have failed on every fix."""
    workspace = committed_repo(tmp_path / "repo", {"README.md": "# demo\n", "greet.py": HI})
    made_up = GREET_TEST_REPLY.replace(
        "from greet import greet\n", "from greet import greet\nfrom helpers import names\n"
    )
    scripted_model.add(*issue_test_then_fixes(made_up, "greet.py", HELLO))
    result = run_on(workspace, scripted_model, GREET_ISSUE)

    last = issue_test_entries(workspace)[-1]
    assert last["status"] == "dropped"
    assert last["reason"] == "it imports `helpers`, which neither the repository nor the issue has"
    assert result.status == "needs_human" and "the fix is unproven" in result.stop_reason


def test_a_whole_file_failure_is_judged_by_what_it_imports() -> None:
    stated = "Add `peek()` to `Stack`."
    missing_helper = "E   ModuleNotFoundError: No module named 'helpers'"
    to_write = "E   ImportError: cannot import name 'peek' from 'stack' (/r/stack.py)"
    made_up = "E   ImportError: cannot import name 'top_item' from 'stack' (/r/stack.py)"
    name_error = "E   NameError: name 'Stak' is not defined"
    workspace = Path("/nonexistent")
    assert "helpers" in collection_problem(missing_helper, stated, workspace)
    assert collection_problem(to_write, stated, workspace) == ""  # the issue asks for it
    assert "`top_item` from `stack`" in collection_problem(made_up, stated, workspace)
    assert "fails before any check: NameError" in collection_problem(name_error, stated, workspace)


def test_a_local_issue_file_without_a_number_names_its_test_from_the_title(
    tmp_path: Path,
) -> None:
    """Issue 57, item 9: `planner run --issue-file ISSUE.md` wrote
    `tests/test_planner_issue_ISSUE.py`; the name comes from a slug of the title instead,
    a numbered issue keeps its number, and an existing file is never taken."""
    from planner.ci.forges.issue_file import load_issue_file
    from planner.verification.reproduction.issue_test import issue_test_path

    (tmp_path / "tests").mkdir()
    source = tmp_path / "ISSUE.md"
    source.write_text("# Parse crashes on empty input (v2)!\n\n`parse('')` raises.\n")
    issue = load_issue_file(source, "octo/calc")
    assert issue.number == "ISSUE"
    path = issue_test_path(tmp_path, issue.number, issue.title)
    assert path == "tests/test_parse_crashes_on_empty_input_v2.py"
    (tmp_path / path).write_text("")
    assert issue_test_path(tmp_path, issue.number, issue.title).endswith("_v2_2.py")
    assert issue_test_path(tmp_path, "12", issue.title) == "tests/test_planner_issue_12.py"
