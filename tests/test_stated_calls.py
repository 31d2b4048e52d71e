"""Calls the issue's prose states a result of, as checks of the issue's test
(planner.verification.reproduction.stated_calls, issue 46).

For "`word_count("a  b")` (two spaces) returns 3 and `word_count("")` returns 1" the 1.5B
model's issue test checked only blank texts; its first fix (blank texts return 0) passed that
test and the repository's, and the pass ended `completed` with `"a  b"` still counted as 3.
The passes below use the scripted model over real HTTP, a real git repository and real pytest.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from planner.testing.scripted_server import ScriptedModelServer
from planner.text.issue import IssueContext
from planner.verification.reproduction.stated_calls import (
    StatedCall,
    stated_calls,
    with_stated_calls,
)
from tests.support.issue_test_replies import issue_test_then_fixes
from tests.test_candidates import module_repo
from tests.test_issue_test import issue_test_entries, run

BUGGY = (
    'def word_count(text: str) -> int:\n    """How many words."""\n'
    '    return len(text.split(" "))\n'
)
BLANK_ONLY = BUGGY.replace("    return", "    if not text.strip():\n        return 0\n    return")
RIGHT = BUGGY.replace('text.split(" ")', "text.split()")
REPO_TEST = (
    'from words import word_count\n\n\ndef test_two() -> None:\n    assert word_count("a b") == 2\n'
)
ISSUE = IssueContext(
    repository="octo/calc",
    number="3",
    title="word_count counts empty words",
    body=(
        '`word_count("a  b")` (two spaces) returns 3 and `word_count("")` returns 1. Any run\n'
        "of whitespace (spaces, tabs, newlines) separates words; an empty or blank text has 0\n"
        "words.\n"
    ),
)
BLANK_TEST_REPLY = (
    "```python\nfrom words import word_count\n\n\n"
    "def test_blank() -> None:\n"
    '    assert word_count("") == 0\n'
    '    assert word_count("\\n\\n\\n") == 0\n'
    '    assert word_count("\\t\\t\\t") == 0\n```\n'
)
"""The 1.5B's test of the issue: blank texts only."""


def words_repo(root: Path) -> Path:
    return module_repo(root, "words", BUGGY, REPO_TEST)


def pytest_passes(folder: Path, test: str) -> bool:
    (folder / "test_issue_stated.py").write_text(test, encoding="utf-8")
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_issue_stated.py"]
    done = subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=120)
    return done.returncode == 0


# -- what is read from the issue -------------------------------------------------------------


def test_the_calls_an_issue_reports_with_their_results_are_read_in_order(tmp_path: Path) -> None:
    (tmp_path / "words.py").write_text(BUGGY, encoding="utf-8")
    assert stated_calls(ISSUE.body, tmp_path) == [
        StatedCall('word_count("a  b")', "3", expected=False),
        StatedCall('word_count("")', "1", expected=False),
    ]
    raised = '`word_count("x")` raises `ValueError` instead of returning 1.'
    assert stated_calls(raised, tmp_path) == [
        StatedCall('word_count("x")', "ValueError", expected=False, raises=True),
        StatedCall('word_count("x")', "1", expected=True),
    ]
    should = "`word_count(' a ')` should return `1`; it gives `3`."
    assert stated_calls(should, tmp_path) == [StatedCall("word_count(' a ')", "1", expected=True)]


def test_results_the_issue_calls_right_or_holds_anyway_are_not_checks(tmp_path: Path) -> None:
    (tmp_path / "words.py").write_text(BUGGY, encoding="utf-8")
    for body in (
        '`word_count("a b")` returns 2, which is right.',
        '`word_count("a b")` correctly returns 2, but blank texts are wrong.',
        '`word_count("a b")` always returns 2 and should keep doing so.',
        '`word_count("a b")` does not return 3.',
        # the value the issue expects, shown as what another call gives
        'I expected `2`, as for a plain pair (`word_count("a b")` gives `2`).',
        # not a value, not the repository's code, not literal arguments
        '`word_count("a  b")` returns the wrong count.',
        '`len("a  b")` returns 4.',
        "`word_count(text)` returns 3.",
        '`word_count("a", *rest)` returns 3.',
    ):
        assert stated_calls(body, tmp_path) == [], body


def test_checks_fail_on_the_reported_bug_and_pass_on_the_fix(tmp_path: Path) -> None:
    (tmp_path / "words.py").write_text(BUGGY, encoding="utf-8")
    test = with_stated_calls(None, ISSUE.body + ' `word_count("a")` should return 1.', tmp_path)
    assert test is not None
    assert "from words import word_count" in test
    assert 'assert (word_count("a  b")) != 3' in test
    assert not pytest_passes(tmp_path, test)
    (tmp_path / "words.py").write_text(RIGHT, encoding="utf-8")
    assert pytest_passes(tmp_path, test)


