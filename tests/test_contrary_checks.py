"""A check of the model's issue test that expects what the issue reports as wrong is removed
(planner.verification.reproduction.contrary, issue 59 item 2).

For an issue whose call raised `KeyError` where the user expected a default value, the model's
test held `pytest.raises(KeyError)` around that call beside a check of the default: the
function failed on the bug (so it was kept), and failed again on the right fix, which was
rejected. The pass below uses the scripted model over real HTTP, a real git repository and
real pytest.
"""

from __future__ import annotations

from pathlib import Path

from planner.testing.scripted_server import ScriptedModelServer
from planner.text.issue import IssueContext
from planner.verification.reproduction.contrary import without_contrary_checks
from tests.support.issue_test_replies import issue_test_then_fixes
from tests.test_candidates import module_repo
from tests.test_issue_test import issue_test_entries, run

BUGGY = (
    'VALUES = {"host": "localhost"}\n\n\n'
    "def get(key, default=None):\n"
    '    """The setting `key`, else `default`."""\n'
    "    return VALUES[key]\n"
)
RIGHT = BUGGY.replace("VALUES[key]", "VALUES.get(key, default)")
REPO_TEST = (
    'from settings import get\n\n\ndef test_host():\n    assert get("host") == "localhost"\n'
)
ISSUE = IssueContext(
    repository="octo/calc",
    number="3",
    title="get ignores its default",
    body=(
        '`get("port", 8000)` raises `KeyError` although a default is given. A missing setting\n'
        "should give the default: I expected `8000`.\n"
    ),
)
CONTRARY_REPLY = (
    "```python\nimport pytest\nfrom settings import get\n\n\n"
    "def test_missing_setting():\n"
    "    with pytest.raises(KeyError):\n"
    '        get("port", 8000)\n'
    '    assert get("port", 8000) == 8000\n```\n'
)
"""A test that fails on the bug (its last check) and on the right fix (its first)."""


def settings_repo(root: Path) -> Path:
    return module_repo(root, "settings", BUGGY, REPO_TEST)


def test_raises_of_the_exception_a_session_shows_goes_with_its_function(tmp_path: Path) -> None:
    (tmp_path / "settings.py").write_text(BUGGY, encoding="utf-8")
    body = (
        "```python\n>>> from settings import get\n>>> get('port', 8000)\n"
        "Traceback (most recent call last):\n  ...\nKeyError: 'port'\n```\n\n"
        "I expected `8000`.\n"
    )
    other = "def test_host():\n    assert get('host') == 'localhost'\n"
    test = (
        "import pytest\nfrom settings import get\n\n\n"
        "def test_missing():\n    with pytest.raises(KeyError):\n        get('port', 8000)\n\n\n"
        + other
    )
    left, removed = without_contrary_checks(test, body, tmp_path)
    assert removed == ["test_missing"]
    assert left == "import pytest\nfrom settings import get\n\n\n" + other

    told = body + "A key that is not a setting should raise `KeyError`.\n"
    assert without_contrary_checks(test, told, tmp_path) == (test, [])
    only = "import pytest\n\n\ndef test_missing():\n    with pytest.raises(KeyError):\n"
    only += "        get('port', 8000)\n"
    assert without_contrary_checks(only, body, tmp_path) == (None, ["test_missing"])


def test_a_function_a_traceback_names_may_not_be_expected_to_raise_its_exception(
    tmp_path: Path,
) -> None:
    (tmp_path / "config.py").write_text("def load(data):\n    return data['port']\n")
    body = (
        "Loading an empty config crashes:\n\n```\nTraceback (most recent call last):\n"
        '  File "app.py", line 3, in <module>\n'
        '  File "config.py", line 2, in load\n'
        "    return data['port']\nKeyError: 'port'\n```\n"
    )
    test = (
        "import pytest\nfrom config import load\n\n\n"
        "def test_empty():\n    with pytest.raises((KeyError, TypeError)):\n        load({})\n\n\n"
        "def test_none():\n    with pytest.raises(TypeError):\n        load(None)\n"
    )
    left, removed = without_contrary_checks(test, body, tmp_path)
    assert removed == ["test_empty"]
    assert left is not None and "test_none" in left and "KeyError" not in left


def test_an_equality_with_the_reported_value_goes_and_the_functions_other_checks_stay(
    tmp_path: Path,
) -> None:
    (tmp_path / "words.py").write_text("def word_count(text):\n    return len(text.split(' '))\n")
    body = '`word_count("a  b")` (two spaces) returns 3; any run of spaces separates words.\n'
    test = (
        "from words import word_count\n\n\n"
        "def test_spaces():\n"
        '    text = "a  b"\n'
        "    assert word_count(text) == 2\n"
        '    assert 3 == word_count("a  b")\n'
        '    assert word_count("a b") == 2\n'
    )
    left, removed = without_contrary_checks(test, body, tmp_path)
    assert removed == ["test_spaces"]
    assert left == test.replace('    assert 3 == word_count("a  b")\n', "")
    right = test.replace('3 == word_count("a  b")', '2 == word_count("a  b")')
    assert without_contrary_checks(right, body, tmp_path) == (right, [])


def test_only_the_session_output_paired_with_the_expected_value_is_reported(
    tmp_path: Path,
) -> None:
    (tmp_path / "parts.py").write_text("def split(text):\n    return text.split(',')\n")
    body = (
        "```pycon\n>>> from parts import split\n>>> split('a,b')\n['a', 'b']\n"
        ">>> split('a,,b')\n['a', '', 'b']\n```\n\nI expected `['a', 'b']` for the second.\n"
    )
    shown_right = "def test_plain():\n    assert split('a,b') == ['a', 'b']\n"
    test = (
        "from parts import split\n\n\n"
        "def test_empty_part():\n    assert split('a,,b') == ['a', '', 'b']\n\n\n" + shown_right
    )
    left, removed = without_contrary_checks(test, body, tmp_path)
    assert removed == ["test_empty_part"]
    assert left == "from parts import split\n\n\n" + shown_right


def test_a_right_fix_is_not_rejected_by_a_check_of_the_reported_exception(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = settings_repo(tmp_path / "repo")
    scripted_model.add(*issue_test_then_fixes(CONTRARY_REPLY, "settings.py", RIGHT))
    result = run(workspace, scripted_model, ISSUE)

    assert result.status == "completed", result.stop_reason
    assert len(scripted_model.requests) == 2
    entries = issue_test_entries(workspace)
    assert entries[0]["status"] == "trimmed"
    assert entries[0]["removed"] == ["test_missing_setting"]
    assert "reports as wrong" in entries[0]["reason"]
    assert entries[-1]["status"] == "kept"
    written = (workspace / entries[-1]["path"]).read_text(encoding="utf-8")
    assert "pytest.raises(KeyError)" not in written
    assert 'assert get("port", 8000) == 8000' in written
