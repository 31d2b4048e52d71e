"""Plans a small model makes are folded to the tasks that change something (issue 23).

Qwen2.5-Coder 1.5B planned "Read stack.py", "Identify where peek() goes", "Write peek()",
"Write is_empty()", "Test them" for a two-method change. Every task is model calls and a judge;
the read task failed (it read lines past the end of a 13-line file) and sent the plan into
replanning before anything was written. A task is shown the files it is about and the tests run
after every change, so looking tasks are folded into the change, and with whole-file edits two
changes to the same files are one reply.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from planner.plan.documents import Plan, PlanRules
from planner.plan.repair import repair_plan
from planner.plan.task_guard import changes_in_plan, forced_change, looks_in_plan
from planner.replanning.execution.executor import KeepRules, RevisedPlanReply, TasksReply
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_json, reply_text
from planner.text.issue import IssueContext
from tests.harness import Harness
from tests.plans import ROOT_TOOLS, completion
from tests.support.issue_test_replies import block

TOOLS = {name: name for name in ("read_file", "write_file", "edit_file", "run_command")}
WITH_TESTS = {**TOOLS, "run_tests": "run_tests"}
STACK = "class Stack:\n    def __init__(self):\n        self._items = []\n"
DONE = STACK + "\n    def peek(self):\n        return self._items[-1]\n"
ISSUE = IssueContext(
    repository="octo/repo",
    number="7",
    title="Stack: add peek() and is_empty()",
    body="The Stack class in stack.py needs peek() and is_empty().",
)


def plan_of(*tasks: tuple[str, str, str], deps: dict[str, list[str]] | None = None) -> Plan:
    """A plan of (id, description, tool) tasks in this order, each after the one before
    unless `deps` says otherwise."""
    deps = deps or {}
    ids = [task_id for task_id, _, _ in tasks]
    subtasks = [
        {
            "id": task_id,
            "description": description,
            "dependencies": deps.get(task_id, ids[n - 1 : n]),
        }
        for n, (task_id, description, _) in enumerate(tasks)
    ]
    actions = [
        {"task_id": task_id, "tool": tool, "purpose": f"{tool} for {task_id}"}
        for task_id, _, tool in tasks
    ]
    return Plan.model_validate(
        {
            "goal_understanding": {"main_objective": "add peek", "success_criteria": ["peek"]},
            "task_decomposition": {"subtasks": subtasks},
            "action_plan": {"execution_order": ids, "actions": actions},
        }
    )


CAPTURED = (  # the 1.5B's plan for stack_peek, shortened
    ("1", "Read the `stack.py` file to understand its current structure", "read_file"),
    (
        "2",
        "Identify where the `peek()` and `is_empty()` methods should be implemented",
        "edit_file",
    ),
    ("3", "Write the `peek()` method to return the top item of the stack", "write_file"),
    ("4", "Write the `is_empty()` method to return `True` if the stack is empty", "write_file"),
    ("5", "Test the `peek()` and `is_empty()` methods with assertions", "run_command"),
)


def order(plan: Plan) -> list[str]:
    return plan.action_plan.execution_order


def dependencies(plan: Plan) -> dict[str, list[str]]:
    return {task.id: task.dependencies for task in plan.task_decomposition.subtasks}


# -- the repair --------------------------------------------------------------------------------


def test_the_captured_plan_becomes_one_task_that_writes_the_file() -> None:
    plan = plan_of(*CAPTURED)
    notes = repair_plan(plan, WITH_TESTS, whole_file=True)
    assert order(plan) == ["3"]
    [task] = plan.task_decomposition.subtasks
    assert task.description.startswith("Write the `peek()` method")
    assert "; Write the `is_empty()` method" in task.description
    assert task.dependencies == []
    assert notes == [
        "task '1' folded into task '3': the task that changes the files is shown them",
        "task '2' folded into task '3': the task that changes the files is shown them",
        "task '5' folded into task '4': the tests run after every change",
        "task '4' joined to task '3': both change the same files",
    ]
    # The folded tasks' actions stay with the task (what the reading was for is not lost).
    assert [a.tool for a in plan.actions_for("3")] == [
        "read_file",
        "edit_file",
        "write_file",
        "write_file",
        "run_command",
    ]


ENV_PORT = (  # the 1.5B's plan for env_port at temperature 0, its descriptions verbatim
    ("1", "Read the APP_PORT environment variable and check if it is set", "read_file"),
    ("2", "If APP_PORT is set, read its value and check if it is between 1 and 65535", "read_file"),
    ("3", "If APP_PORT is not set, set the DEFAULT_PORT to 8000", "write_file"),
    (
        "4",
        "If APP_PORT is set and its value is between 1 and 65535, set the DEFAULT_PORT to the "
        "APP_PORT value",
        "write_file",
    ),
    ("5", "Run the service to ensure it listens on the correct port", "run_command"),
)


def test_looking_tasks_fold_into_a_task_planned_with_a_write_tool_whatever_its_verb() -> None:
    """No word of "set the DEFAULT_PORT" said change: nothing was folded, and the pass spent
    its budget on tasks 1 and 2 reading settings.py one line at a time (nine calls)."""
    plan = plan_of(*ENV_PORT)
    notes = repair_plan(plan, WITH_TESTS, whole_file=True)
    assert order(plan) == ["3", "4"]
    assert notes == [
        "task '1' folded into task '3': the task that changes the files is shown them",
        "task '2' folded into task '3': the task that changes the files is shown them",
        "task '5' folded into task '4': the tests run after every change",
    ]
    looking = plan_of(("a", "Look at the port", "write_file"), ("b", "Fix port()", "edit_file"))
    repair_plan(looking, WITH_TESTS, whole_file=True)
    assert order(looking) == ["b"]  # a verb of looking still says it looks


def test_a_trailing_review_task_is_folded_into_the_change_when_the_tests_run() -> None:
    """pagination_off_by_one: after the right fix, the 1.5B's "Review the implementation and
    test the `page` function thoroughly" read past the end of pager.py until the action cap,
    then edited the fix away (`size - 1`)."""
    plan = plan_of(
        ("4", "Implement the correct behavior of the `page` function.", "write_file"),
        ("8", "Review the implementation and test the `page` function thoroughly.", "read_file"),
    )
    notes = repair_plan(plan, WITH_TESTS, whole_file=True)
    assert order(plan) == ["4"]
    assert notes == ["task '8' folded into task '4': the tests run after every change"]
    kept = plan_of(*[(i, d, t) for i, d, t in ENV_PORT[:1]], ("r", "Review pager.py", "read_file"))
    repair_plan(kept, TOOLS, whole_file=True)  # no tests: the review stays a task
    assert "r" in order(kept)


def test_with_edit_file_changes_stay_separate_tasks() -> None:
    plan = plan_of(*CAPTURED)
    repair_plan(plan, WITH_TESTS, whole_file=False)
    assert order(plan) == ["3", "4"]
    assert dependencies(plan) == {"3": [], "4": ["3"]}


def test_without_tests_a_trailing_check_stays_a_task() -> None:
    plan = plan_of(*CAPTURED)
    repair_plan(plan, TOOLS, whole_file=False)
    assert order(plan) == ["3", "4", "5"]
    assert dependencies(plan)["5"] == ["4"]


def test_changes_to_different_files_stay_separate_tasks() -> None:
    plan = plan_of(
        ("a", "Rename calc_total to total in calc.py", "edit_file"),
        ("b", "Update the call in report.py", "edit_file"),
    )
    assert repair_plan(plan, TOOLS, whole_file=True) == []
    assert order(plan) == ["a", "b"]


def test_in_a_plan_that_only_looks_the_last_task_makes_the_change() -> None:
    """The 1.5B planned env_port ("settings.port() should return APP_PORT …") as reading
    only; its tasks were not asked to write files, and the pass ended needs_human after 25
    calls. An issue asks for a change, so the last task of such a plan is the change."""
    plan = plan_of(
        ("a", "Read settings.py", "read_file"),
        ("b", "Read APP_PORT and raise ValueError for anything else", "read_file"),
    )
    assert forced_change(plan) == "b"
    assert changes_in_plan(plan, "b") and not looks_in_plan(plan, "b")
    assert looks_in_plan(plan, "a") and not changes_in_plan(plan, "a")
    notes = repair_plan(plan, WITH_TESTS, whole_file=True)
    assert notes == [
        "task 'b' makes the change: every task of the plan only looked",
        "task 'a' folded into task 'b': the task that changes the files is shown them",
    ]
    assert order(plan) == ["b"]
    assert "write_file" in plan.tools_for("b")


def test_the_forced_change_survives_folding_the_tasks_that_made_it_forced() -> None:
    """The 1.5B's second env_port plan, descriptions verbatim: after "Read …" and "Check …"
    were folded away, "If … raise `ValueError`" with read_file no longer looked like part of a
    plan that only looks, was asked only to look, and read settings.py line by line."""
    plan = plan_of(
        (
            "1",
            "Read the `settings.py` file and extract the `APP_PORT` environment variable.",
            "read_file",
        ),
        ("2", "Check if the `APP_PORT` environment variable is set.", "search_files"),
        ("3", "If the `APP_PORT` environment variable is set, return its value.", "read_file"),
        ("4", "If the `APP_PORT` environment variable is not set, return 8000.", "read_file"),
        (
            "5",
            "If the `APP_PORT` environment variable is neither set nor set, raise `ValueError`.",
            "read_file",
        ),
    )
    repair_plan(plan, WITH_TESTS, whole_file=True)
    assert order(plan) == ["5"]
    assert not looks_in_plan(plan, "5")  # so its prompt asks for the file written whole


def test_a_plan_with_a_change_or_only_tests_forces_nothing() -> None:
    changing = plan_of(("a", "Read settings.py", "read_file"), ("b", "Fix port()", "edit_file"))
    assert forced_change(changing) is None and looks_in_plan(changing, "a")
    testing = plan_of(("a", "Run the tests", "run_tests"), ("b", "Verify the output", "read_file"))
    assert forced_change(testing) is None
    assert repair_plan(testing, WITH_TESTS, whole_file=True) == []
    assert order(testing) == ["a", "b"]


def test_a_looking_task_between_two_changes_goes_to_the_later_one() -> None:
    """What depended on the folded task depends on what it depended on: the order stays
    valid (a dependency never points forward)."""
    plan = plan_of(
        ("a", "Add a parse() function to config.py", "edit_file"),
        ("b", "Find the callers of load() in app.py", "search_files"),
        ("c", "Update the callers in app.py to use parse()", "edit_file"),
        ("d", "Document parse() in README.md", "edit_file"),
        deps={"a": [], "b": ["a"], "c": ["b"], "d": ["b"]},
    )
    repair_plan(plan, TOOLS, whole_file=True)
    assert order(plan) == ["a", "c", "d"]
    assert dependencies(plan) == {"a": [], "c": ["a"], "d": ["a"]}
    positions = {task_id: n for n, task_id in enumerate(order(plan))}
    for task_id, needs in dependencies(plan).items():
        assert all(positions[need] < positions[task_id] for need in needs)


def test_tasks_that_depend_on_a_joined_change_depend_on_the_task_it_joined() -> None:
    plan = plan_of(
        ("a", "Add peek() to the Stack class", "edit_file"),
        ("b", "Add is_empty() to the Stack class", "edit_file"),
        ("c", "Document peek() and is_empty() in README.md", "edit_file"),
    )
    repair_plan(plan, TOOLS, whole_file=True)
    assert order(plan) == ["a", "c"]
    assert dependencies(plan) == {"a": [], "c": ["a"]}


def test_a_replacement_plan_keeps_the_tasks_of_the_plan_it_replaces() -> None:
    """Replanning after task 1 ("Read …") completed: the replacement must keep it (the
    executor refuses a plan without its completed tasks, and the 1.5B's replans were refused
    so), and a new change is never joined to a known one, which may be done already."""
    plan = plan_of(
        ("1", "Read the `stack.py` file", "read_file"),
        ("2", "Add the `peek()` method", "edit_file"),
        ("3", "Add the `is_empty()` method", "edit_file"),
        ("4", "Add the `size()` method", "edit_file"),
    )
    notes = repair_plan(plan, WITH_TESTS, frozenset({"1", "2"}), whole_file=True)
    assert order(plan) == ["1", "2", "3"]
    assert notes == ["task '4' joined to task '3': both change the same files"]


def test_a_new_decomposition_that_keeps_a_completed_read_task_is_accepted() -> None:
    """The executor's check after the repair: the completed task is still there."""
    current = plan_of(*CAPTURED[:1], *CAPTURED[2:3])
    rules = PlanRules(
        tool_names=frozenset(WITH_TESTS) | {"finish_task"},
        current_plan=current,
        repair=partial(repair_plan, whole_file=True),
    )
    replacement = plan_of(*CAPTURED[:1], *CAPTURED[2:4])
    reply = TasksReply.model_validate(
        replacement.model_dump(include={"task_decomposition", "action_plan"}),
        context=KeepRules(rules, frozenset({"1"})),
    )
    assert [t.id for t in reply.task_decomposition.subtasks] == ["1", "3", "4"]