def test_reported_checks_alone_make_no_test_and_the_models_test_comes_first(
    tmp_path: Path,
) -> None:
    (tmp_path / "words.py").write_text(BUGGY, encoding="utf-8")
    assert with_stated_calls(None, ISSUE.body, tmp_path) is None
    own = 'from words import word_count\n\n\ndef test_a():\n    assert word_count("a") == 1\n'
    # the model's test may expect the value the issue reports: the stated one is checked too
    wrong = own.replace("== 1", "== 3")
    body = '`word_count("a")` should return `1`.'
    assert with_stated_calls(wrong, body, tmp_path) == (
        wrong + '\n\ndef test_issue_states_1():\n    assert (word_count("a")) == 1\n'
    )
    raised = '`word_count("b")` raises `KeyError`.'
    added = with_stated_calls(own, raised, tmp_path)
    assert added is not None and added.startswith(own.rstrip())
    assert "except KeyError as error" in added


def test_attack_a_stated_call_of_code_outside_the_repository_is_never_run(tmp_path: Path) -> None:
    """The issue is anyone's text: a call it states must not become code the job runs unless it
    calls the repository's own code with plain values."""
    (tmp_path / "words.py").write_text(BUGGY, encoding="utf-8")
    marker = tmp_path / "pwned"
    for call in (
        f'subprocess.run("touch {marker}", shell=True)',
        f'__import__("os").system("touch {marker}")',
        f'os.system("touch {marker}")',
        f"eval(\"open('{marker}', 'w')\")",
        f'word_count(__import__("os").system("touch {marker}"))',
    ):
        body = f"`{call}` returns 0 instead of returning 1."
        assert stated_calls(body, tmp_path) == [], call
        test = with_stated_calls("def test_a():\n    assert True\n", body, tmp_path)
        assert test == "def test_a():\n    assert True\n"
    assert not marker.exists()


# -- whole passes ----------------------------------------------------------------------------


def test_a_fix_for_blank_texts_only_is_not_proven_by_a_test_of_blank_texts(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """The model's test checks blank texts; the issue's `word_count("a  b")` returns 3 is
    checked beside it, so the blank-only fix goes back and the right one completes."""
    workspace = words_repo(tmp_path / "repo")
    scripted_model.add(*issue_test_then_fixes(BLANK_TEST_REPLY, "words.py", BLANK_ONLY, RIGHT))
    result = run(workspace, scripted_model, ISSUE)

    assert result.status == "completed", result.stop_reason
    assert len(scripted_model.requests) == 3
    repair = str(scripted_model.requests[2].body["messages"][-1]["content"])
    assert 'word_count("a  b")' in repair and "test_issue_reported_1" in repair
    assert (workspace / "words.py").read_text(encoding="utf-8") == RIGHT
    kept = issue_test_entries(workspace)
    assert kept[-1]["status"] == "kept"
    (path,) = {entry["path"] for entry in kept}
    written = (workspace / path).read_text(encoding="utf-8")
    assert "def test_blank" in written and 'assert (word_count("a  b")) != 3' in written


def test_a_model_test_that_passes_before_the_change_is_not_saved_by_reported_checks(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """The model asserts the wrong value the issue reports (it passes on the bug): what is left,
    the reported checks, would pass any change of the count, so the test is dropped and the
    fix is not called proven."""
    workspace = words_repo(tmp_path / "repo")
    wrong_way = BLANK_TEST_REPLY.replace('word_count("") == 0', 'word_count("a  b") == 3')
    wrong_way = wrong_way.replace("== 0", "== 1")
    scripted_model.add(*issue_test_then_fixes(wrong_way, "words.py", RIGHT))
    result = run(workspace, scripted_model, ISSUE)

    last = issue_test_entries(workspace)[-1]
    assert last["status"] == "dropped"
    assert "do not show the right result" in last["reason"]
    assert result.status == "needs_human"
    assert result.stop_reason.startswith("the fix is unproven")


def test_a_reply_without_a_test_leaves_the_result_the_issue_expects_as_the_test(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = words_repo(tmp_path / "repo")
    issue = ISSUE.model_copy(update={"body": '`word_count("a  b")` returns 3 instead of 2.\n'})
    scripted_model.add(
        *issue_test_then_fixes(
            "Here is how I would test it: call the function.", "words.py", BLANK_ONLY, RIGHT
        )
    )
    result = run(workspace, scripted_model, issue)

    assert result.status == "completed", result.stop_reason
    first = issue_test_entries(workspace)[0]
    assert (first["status"], first["source"]) == ("active", "issue text")
    assert 'assert (word_count("a  b")) == 2' in first["content"]
    assert issue_test_entries(workspace)[-1]["status"] == "kept"
