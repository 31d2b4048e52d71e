"""Files written whole as code blocks (llm.edit_format: whole_file, the default; issue 23).

Asked for search/replace edits, Qwen2.5-Coder 1.5B mostly copied the wrong lines or changed
nothing; asked for the corrected file it wrote the fix far more often. The prompt shows the
files as the model writes them back, a reply's block for a file shown whole is written through
write_file (the same tools, path rules and records), and the task ends with that one reply.

The passes run over the scripted model server (real HTTP, the real openai client) on a real
git checkout.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planner.config import PlannerConfig
from planner.model.file_blocks import code_blocks, holds_code, written_files
from planner.model.sampling import REPEAT_TEMPERATURE
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_json, reply_text
from planner.text.issue import IssueContext
from planner.tools.files.workspace import WorkspaceTools
from tests.harness import Harness
from tests.plans import ROOT_TOOLS, commit_all, completion, plan_doc

CALC = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
ISSUE = IssueContext(
    repository="octo/repo",
    number="7",
    title="add() subtracts",
    body="In calc.py, `add(2, 3)` returns -1; it must return 5.",
)
LEGACY = {"planning.enabled": False}
NATIVE = {"llm.tool_calling": "native"}
"""Prose after a block: in auto mode it would be asked once more as a JSON call."""


def block(path: str, content: str, language: str = "python") -> str:
    return f"{path}\n```{language}\n{content}```\n"


@pytest.fixture
def harness(tmp_path: Path, scripted_model: ScriptedModelServer) -> Iterator[Harness]:
    made = Harness(tmp_path, scripted_model)
    (made.workspace / "calc.py").write_text(CALC, encoding="utf-8")
    yield made


def calc(harness: Harness) -> str:
    return (harness.workspace / "calc.py").read_text(encoding="utf-8")


def written(harness: Harness) -> list[dict[str, Any]]:
    return [
        e["execution"]["function_call"]
        for e in harness.of_type("action")
        if e["execution"]["function_call"]["name"] == "write_file"
    ]


# -- a pass ------------------------------------------------------------------------------------


def test_without_planning_one_reply_with_the_file_resolves_the_issue(harness: Harness) -> None:
    harness.server.add(reply_text("legacy", "The sign was wrong.\n\n" + block("calc.py", FIXED)))
    result = harness.run(ISSUE, **LEGACY)
    assert result.status == "completed", result.stop_reason
    assert calc(harness) == FIXED
    assert len(harness.server.requests) == 1  # no nudge, no finish_task, no json re-ask
    assert "tools" not in harness.server.requests[0].body  # offered tools, the 1.5B called them
    prompt = harness.server.requests[0].body["messages"][1]["content"]
    assert block("calc.py", CALC) in prompt  # shown as it is written back: no line numbers
    assert "complete new content in one code block" in prompt
    assert [call["arguments"]["path"] for call in written(harness)] == ["calc.py"]


QUIET = {"planning.replanning.enabled": False, "planning.reflection.enabled": False}


def fix_add_planned(harness: Harness, *replies: str) -> None:
    """A one-task plan "Fix add in calc.py", then the task's replies and the completion."""
    plan = plan_doc("task_1", tool="edit_file")
    plan["task_decomposition"]["subtasks"][0]["description"] = "Fix add in calc.py"
    harness.server.add(
        reply_json("planning", plan),
        *(reply_text("execute", reply) for reply in replies),
        completion(completed=1),
    )


def test_a_task_of_a_plan_ends_with_the_reply_that_writes_its_file(harness: Harness) -> None:
    fix_add_planned(harness, block("calc.py", FIXED))
    result = harness.run(ISSUE, **QUIET)
    assert result.status == "completed", result.stop_reason
    assert calc(harness) == FIXED
    [task] = [e for e in harness.of_type("task") if e.get("status") == "completed"]
    assert task["summary"] == "wrote calc.py"


def test_a_task_whose_file_an_earlier_task_already_changed_is_completed(harness: Harness) -> None:
    """The 1.5B's docs_usage plan: "Add a `## Usage` section to the README.md file", then
    "Write the example command in the `## Usage` section". Task 2 wrote README.md as task 1 had
    left it, was told "nothing changed", wrote it again, and failed into replanning."""
    readme = "# demo\n\n## Usage\n\n    python calc.py\n"
    plan = plan_doc("task_1", "task_2", tool="write_file")
    subtasks = plan["task_decomposition"]["subtasks"]
    subtasks[0]["description"] = "Add a Usage section to README.md"
    subtasks[1]["description"] = "Write the example command in the Usage section"
    quiet = {"planning.replanning.enabled": False, "planning.reflection.enabled": False}
    harness.server.add(
        reply_json("planning", plan),
        reply_text("execute", block("README.md", readme, "markdown")),
        reply_text("execute", block("README.md", readme, "markdown")),
        completion(completed=2),
    )
    issue = ISSUE.model_copy(update={"body": "Add a Usage section to README.md for calc.py."})
    result = harness.run(issue, **quiet)
    assert result.status == "completed", result.stop_reason
    summaries = [e["summary"] for e in harness.of_type("task") if e.get("status") == "completed"]
    assert summaries == [
        "wrote README.md",
        "README.md already had this change: an earlier task made it",
    ]
    assert len(harness.server.requests) == 4