def test_a_revision_that_leaves_out_a_completed_task_gets_it_back() -> None:
    """The 1.5B's revision of slugify_punctuation dropped completed task 03 twice; the
    executor refused both ("completed tasks must stay in the plan") and the pass ended
    needs_human. The task is put back, first, with its actions, and the revision accepted."""
    current = plan_of(
        ("03", "Read slugify.py", "read_file"), ("04", "Fix slugify() in slugify.py", "edit_file")
    )
    rules = PlanRules(
        tool_names=frozenset(WITH_TESTS) | {"finish_task"},
        current_plan=current,
        repair=partial(repair_plan, whole_file=True),
    )
    revision = {
        "reason": "the regular expression is wrong",
        "updated_subtasks": [
            {"id": "05", "description": "Rewrite the regular expression in slugify.py"}
        ],
        "updated_action_plan": {
            "execution_order": ["05"],
            "actions": [{"task_id": "05", "tool": "write_file", "purpose": "rewrite"}],
        },
    }
    reply = RevisedPlanReply.model_validate(revision, context=KeepRules(rules, frozenset({"03"})))
    revised = reply.apply_to(current)
    assert order(revised) == ["03", "05"]
    assert [a.task_id for a in revised.action_plan.actions] == ["03", "05"]
    assert reply.repairs[0] == "completed task '03' kept in the plan (the replacement left it out)"
    assert current.subtask("03") is not None and order(current) == ["03", "04"]  # not mutated


