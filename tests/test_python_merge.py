"""A Python file rewritten whole keeps what the model left out by accident (issue 23).

Captured from Qwen2.5-Coder 1.5B at temperature 0, planning off: asked to add `median` to a
stats.py that has `mean`, it wrote stats.py back with `median` only, and every test importing
`mean` failed; each repair reply wrote the same again. Asked to read APP_PORT, it wrote
`os.getenv(...)` without `import os`. The write puts back what the new text uses or what another
file imports, and says so; a rename the issue asks for is left a rename.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planner.config import PlannerConfig
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_text
from planner.text.issue import IssueContext
from planner.tools.files.workspace import WorkspaceTools
from tests.harness import Harness
from tests.plans import ROOT_TOOLS

MEAN = '''def mean(values: list[float]) -> float:
    """The arithmetic mean of `values`."""
    if not values:
        raise ValueError("mean of no values")
    return sum(values) / len(values)
'''
CAPTURED_MEDIAN = '''def median(values: list[float]) -> float:
    """The arithmetic mean of `values`."""
    if not values:
        raise ValueError("mean of no values")
    sorted_values = sorted(values)
    n = len(sorted_values)
    if n % 2 == 1:
        return sorted_values[n // 2]
    else:
        return (sorted_values[n // 2 - 1] + sorted_values[n // 2]) / 2
'''
TEST_MEAN = (
    "from stats import mean\n\n\ndef test_mean() -> None:\n    assert mean([1, 2, 3]) == 2\n"
)
SETTINGS = '''DEFAULT_PORT = 8000


def port() -> int:
    """The TCP port the service listens on."""
    return DEFAULT_PORT
'''
CAPTURED_PORT = '''DEFAULT_PORT = 8000


def port() -> int:
    """The TCP port the service listens on."""
    return int(os.getenv('APP_PORT', DEFAULT_PORT))
'''


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / "stats.py").write_text(MEAN, encoding="utf-8")
    (tmp_path / "tests" / "test_stats.py").write_text(TEST_MEAN, encoding="utf-8")
    return tmp_path


def write(root: Path, path: str, content: str, issue: str = "", **tools: Any) -> str:
    result = WorkspaceTools(root, PlannerConfig().tools, issue_text=issue, **tools).call(
        "write_file", {"path": path, "content": content}
    )
    assert result.ok, result.error
    return result.content


def pytest_passes(root: Path) -> bool:
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=root,
        capture_output=True,
        check=False,
    )
    return ran.returncode == 0


def test_a_definition_another_file_imports_is_kept_before_the_new_one(repo: Path) -> None:
    said = write(repo, "stats.py", CAPTURED_MEDIAN)
    assert (repo / "stats.py").read_text(encoding="utf-8") == MEAN + "\n\n" + CAPTURED_MEDIAN
    assert "kept `mean`: tests/test_stats.py uses it" in said
    assert pytest_passes(repo)


def test_a_definition_nothing_imports_may_be_dropped_when_the_issue_names_it(repo: Path) -> None:
    (repo / "tests" / "test_stats.py").write_text("def test_nothing() -> None:\n    pass\n")
    said = write(repo, "stats.py", CAPTURED_MEDIAN, issue="Replace stats.mean with a median.")
    assert (repo / "stats.py").read_text(encoding="utf-8") == CAPTURED_MEDIAN
    assert "put back" not in said


def test_a_definition_imported_over_several_lines_is_kept(repo: Path) -> None:
    # The issue names `mean`, so only an importer keeps it: here one whose import goes on over
    # several lines, which a line-by-line search for the name next to `import` does not see.
    test = TEST_MEAN.replace("from stats import mean", "from stats import (\n    mean,\n)")
    assert test != TEST_MEAN
    (repo / "tests" / "test_stats.py").write_text(test, encoding="utf-8")
    said = write(repo, "stats.py", CAPTURED_MEDIAN, issue="Replace stats.mean with a median.")
    assert "kept `mean`: tests/test_stats.py uses it" in said
    assert pytest_passes(repo)


TEXTUTIL = (
    "def pad(text, width):\n    return text.ljust(width)\n\n\n"
    "def truncate(text, width):\n    raise NotImplementedError\n\n\n"
    "def column(rows, width):\n    return [pad(truncate(r, width), width) for r in rows]\n\n\n"
    "def _clip(text):\n    return text\n"
)
IMPLEMENTED = (
    "def pad(text, width):\n    return text.ljust(width)\n\n\n"
    "def truncate(text, width):\n"
    "    return text if len(text) <= width else text[: width - 1] + '…'\n"
)


def test_a_public_definition_the_issue_does_not_name_is_kept(tmp_path: Path) -> None:
    """The 1.5B, asked to implement the stub `truncate`, wrote textutil.py back without
    `column`: the repository's tests did not use it, so the pass completed with the module's
    interface broken. A private helper may go."""
    (tmp_path / "textutil.py").write_text(TEXTUTIL, encoding="utf-8")
    said = write(tmp_path, "textutil.py", IMPLEMENTED, issue="Implement textutil.truncate")
    assert "kept `column`: the issue does not ask to remove it" in said
    text = (tmp_path / "textutil.py").read_text(encoding="utf-8")
    assert "def column(rows, width):" in text and "text[: width - 1]" in text
    assert "_clip" not in text


def test_a_test_file_written_whole_may_drop_its_tests(tmp_path: Path) -> None:
    """A test the change added and then removed is not put back (the test files a change
    edits are named to the reviewers instead)."""
    (tmp_path / "tests").mkdir()
    tests = "def test_a():\n    assert True\n\n\ndef test_b():\n    assert False\n"
    (tmp_path / "tests" / "test_a.py").write_text(tests, encoding="utf-8")
    write(tmp_path, "tests/test_a.py", "def test_a():\n    assert True\n")
    assert "test_b" not in (tmp_path / "tests" / "test_a.py").read_text(encoding="utf-8")


def test_the_test_files_are_those_verification_test_paths_names(tmp_path: Path) -> None:
    """A repository whose tests live in `checks/` says so in verification.test_paths."""
    (tmp_path / "checks").mkdir()
    tests = "def check_a():\n    assert True\n\n\ndef check_b():\n    assert False\n"
    (tmp_path / "checks" / "run.py").write_text(tests, encoding="utf-8")
    write(tmp_path, "checks/run.py", "def check_a():\n    assert True\n", test_paths=["checks/*"])
    assert "check_b" not in (tmp_path / "checks" / "run.py").read_text(encoding="utf-8")
    said = write(tmp_path, "checks/run.py", "def check_c():\n    pass\n")  # default test_paths
    assert "kept `check_a`" in said


def test_a_rename_the_issue_asks_for_stays_a_rename(repo: Path) -> None:
    """The same body under a new name is a rename, even while tests still import the old one
    (the model changes them next)."""
    renamed = MEAN.replace("def mean(", "def average(")
    write(repo, "stats.py", renamed)
    assert (repo / "stats.py").read_text(encoding="utf-8") == renamed


def test_an_edit_renaming_a_function_its_file_still_calls_is_left_a_rename(tmp_path: Path) -> None:
    """The callers are the next edits' to change; putting the old function back would leave
    the alias the issue forbids."""
    text = "def calc_total(x):\n    return x * 2\n\n\ndef report(x):\n    return calc_total(x)\n"
    (tmp_path / "cart.py").write_text(text, encoding="utf-8")
    edit = {"oldText": "def calc_total(x):", "newText": "def compute_total(x):"}
    result = WorkspaceTools(tmp_path, PlannerConfig().tools).call(
        "edit_file", {"path": "cart.py", "edits": [edit]}
    )
    assert result.ok and "put back" not in result.content
    assert "def calc_total" not in (tmp_path / "cart.py").read_text(encoding="utf-8")


def test_an_attribute_use_in_another_file_counts_as_an_import(repo: Path) -> None:
    (repo / "tests" / "test_stats.py").write_text(
        "import stats\n\n\ndef test_mean() -> None:\n    assert stats.mean([2]) == 2\n"
    )
    said = write(repo, "stats.py", CAPTURED_MEDIAN)
    assert "kept `mean`" in said and pytest_passes(repo)


def test_a_standard_module_used_but_not_imported_is_imported(tmp_path: Path) -> None:
    (tmp_path / "settings.py").write_text(SETTINGS, encoding="utf-8")
    said = write(tmp_path, "settings.py", CAPTURED_PORT)
    assert (tmp_path / "settings.py").read_text(encoding="utf-8") == "import os\n\n" + CAPTURED_PORT
    assert "added `import os`" in said


def test_a_constant_and_an_import_the_new_text_still_uses_are_kept(tmp_path: Path) -> None:
    before = "from decimal import Decimal\n\nCENT = Decimal('0.01')\n\n\ndef f(x):\n    return x\n"
    after = "def f(x):\n    return Decimal(x).quantize(CENT)\n"
    (tmp_path / "money.py").write_text(before, encoding="utf-8")
    said = write(tmp_path, "money.py", after)
    written = (tmp_path / "money.py").read_text(encoding="utf-8")
    assert written == "from decimal import Decimal\n\nCENT = Decimal('0.01')\n\n\n" + after
    assert "kept `Decimal`" in said and "kept `CENT`" in said


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("x = os.environ\n", "x = os.environ\ny = 1\n"),  # already relied on a name it never bound
        ("def f():\n    return 1\n", "def f(:\n"),  # does not parse: the syntax check answers
        (
            "def f():\n    return g()\n\n\ndef g():\n    return 1\n",
            "from other import *\n\n\ndef f():\n    return g()\n",
        ),
    ],
    ids=["unbound-before", "syntax-error", "star-import"],
)
def test_what_cannot_be_known_is_left_as_written(tmp_path: Path, before: str, after: str) -> None:
    (tmp_path / "m.py").write_text(before, encoding="utf-8")
    result = WorkspaceTools(tmp_path, PlannerConfig().tools).call(
        "write_file", {"path": "m.py", "content": after}
    )
    if result.ok:
        assert (tmp_path / "m.py").read_text(encoding="utf-8") == after
    else:
        assert "no longer parses" in (result.error or "")


def test_an_edit_that_uses_a_standard_module_gets_its_import(tmp_path: Path) -> None:
    (tmp_path / "settings.py").write_text(SETTINGS, encoding="utf-8")
    result = WorkspaceTools(tmp_path, PlannerConfig().tools).call(
        "edit_file",
        {
            "path": "settings.py",
            "edits": [
                {
                    "oldText": "    return DEFAULT_PORT",
                    "newText": "    return int(os.getenv('APP_PORT', DEFAULT_PORT))",
                }
            ],
        },
    )
    assert result.ok and "added `import os`" in result.content
    assert (tmp_path / "settings.py").read_text(encoding="utf-8").startswith("import os\n\n")


# -- a pass ------------------------------------------------------------------------------------

ISSUE = IssueContext(
    repository="octo/repo",
    number="7",
    title="Add median() to stats",
    body="stats.py has `mean`. Add `median(values)`: the middle value of the sorted values.",
)


@pytest.fixture
def harness(tmp_path: Path, scripted_model: ScriptedModelServer) -> Iterator[Harness]:
    made = Harness(tmp_path, scripted_model)
    (made.workspace / "tests").mkdir()
    (made.workspace / "stats.py").write_text(MEAN, encoding="utf-8")
    (made.workspace / "tests" / "test_stats.py").write_text(TEST_MEAN, encoding="utf-8")
    yield made


def test_the_captured_reply_resolves_the_issue_in_one_call(harness: Harness) -> None:
    """Before, the tests broke, went back to the model three times and the pass failed."""
    harness.server.add(reply_text("legacy", f"stats.py\n```python\n{CAPTURED_MEDIAN}```\n"))
    result = harness.run(ISSUE, **{"planning.enabled": False}, **ROOT_TOOLS)
    assert result.status == "completed", result.stop_reason
    assert len(harness.server.requests) == 1
    assert [e["status"] for e in harness.of_type("verification")][-1] == "passed"
    text = (harness.workspace / "stats.py").read_text(encoding="utf-8")
    assert "def mean(" in text and "def median(" in text


def test_an_edit_that_deletes_what_another_module_imports_gets_it_back_and_says_so(
    tmp_path: Path,
) -> None:
    """A released package broken by one edit: the 1.5B replaced a constant other modules
    import with an unrelated function, and the pass reported `completed`. Whole-file writes
    kept such definitions; edit_file, with the same check, does too, and says so."""
    (tmp_path / "consts.py").write_text(
        "TIMEOUT = 30\n\n\ndef retries() -> int:\n    return 3\n", encoding="utf-8"
    )
    (tmp_path / "client.py").write_text(
        "from consts import TIMEOUT, retries\n\nLIMIT = TIMEOUT * retries()\n", encoding="utf-8"
    )
    tools = WorkspaceTools(tmp_path, PlannerConfig().tools)
    swap = {"oldText": "TIMEOUT = 30\n", "newText": "def scaled(x: int) -> int:\n    return x\n"}
    drop = {"oldText": "def retries() -> int:\n    return 3\n", "newText": ""}
    said = [
        tools.call("edit_file", {"path": "consts.py", "edits": [edit]}) for edit in (swap, drop)
    ]

    assert all(result.ok for result in said)
    assert "kept `TIMEOUT`: client.py uses it" in said[0].content
    assert "kept `retries`: client.py uses it" in said[1].content
    ran = subprocess.run([sys.executable, "client.py"], cwd=tmp_path, capture_output=True)
    assert ran.returncode == 0, ran.stderr
    text = (tmp_path / "consts.py").read_text(encoding="utf-8")
    assert "def scaled" in text  # the edit itself stays