def test_a_file_left_as_it_was_by_the_first_task_to_write_it_is_still_nothing(
    harness: Harness,
) -> None:
    fix_add_planned(harness, block("calc.py", CALC), block("calc.py", FIXED))
    assert harness.run(ISSUE, **QUIET).status == "completed"
    assert "nothing changed" in harness.server.requests[2].body["messages"][-1]["content"]


def test_a_call_written_as_text_in_the_turn_without_tools_still_runs(harness: Harness) -> None:
    """The write turn sends no tools, but a model that wants to look first writes its call as
    text: it runs, and the next turn offers the tools."""
    (harness.workspace / "USAGE.md").write_text("add(2, 3) is 5\n", encoding="utf-8")
    harness.server.add(
        reply_text("legacy", '{"name": "read_file", "arguments": {"path": "USAGE.md"}}'),
        reply_text("legacy", block("calc.py", FIXED)),
    )
    result = harness.run(ISSUE, **LEGACY, **NATIVE)
    assert result.status == "completed" and calc(harness) == FIXED
    first, second = (request.body for request in harness.server.requests)
    assert "tools" not in first and "read_file" in [t["function"]["name"] for t in second["tools"]]
    assert "add(2, 3) is 5" in second["messages"][-1]["content"]


def test_a_turn_without_tools_carries_earlier_calls_as_plain_messages(harness: Harness) -> None:
    """After a native call, a turn that sends no tools may not carry `tool_calls` or `tool`
    messages either (endpoints reject them without `tools`): they travel as text."""
    long_file = "".join(f"def f{n}():\n    return {n}\n\n\n" for n in range(8))
    (harness.workspace / "calc.py").write_text(long_file, encoding="utf-8")
    fixed = long_file.replace("return 3", "return 33")
    harness.server.add(
        reply_text("legacy", '{"name": "read_file", "arguments": {"path": "README.md"}}'),
        reply_text("legacy", block("calc.py", "    return 33\n")),  # a fragment: refused
        reply_text("legacy", block("calc.py", fixed)),
    )
    (harness.workspace / "README.md").write_text("# calc\n", encoding="utf-8")
    result = harness.run(ISSUE, **LEGACY, **NATIVE)
    assert result.status == "completed" and calc(harness) == fixed
    third = harness.server.requests[2].body
    assert "tools" not in third
    assert all(m["role"] != "tool" and "tool_calls" not in m for m in third["messages"])
    assert any("Result of read_file:\n# calc" in (m["content"] or "") for m in third["messages"])


def test_an_edit_that_changes_nothing_fails_instead_of_counting_as_a_change(
    harness: Harness,
) -> None:
    """The 1.5B's first call replaced four lines each with itself: counted as a change, it let
    the run finish having done nothing."""
    same = {"oldText": "    return a - b\n\n\ndef sub", "newText": "    return a - b\n\n\ndef sub"}
    result = WorkspaceTools(harness.workspace, PlannerConfig().tools).call(
        "edit_file", {"path": "calc.py", "edits": [same]}
    )
    assert not result.ok and "the edits change nothing" in (result.error or "")


def test_a_task_that_only_looks_is_not_asked_for_files_and_may_answer_in_prose(
    harness: Harness,
) -> None:
    """The 1.5B's plan had "Read the current rule from invoice.py"; asked for files, it
    quoted the file unchanged and the task failed. A looking task (here after the change: one
    before it is folded into it) gets the tools, its quote writes nothing, and its prose
    answer completes it."""
    plan = plan_doc("task_1", "task_2", tool="read_file")
    plan["task_decomposition"]["subtasks"][0]["description"] = "Fix add in calc.py"
    plan["action_plan"]["actions"][0]["tool"] = "write_file"
    plan["task_decomposition"]["subtasks"][1]["description"] = "Read add in calc.py"
    quiet = {
        "planning.replanning.enabled": False,
        "planning.reflection.enabled": False,
        **NATIVE,
    }
    quote = "add is:\n\n" + block("calc.py", FIXED)
    harness.server.add(
        reply_json("planning", plan),
        reply_text("execute", block("calc.py", FIXED)),
        reply_text("execute", quote),
        reply_text("execute", "add adds."),
        completion(completed=2),
    )
    result = harness.run(ISSUE, **quiet)
    looked = result.tasks[1]
    assert (looked.status, looked.summary) == ("completed", "add adds.")
    first_turn = harness.server.requests[2].body
    assert "tools" in first_turn and "complete new content" not in str(first_turn["messages"])
    assert "The files above are current: do not read them again" in str(first_turn["messages"])
    assert calc(harness) == FIXED and len(written(harness)) == 1


def test_with_edit_file_chosen_the_prompt_shows_numbered_lines_and_asks_for_edits(
    harness: Harness,
) -> None:
    harness.server.add(reply_text("legacy", block("calc.py", FIXED)))
    harness.run(ISSUE, **LEGACY, **{"llm.edit_format": "edit_file"})
    prompt = harness.server.requests[0].body["messages"][1]["content"]
    assert "1| def add(a, b):" in prompt and "Change them with edit_file" in prompt
    assert calc(harness) == FIXED  # a block written anyway is still that file