# -- a pass ------------------------------------------------------------------------------------


@pytest.fixture
def harness(tmp_path: Path, scripted_model: ScriptedModelServer) -> Iterator[Harness]:
    made = Harness(tmp_path, scripted_model)
    (made.workspace / "stack.py").write_text(STACK, encoding="utf-8")
    yield made


def captured_plan() -> dict[str, Any]:
    plan = plan_of(*CAPTURED).model_dump()
    return {"phase": "planning", **plan, "comment": "Plan completed."}


def test_a_pass_with_the_captured_plan_writes_the_file_in_one_execution_call(
    harness: Harness,
) -> None:
    quiet = {"planning.replanning.enabled": False, "planning.reflection.enabled": False}
    (harness.workspace / "tests").mkdir()
    (harness.workspace / "tests" / "test_stack.py").write_text(
        "from stack import Stack\n\n\ndef test_new():\n    assert Stack()._items == []\n",
        encoding="utf-8",
    )
    harness.server.add(
        reply_json("planning", captured_plan()),
        reply_text("execute", block("stack.py", DONE)),
        completion(completed=1),
    )
    result = harness.run(ISSUE, **quiet, **ROOT_TOOLS)
    assert result.status == "completed", result.stop_reason
    assert (harness.workspace / "stack.py").read_text(encoding="utf-8") == DONE
    assert len(harness.server.requests) == 3  # planning, one execute reply, completion
    prompt = harness.server.requests[1].body["messages"][1]["content"]
    assert "Your task, 3 of the plan: Write the `peek()` method" in prompt
    # A task that writes files whole is asked for them, not shown the plan around it (the 1.5B
    # copied the checklist and the planned actions back instead of writing the file).
    assert "Current plan" not in prompt and "Planned actions" not in prompt
    assert "stack.py\n```python\n" + STACK in prompt  # shown: nothing to read
    [repaired] = harness.of_type("plan_repaired")
    assert (
        "task '1' folded into task '3': the task that changes the files is shown them"
        in (repaired["repairs"])
    )
    assert [e["status"] for e in harness.of_type("verification")][-1] == "passed"
    [plan] = [e for e in harness.entries() if e["type"] == "plan"]
    assert [t["id"] for t in plan["plan"]["task_decomposition"]["subtasks"]] == ["3"]