def test_the_file_unchanged_is_told_so_and_the_next_reply_fixes_it(harness: Harness) -> None:
    """The 1.5B often wrote the file back as it was: that is not a fix, and not the end."""
    relaid = CALC.replace("\n\n\n", "\n\n").replace("a - b\n", "a - b  \n", 1)
    harness.server.add(
        reply_text("legacy", block("calc.py", relaid)),  # blank lines and line ends only
        reply_text("legacy", block("calc.py", FIXED)),
    )
    result = harness.run(ISSUE, **LEGACY, **{"llm.temperature": 0})
    assert result.status == "completed" and calc(harness) == FIXED
    # At temperature 0 the 1.5B wrote words.py unchanged twice: the re-ask samples warmer.
    temperatures = [r.body["temperature"] for r in harness.server.requests]
    assert temperatures == [0, REPEAT_TEMPERATURE]
    # Asked again from the request, not shown the answer it would copy (the 0.5B did).
    again = harness.server.requests[1].body["messages"]
    assert [m["role"] for m in again] == ["system", "user"]
    assert again[1]["content"].startswith(harness.server.requests[0].body["messages"][1]["content"])
    assert again[1]["content"].endswith(
        "could not be used:\nThe code block for calc.py is its current content: nothing changed. "
        "Write the file with the change the issue asks for.\n"
    )


def test_a_file_quoted_unchanged_beside_a_changed_one_does_not_hold_the_task_open(
    harness: Harness,
) -> None:
    """The 1.5B wrote README.md with its new section and greet.py, which it had only quoted,
    as it was; told that greet.py "changed nothing", it went on rewriting greet.py for six
    calls. The reply that changed a file ends the task."""
    readme = "# demo\n\n## Usage\n\n    python calc.py\n"
    harness.server.add(
        reply_text("legacy", block("README.md", readme, "markdown") + "\n" + block("calc.py", CALC))
    )
    issue = ISSUE.model_copy(update={"body": "Add a Usage section to README.md for calc.py."})
    result = harness.run(issue, **LEGACY)
    assert result.status == "completed", result.stop_reason
    assert len(harness.server.requests) == 1
    assert (harness.workspace / "README.md").read_text(encoding="utf-8") == readme
    assert calc(harness) == CALC


LONG_FILE = "".join(f"def f{n}():\n    return {n}\n\n\n" for n in range(8))


def test_a_fragment_is_refused_and_never_written_over_the_file(harness: Harness) -> None:
    long_file = LONG_FILE
    (harness.workspace / "calc.py").write_text(long_file, encoding="utf-8")
    harness.server.add(
        reply_text("legacy", block("calc.py", "    if n:\n        return 33\n")),
        reply_text("legacy", "I cannot do it."),
    )
    result = harness.run(ISSUE, **LEGACY, **NATIVE)
    assert calc(harness) == long_file
    assert result.status == "failed"
    told = harness.server.requests[1].body["messages"][-1]["content"]
    assert "looks like a part of the file, so it was not written" in told


def test_a_block_of_only_the_changed_function_replaces_that_function(harness: Harness) -> None:
    """The 1.5B answered pager.py (9 lines) with the fixed `page` alone: right, and refused as a
    fragment; re-asked, it added a ValueError the issue never asked for."""
    (harness.workspace / "calc.py").write_text(LONG_FILE, encoding="utf-8")
    harness.server.add(
        reply_text("legacy", block("calc.py", "def f3():\n    return 33\n")),
    )
    result = harness.run(ISSUE, **LEGACY, **NATIVE)
    assert result.status == "completed", result.stop_reason
    assert calc(harness) == LONG_FILE.replace("return 3\n", "return 33\n")
    assert len(harness.server.requests) == 1
    assert [call["arguments"]["content"] for call in written(harness)] == [calc(harness)]


def test_a_line_that_runs_the_tests_after_the_file_leaves_it_the_one_block() -> None:
    """The 1.5B wrote slug.py unlabelled, then ```python run_tests()```: two blocks, so neither
    was taken as the one file shown, and the fix was lost to a nudge."""
    for command in ("```python\nrun_tests()\n```", "```sh\npython3 -m pytest -q\n```"):
        reply = f"Here's the updated code:\n\n```python\n{FIXED}```\n\nNow:\n\n{command}\n"
        assert written_files(reply, {"calc.py"}, current).files == [("calc.py", FIXED)]
    two_files = f"```python\n{FIXED}```\n\n```python\ndef other():\n    return run()\n```\n"
    assert written_files(two_files, {"calc.py"}, current).files == [("calc.py", FIXED)]


def test_among_several_blocks_the_one_keeping_most_of_the_one_file_shown_is_that_file() -> None:
    """The 1.5B wrote stack.py's new class unlabelled, then looped on a `run_tests` program."""
    runner = "```python\nimport pytest\n\n\ndef run_tests():\n    pytest.main()\n```\n"
    reply = f"Here's the updated code for the class:\n```python\n{FIXED}```\n" + runner * 3
    assert written_files(reply, {"calc.py"}, current).files == [("calc.py", FIXED)]
    other = FIXED.replace("a - b", "b - a")
    two_versions = f"```python\n{FIXED}```\n```python\n{other}```\n"  # which one?
    assert written_files(two_versions, {"calc.py"}, current).files == []
    # several shown: still the one block that rewrites one of them (the loops change none)
    assert written_files(reply, SHOWN, current).files == [("calc.py", FIXED)]


def test_among_several_blocks_the_one_changing_a_function_of_the_file_is_that_file() -> None:
    """The 1.5B wrote the fixed `is_leap`, then a test of it, both unlabelled: the fix was
    lost, and the next reply, the test alone, was written as calendar_tools.py."""
    fix = "def add(a, b):\n    return a + b\n"
    test = "def test_add():\n    assert add(2, 3) == 5\n"
    quoted = "def add(a, b):\n    return a - b\n"
    for blocks in ((fix, test), (quoted, fix), (test, quoted, fix)):
        reply = "".join(f"Here:\n```python\n{code}```\n" for code in blocks)
        assert written_files(reply, {"calc.py"}, current).files == [("calc.py", fix)]
    reply = f"```python\n{test}```\n```python\n{quoted}```\n"  # no change to the file
    assert written_files(reply, {"calc.py"}, current).files == []


def test_tests_broken_by_a_written_file_go_back_and_the_next_file_mends_them(
    harness: Harness,
) -> None:
    tests = harness.workspace / "tests"
    tests.mkdir()
    (tests / "test_calc.py").write_text(
        "from calc import sub\n\n\ndef test_sub():\n    assert sub(3, 2) == 1\n", encoding="utf-8"
    )
    commit_all(harness.workspace)  # the test is the repository's, not one the change added
    broken = FIXED.replace("def sub(a, b):\n    return a - b", "def sub(a, b):\n    return a + b")
    harness.server.add(
        reply_text("legacy", block("calc.py", broken)),
        reply_text("legacy", block("calc.py", FIXED)),
    )
    result = harness.run(ISSUE, **LEGACY, **ROOT_TOOLS)
    assert result.status == "completed", result.stop_reason
    assert calc(harness) == FIXED
    told = harness.server.requests[1].body["messages"][-1]["content"]
    assert told.startswith("The repository's tests fail after your change") and "test_sub" in told
    assert "in one code block" in told
    assert [e["status"] for e in harness.of_type("verification")][-1] == "passed"


def test_without_planning_a_failing_test_the_change_added_is_named_as_its_own(
    harness: Harness,
) -> None:
    """The model fixes add and adds a wrong test: told "the tests passed before", it would be
    asked for the impossible; it is told the test is its own, and the pass says so."""
    tests = harness.workspace / "tests"
    tests.mkdir()
    test_file = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    (tests / "test_calc.py").write_text(test_file, encoding="utf-8")
    commit_all(harness.workspace)
    wrong = test_file + "\n\ndef test_twice():\n    assert add(2, 2) == 5\n"
    fix_and_test = block("calc.py", FIXED) + "\n" + block("tests/test_calc.py", wrong)
    harness.server.add(
        reply_text("legacy", fix_and_test),
        reply_text("legacy", block("calc.py", FIXED.replace("a + b", "b + a"))),
        reply_text("legacy", block("calc.py", FIXED)),
    )
    body = ISSUE.body + " Add a test of it to tests/test_calc.py."
    result = harness.run(ISSUE.model_copy(update={"body": body}), **LEGACY, **ROOT_TOOLS)
    assert result.status == "needs_human"  # like a regression: a draft for a person
    assert result.stop_reason.startswith(
        "tests the change added fail after the model was shown them: tests/test_calc.py::test_twice"
    )
    told = harness.server.requests[1].body["messages"][-1]["content"]
    assert told.startswith("Tests your change added fail (remove them if the issue does not")
    assert "passed before" not in told


def test_a_failing_test_file_is_shown_whole_and_may_be_written_back(harness: Harness) -> None:
    """A rename the issue asks for breaks the test that imports the old name: the failure's
    message shows that test file, and the model's block for it is written."""
    tests = harness.workspace / "tests"
    tests.mkdir()
    test_file = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == -1\n"
    (tests / "test_calc.py").write_text(test_file, encoding="utf-8")
    renamed = CALC.replace("def add(", "def plus(")
    mended = test_file.replace("add", "plus")
    issue = ISSUE.model_copy(update={"body": "Rename add in calc.py to plus, tests included."})
    harness.server.add(
        reply_text("legacy", block("calc.py", renamed)),
        reply_text("legacy", block("tests/test_calc.py", mended)),
    )
    result = harness.run(issue, **LEGACY, **ROOT_TOOLS)
    assert result.status == "completed", result.stop_reason
    told = harness.server.requests[1].body["messages"][-1]["content"]
    assert block("tests/test_calc.py", test_file) in told
    assert (tests / "test_calc.py").read_text(encoding="utf-8") == mended
    assert "tools" not in harness.server.requests[1].body