SETTINGS = "DEFAULT_PORT = 8000\n\n\ndef port() -> int:\n    return DEFAULT_PORT\n"
FROM_ENV = (
    "import os\n\nDEFAULT_PORT = 8000\n\n\ndef port() -> int:\n"
    '    return int(os.environ.get("APP_PORT", DEFAULT_PORT))\n'
)


def test_a_plan_of_one_reading_task_is_asked_for_the_change(harness: Harness) -> None:
    """The 1.5B's env_port plan: one task, "Read APP_PORT …", with read_file. Before, it was
    not asked to write files and ended after reads; now it is asked for settings.py whole."""
    quiet = {"planning.replanning.enabled": False, "planning.reflection.enabled": False}
    (harness.workspace / "settings.py").write_text(SETTINGS, encoding="utf-8")
    plan = plan_of(("1", "Read APP_PORT in settings.py and return it from port()", "read_file"))
    harness.server.add(
        reply_json("planning", {"phase": "planning", **plan.model_dump(), "comment": "ok"}),
        reply_text("execute", block("settings.py", FROM_ENV)),
        completion(completed=1),
    )
    issue = ISSUE.model_copy(update={"title": "Port from APP_PORT", "body": "See settings.py."})
    result = harness.run(issue, **quiet, **ROOT_TOOLS)
    assert result.status == "completed", result.stop_reason
    assert (harness.workspace / "settings.py").read_text(encoding="utf-8") == FROM_ENV
    prompt = harness.server.requests[1].body["messages"][1]["content"]
    assert "Your task, 1 of the plan: Read APP_PORT" in prompt