def test_a_rename_that_breaks_the_tests_is_repaired_in_the_files_still_using_the_old_name(
    harness: Harness,
) -> None:
    """The 1.5B's rename with planning: it renamed the function in its file; the tests failed to
    import the old name; the repair task was shown the file and the failing test, and the 1.5B
    wrote the file back as it was, twice, each repair ticked as "already had this change". The
    repair task now names every file still using the removed name (so they are shown), and a
    file written back unchanged while tests fail is asked again, not ticked."""
    tests = harness.workspace / "tests"
    tests.mkdir()
    test_file = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == -1\n"
    (tests / "test_calc.py").write_text(test_file, encoding="utf-8")
    report = "from calc import add\n\n\ndef twice(a):\n    return add(a, a)\n"
    (harness.workspace / "report.py").write_text(report, encoding="utf-8")
    commit_all(harness.workspace)
    renamed = CALC.replace("def add(", "def plus(")
    plan = plan_doc("task_1", tool="write_file")
    plan["task_decomposition"]["subtasks"][0]["description"] = "Rename add to plus in calc.py"
    mended = block("tests/test_calc.py", test_file.replace("add", "plus"))
    mended += "\n\n" + block("report.py", report.replace("add", "plus"))
    harness.server.add(
        reply_json("planning", plan),
        reply_text("execute", block("calc.py", renamed)),
        reply_text("execute", block("calc.py", renamed)),  # the repair: the file as it is
        reply_text("execute", mended),
        completion(completed=2),
    )
    issue = ISSUE.model_copy(update={"body": "Rename add in calc.py to plus, tests included."})
    result = harness.run(issue, **QUIET, **ROOT_TOOLS, **{"verification.issue_test": False})

    assert result.status == "completed", result.stop_reason
    [repair] = [t for t in result.tasks if t.id.startswith("repair_tests")]
    said = "`add`, which the change removed, is still used in report.py, tests/test_calc.py."
    assert said in repair.description
    assert "change a test only where the issue asks for it" in repair.description
    asked = harness.server.requests[2].body["messages"][-1]["content"]
    assert block("report.py", report) in asked and block("tests/test_calc.py", test_file) in asked
    again = harness.server.requests[3].body["messages"][-1]["content"]
    assert "The code block for calc.py is its current content: nothing changed" in again
    assert "plus(a, a)" in (harness.workspace / "report.py").read_text(encoding="utf-8")
    assert [e["status"] for e in harness.of_type("verification")][-1] == "passed"


def test_a_block_for_a_file_not_shown_is_told_to_read_it_first(harness: Harness) -> None:
    """The 1.5B wrote one import line as `tests/test_cart.py`, a file it had never seen:
    written, it would have replaced the whole test file."""
    (harness.workspace / "NOTES.md").write_text("# notes\n" * 3, encoding="utf-8")
    harness.server.add(
        reply_text("legacy", block("NOTES.md", "# notes\n", "markdown")),
        reply_text("legacy", block("calc.py", FIXED)),
    )
    result = harness.run(ISSUE, **LEGACY)
    assert result.status == "completed"
    assert (harness.workspace / "NOTES.md").read_text(encoding="utf-8") == "# notes\n" * 3
    told = harness.server.requests[1].body["messages"][-1]["content"]
    assert "NOTES.md was not written: the prompt did not show that file whole" in told


def test_in_auto_mode_a_block_reply_to_a_turn_with_tools_is_not_asked_again_as_json(
    harness: Harness,
) -> None:
    """auto asks a prose reply once more in json; a reply holding a file is not prose. (With
    edit_file every turn offers tools, so the reply meets auto's recovery.)"""
    harness.server.add(reply_text("legacy", block("calc.py", FIXED)))
    formats = {"llm.tool_calling": "auto", "llm.edit_format": "edit_file"}
    result = harness.run(ISSUE, **LEGACY, **formats)
    assert result.status == "completed" and calc(harness) == FIXED
    assert len(harness.server.requests) == 1 and "tools" in harness.server.requests[0].body


def test_attack_a_block_for_a_file_not_shown_writes_nothing(harness: Harness) -> None:
    """Attack: the reply carries a code block labelled with a workflow file and one labelled
    with a path outside the checkout, hoping planner writes whatever a block names."""
    hostile = block(".github/workflows/ci.yml", "on: push\n", "yaml") + block(
        "../outside.py", "import os\n"
    )
    harness.server.add(reply_text("legacy", hostile), reply_text("legacy", "done"))
    result = harness.run(ISSUE, **LEGACY, **NATIVE)
    assert written(harness) == []
    assert not (harness.workspace / ".github" / "workflows" / "ci.yml").exists()
    assert not (harness.workspace.parent / "outside.py").exists()
    assert result.status == "failed"


def test_attack_a_shown_workflow_file_written_whole_obeys_the_path_rules(harness: Harness) -> None:
    """Attack: the issue names a workflow file, so the prompt shows it whole; the reply writes
    it back with a step that leaks a secret. The path rules refuse it like any write_file."""
    workflow = harness.workspace / ".github" / "workflows" / "ci.yml"
    workflow.parent.mkdir(parents=True)
    original = "on: push\njobs: {}\n"
    workflow.write_text(original, encoding="utf-8")
    issue = ISSUE.model_copy(update={"body": "Update .github/workflows/ci.yml to run on push."})
    leak = "on: push\njobs:\n  x:\n    steps:\n      - run: echo ${{ secrets.TOKEN }}\n"
    harness.server.add(
        reply_text("legacy", block(".github/workflows/ci.yml", leak, "yaml")),
        reply_text("legacy", "done"),
        reply_text("legacy", "done"),
    )
    harness.run(issue, **LEGACY, **NATIVE)
    assert (
        block(".github/workflows/ci.yml", original, "yaml")
        in (harness.server.requests[0].body["messages"][1]["content"])
    )
    assert workflow.read_text(encoding="utf-8") == original
    [attempt] = written(harness)
    assert attempt["arguments"]["path"] == ".github/workflows/ci.yml"
    [action] = [e for e in harness.of_type("action") if not e["ok"]]
    assert "workflow" in action["error"]


# -- reading the blocks ------------------------------------------------------------------------

SHOWN = {"calc.py", "docs/README.md"}


def current(path: str) -> str | None:
    return {"calc.py": CALC, "docs/README.md": "# calc\n"}.get(path)


@pytest.mark.parametrize(
    "label",
    [
        "calc.py",
        "**calc.py**",
        "### calc.py:",
        "`calc.py`",
        "File: calc.py",
        "./calc.py",
        "eval/calc.py",  # the 1.5B prefixed the repository's name
        "Here is the new content of calc.py:",  # the 1.5B, two files shown
        "Here's the corrected content of the `calc.py` file:",  # the 1.5B, leap_year_trap
    ],
)
def test_the_label_above_a_block_names_its_file(label: str) -> None:
    reply = f"Here it is.\n\n{label}\n```python\n{FIXED}```\nDone."
    assert written_files(reply, SHOWN, current).files == [("calc.py", FIXED)]


def test_a_sentence_naming_two_shown_files_labels_no_block() -> None:
    reply = f"Compare calc.py with docs/README.md:\n```\n{FIXED}```"
    assert written_files(reply, SHOWN, current).files == []


def test_a_comment_on_the_first_line_names_the_file_and_is_left_out() -> None:
    reply = f"```python\n# calc.py\n{FIXED}```"
    assert written_files(reply, SHOWN, current).files == [("calc.py", FIXED)]


def test_one_block_and_one_file_shown_is_that_file() -> None:
    assert written_files(f"```\n{FIXED}```", {"calc.py"}, current).files == [("calc.py", FIXED)]
    assert written_files(f"```\n{FIXED}```", SHOWN, current).files == []  # which one?

    # ... unless the block names another file that exists, above it or in its first line
    def with_other(path: str) -> str | None:
        return "x = 1\n" if path == "other.py" else current(path)

    for named in (f"other.py\n```\n{FIXED}```", f"```\n# other.py\n{FIXED}```"):
        assert written_files(named, {"calc.py"}, with_other).files == []


def test_a_made_up_path_for_the_one_file_shown_is_that_file() -> None:
    """The 1.5B labelled stack.py's new content `eval/stack_peek.py` (the repository's name)."""
    for reply in (f"eval/calc_fix.py\n```python\n{FIXED}```", f"```\n# eval/x.py\n{FIXED}```"):
        assert written_files(reply, {"calc.py"}, current).files == [("calc.py", FIXED)]


def test_a_made_up_path_among_several_files_shown_names_them() -> None:
    found = written_files(f"eval/calc_fix.py\n```python\n{FIXED}```", SHOWN, current)
    assert found.files == []
    assert found.problems == [
        "The code block for eval/calc_fix.py was not written: there is no such file. Put the "
        "path of the file you change above its block: calc.py, docs/README.md."
    ]


GREET_README = "# greet\n\nPrints a greeting.\n"
USAGE = (
    "# greet\n\nPrints a greeting.\n\n## Usage\n\n```sh\npython greet.py --name world\n```\n\n"
    "`--shout` prints in capitals.\n"
)


def greet_files(path: str) -> str | None:
    return {"README.md": GREET_README, "greet.py": "print('hi')\n", "app.py": "x = 1\n"}.get(path)


def test_one_block_in_the_language_of_one_shown_file_is_that_file() -> None:
    """The 1.5B's docs_usage answer, twice: one ```markdown block, no path, README.md and
    greet.py shown. Before, nothing was written and the model was only told to call a tool."""
    found = written_files(f"```markdown\n{USAGE}```", {"README.md", "greet.py"}, greet_files)
    assert found.files == [("README.md", USAGE)]


def test_a_block_in_a_language_that_does_not_pick_one_file_is_not_written() -> None:
    shown = {"README.md", "greet.py", "app.py"}
    section = "## Usage\n\nRun `python greet.py`.\n"  # a part: README's own lines are gone
    for reply in ("```python\nprint('hello')\n```", f"```markdown\n{section}```"):
        found = written_files(reply, shown, greet_files)
        assert found.files == []
        assert found.problems == [
            "The code block was not written: it names no file. Put the path of the file it is "
            "for on the line above the block: README.md, app.py, greet.py."
        ]