def test_a_planning_reply_without_an_action_plan_runs_its_tasks_in_order(
    harness: Harness,
) -> None:
    """The 1.5B's env_port plan ended after its tasks (no action_plan), twice alike, and the
    pass failed at planning. The tasks run in their listed order, their required tools as the
    planned actions, and the plan records the repair."""
    quiet = {"planning.replanning.enabled": False, "planning.reflection.enabled": False}
    (harness.workspace / "settings.py").write_text(SETTINGS, encoding="utf-8")
    reply = {
        "phase": "planning",
        "goal_understanding": {"main_objective": "port() reads APP_PORT"},
        "task_decomposition": {
            "subtasks": [
                {
                    "id": "1",
                    "description": "Return APP_PORT from port() in settings.py",
                    "required_tools": ["edit_file", "finish_task"],
                }
            ]
        },
    }
    harness.server.add(
        reply_json("planning", reply),
        reply_text("execute", block("settings.py", FROM_ENV)),
        completion(completed=1),
    )
    result = harness.run(ISSUE, **quiet, **ROOT_TOOLS)
    assert result.status == "completed", result.stop_reason
    assert (harness.workspace / "settings.py").read_text(encoding="utf-8") == FROM_ENV
    [repaired] = harness.of_type("plan_repaired")
    assert (
        repaired["repairs"][0]
        == "the reply had no action_plan: the tasks run in their listed order"
    )
    [plan] = [e["plan"] for e in harness.entries() if e["type"] == "plan"]
    assert plan["action_plan"]["execution_order"] == ["1"]
    assert [a["tool"] for a in plan["action_plan"]["actions"]] == ["edit_file"]