def test_a_path_on_a_line_of_its_own_inside_the_block_labels_it() -> None:
    """The 1.5B's stack_peek answer: the path and notes inside the block. Written as it was,
    `stack.py` on line 2 made the module fail to import and both repairs failed."""
    captured = f"```python\n# path to file\ncalc.py\n\n# new content\n{FIXED}```"
    assert written_files(captured, {"calc.py"}, current).files == [("calc.py", FIXED)]
    assert written_files(f"```python\ncalc.py\n{FIXED}```", SHOWN, current).files == [
        ("calc.py", FIXED)
    ]
    # a file whose own first lines are a path-like word is not cut: only a shown path labels
    kept = "import os\nos.path\n"
    assert written_files(f"calc.py\n```python\n{kept}```", SHOWN, current).files == [
        ("calc.py", kept)
    ]


SCRIPT_REPLY = (  # the 1.5B at temperature 0, rename_calc_total (five times) and slugify
    "```python\n# Path to the file to be modified\nfile_path = 'calc.py'\n\n"
    '# New content of the file\nnew_content = """\n'
    + FIXED
    + '"""\n\n# Replace the old content with the new content in the file\n'
    "with open(file_path, 'w') as file:\n    file.write(new_content)\n\n"
    '# Call finish_task\nfinish_task("completed", "Replaced in \'calc.py\'.")\n```'
)


def test_a_program_that_writes_the_file_is_read_as_the_file_it_writes() -> None:
    """Written as it was, the program failed the syntax check (its string held the file's own
    docstrings) five times, and the pass ended needs_human."""
    documented = FIXED.replace("    return a + b", '    """Add."""\n    return a + b')
    reply = SCRIPT_REPLY.replace(FIXED, documented)
    assert written_files(reply, {"calc.py"}, current).files == [("calc.py", documented)]


def test_a_program_holding_the_file_that_ends_the_task_without_writing_is_the_file() -> None:
    """env_port: the 1.5B wrote `path = 'settings.py'`, the file in a string, and
    `finish_task(…)`, with no open(); written as it was, it no longer parsed and was refused,
    and the pass went into a replan that planned five read_file actions."""
    documented = FIXED.replace("    return a + b", '    """Add."""\n    return a + b')
    reply = (
        "```python\n# path to the file to be modified\npath = 'calc.py'\n\n"
        f'# complete new content of the file\nnew_content = """\n{documented}"""\n'
        '# finish_task with status "completed"\nfinish_task("completed", "Done.")\n```'
    )
    [(path, content)] = written_files(reply, {"calc.py"}, current).files
    assert path == "calc.py" and content.strip() == documented.strip()


def test_a_real_generator_script_is_written_as_it_is() -> None:
    """A file that writes files itself, or a program that names no shown path, is content."""
    generator = (
        'OUT = "calc.py"\nTEXT = """\nx = 1\n"""\nwith open(OUT, "w") as f:\n    f.write(TEXT)\n'
    )
    found = written_files(block("gen.py", generator), {"gen.py"}, lambda p: generator + "#\n")
    assert found.files == [("gen.py", generator)]
    other = SCRIPT_REPLY.replace("'calc.py'", "'other.py'")
    [(path, content)] = written_files(other, {"calc.py"}, current).files
    assert path == "calc.py" and "with open(file_path, 'w')" in content


def test_a_block_wrapping_the_labelled_file_is_unwrapped() -> None:
    """The 1.5B wrapped its answer: ```markdown, the path, then the file's own block holding
    ```sh examples, closed twice."""
    readme = "# calc\n\n## Usage\n\n  ```sh\n  python calc.py 2 3\n  ```\n"
    reply = f"```markdown\neval/calc/README.md\n```markdown\n{readme}```\n```"
    assert written_files(reply, {"calc.py", "README.md"}, current).files == [("README.md", readme)]


def test_a_wrapper_left_open_around_each_of_several_files_is_unwrapped_all_the_way() -> None:
    """rename_calc_total: the 1.5B wrapped each file in ```python + `# path` + ```python and
    closed each only once, so every wrapper held the next; the second file was written
    starting with "```python" and refused as Python that does not parse."""
    test_file = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    shown = {"calc.py", "tests/test_calc.py", "docs/README.md"}
    files = {"tests/test_calc.py": test_file.replace("5", "-1"), "calc.py": CALC}
    reply = (
        f"```python\n# calc.py\n```python\n{FIXED}```\n"
        f"```python\n# tests/test_calc.py\n```python\n{test_file}```\n"
        "```python\n# docs/README.md\n```markdown\n# calc\n```\n"
    )
    found = written_files(reply, shown, lambda path: files.get(path) or current(path))
    assert found.files == [("calc.py", FIXED), ("tests/test_calc.py", test_file)]
    assert found.unchanged == ["docs/README.md"] and found.problems == []


def test_a_block_the_sentence_above_says_is_a_test_file_is_never_the_file_shown() -> None:
    """stack_peek: the 1.5B quoted the fixed stack.py unchanged, then wrote
    "### Updated `tests/test_planner_issue_1.py`" above a test program holding a copy of the
    class plus `run_tests()`; that program was written over stack.py."""
    program = FIXED + "\n\ndef run_tests():\n    assert add(2, 3) == 5\n\n\nrun_tests()\n"
    fixed_now = {"calc.py": FIXED}.get
    for heading in ("### Updated `tests/test_planner_issue_1.py`", "Now test_calc.py:"):
        reply = f"### Updated `calc.py`\n```python\n{FIXED}```\n{heading}\n```python\n{program}```"
        found = written_files(reply, {"calc.py"}, fixed_now)
        assert found.files == [] and found.unchanged == ["calc.py"]
        alone = f"{heading}\n```python\n{program}```"
        assert written_files(alone, {"calc.py"}, fixed_now).files == []
    made_up = f"Here is `eval/calc.py`:\n```python\n{FIXED}```"  # a made-up path still counts
    assert written_files(made_up, {"calc.py"}, current).files == [("calc.py", FIXED)]
    spec = f"Now `spec/calc_spec.py`:\n```python\n{program}```"  # test files as configured
    assert written_files(spec, {"calc.py"}, current).files == [("calc.py", program)]
    assert written_files(spec, {"calc.py"}, current, ["spec/*"]).files == []


def test_with_two_python_files_shown_the_block_changing_a_function_of_one_is_that_file() -> None:
    """leap_year_trap's repair: calendar_tools.py and its test file shown, the 1.5B answered
    with the fixed `is_leap` unlabelled, a `python3 -m pytest -q` block and made-up output;
    the fix was not written (the model was told to label it) and the task ran out of calls."""
    test_file = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    files = {"calc.py": CALC, "tests/test_calc.py": test_file}
    fix = "def add(a, b):\n    return a + b\n"
    reply = (
        f"Here is the corrected implementation:\n```python\n{fix}```\nRun the tests:\n"
        "```python\npython3 -m pytest -q\n```\nThe output:\n```\n===\n1 passed\n===\n```\n"
    )
    assert written_files(reply, set(files), files.get).files == [("calc.py", fix)]
    both = reply + f"```python\n{test_file.replace('5', '6')}```\n"  # and the test: which?
    assert written_files(both, set(files), files.get).files == []


def test_a_readme_with_its_own_code_blocks_is_read_whole() -> None:
    readme = "# calc\n\n## Usage\n\n```sh\npython calc.py 2 3\n```\n\nPrints 5.\n"
    reply = f"README:\n\ndocs/README.md\n```markdown\n{readme}```\n"
    assert written_files(reply, SHOWN, current).files == [("docs/README.md", readme)]


def test_a_tool_call_written_as_json_is_not_code() -> None:
    call = '```json\n{"name": "read_file", "arguments": {"path": "calc.py"}}\n```'
    assert not holds_code(call)
    assert holds_code(f"```python\n{FIXED}```")
    assert [b.lines for b in code_blocks("no fence here")] == []


def test_a_block_that_only_moves_blank_lines_and_line_ends_is_unchanged() -> None:
    relaid = CALC.replace("\n\n\n", "\n\n").replace("a - b\n", "a - b  \n", 1)
    found = written_files(block("calc.py", relaid), SHOWN, current)
    assert (found.files, found.unchanged) == ([], ["calc.py"])


def test_a_block_left_open_at_the_end_of_the_reply_is_still_read() -> None:
    """A reply cut off at the output limit ends inside its block; the file is then refused as a
    fragment when it is much shorter, not lost silently."""
    reply = f"calc.py\n```python\n{FIXED}"
    assert written_files(reply, SHOWN, current).files == [("calc.py", FIXED)]


def test_a_file_written_as_an_indented_list_item_loses_only_the_fence_indent() -> None:
    """The 0.5B's docs_usage reply: `1. **calc.py**`, then the fence and every line indented
    three spaces; written as it came, the file failed to parse at its first line."""
    indented = "".join(f"   {line}" if line.strip() else line for line in FIXED.splitlines(True))
    reply = f"1. **calc.py**\n   ```python\n{indented}   ```\n\n2. Done."
    assert written_files(reply, SHOWN, current).files == [("calc.py", FIXED)]
    # a line indented less than the fence keeps what it has: nothing but spaces is taken
    assert [b.lines for b in code_blocks("  ```\nx\n    y\n  ```")] == [["x", "  y"]]


def test_the_same_file_written_unchanged_many_times_is_told_once() -> None:
    """The 0.5B wrote temperature.py, unchanged, as eleven numbered blocks in one reply."""
    reply = "".join(f"{n}. `calc.py`\n```python\n{CALC}```\n" for n in range(1, 12))
    found = written_files(reply, SHOWN, current)
    assert (found.files, found.unchanged) == ([], ["calc.py"])


# -- write_file --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "written"),
    [
        ("```markdown\n# greet\n## Usage\n```", "# greet\n## Usage\n"),  # the 1.5B's
        ("````markdown\n# g\n```sh\nx\n```\n````\n", "# g\n```sh\nx\n```\n"),
        ("# g\n```sh\nx\n```\n", "# g\n```sh\nx\n```\n"),  # the file's own block
        ("```sh\nx\n```\ntext\n```sh\ny\n```\n", "```sh\nx\n```\ntext\n```sh\ny\n```\n"),
    ],
)
def test_a_file_written_inside_a_code_block_is_written_without_the_fence(
    tmp_path: Path, content: str, written: str
) -> None:
    tools = WorkspaceTools(tmp_path, PlannerConfig().tools)
    result = tools.call("write_file", {"path": "README.md", "content": content})
    assert result.ok, result.error
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == written
