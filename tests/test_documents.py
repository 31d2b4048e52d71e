"""Plan validation: every reason a plan is rejected, with a precise message."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from planner.plan.documents import PlanningReply, PlanRules, ReflectionReply


def planning(subtasks: list[dict[str, Any]], order: list[str], **extra: Any) -> dict[str, Any]:
    return {
        "phase": "planning",
        "goal_understanding": {"main_objective": "ship it"},
        "task_decomposition": {"reasoning": "r", "subtasks": subtasks},
        "action_plan": {"execution_order": order, "actions": extra.get("actions", [])},
    }


def task(task_id: str, *deps: str) -> dict[str, Any]:
    return {"id": task_id, "description": f"do {task_id}", "dependencies": list(deps)}


def rejected(document: dict[str, Any], rules: PlanRules | None = None) -> str:
    with pytest.raises(ValidationError) as caught:
        PlanningReply.model_validate(document, context=rules or PlanRules())
    return str(caught.value)


def test_a_valid_plan_passes() -> None:
    reply = PlanningReply.model_validate(
        planning([task("a"), task("b", "a")], ["a", "b"]), context=PlanRules()
    )
    assert [t.id for t in reply.plan().task_decomposition.subtasks] == ["a", "b"]


def test_duplicate_ids() -> None:
    assert "subtask id 'a' is used more than once" in rejected(
        planning([task("a"), task("a")], ["a"])
    )


def test_dangling_dependency() -> None:
    assert "subtask 'b' depends on 'zzz', which does not exist" in rejected(
        planning([task("a"), task("b", "zzz")], ["a", "b"])
    )


@pytest.mark.parametrize("placeholder", ["none", "None", "null", "N/A", "", "-"])
def test_a_placeholder_dependency_means_none(placeholder: str) -> None:
    """Qwen2.5-Coder 1.5B wrote `"dependencies": ["none"]` (planner eval, fahrenheit_formula):
    that is no dependency, not a dangling one that fails the plan."""
    reply = PlanningReply.model_validate(
        planning([task("1", placeholder), task("2", "1", placeholder)], ["1", "2"]),
        context=PlanRules(),
    )
    assert [t.dependencies for t in reply.plan().task_decomposition.subtasks] == [[], ["1"]]


def test_cycle() -> None:
    message = rejected(
        planning([task("a", "c"), task("b", "a"), task("c", "b"), task("d")], ["a", "b", "c", "d"])
    )
    assert "dependencies form a cycle among: a, b, c" in message


def test_self_dependency() -> None:
    assert "subtask 'a' depends on itself" in rejected(planning([task("a", "a")], ["a"]))


def test_order_runs_task_before_dependency() -> None:
    assert "execution_order runs 'b' before its dependency 'a'" in rejected(
        planning([task("a"), task("b", "a")], ["b", "a"])
    )


def test_order_missing_unknown_and_repeated_tasks() -> None:
    message = rejected(planning([task("a"), task("b")], ["a", "a", "x"]))
    assert "execution_order names 'x', which is not a subtask" in message
    assert "execution_order lists 'a' more than once" in message
    assert "execution_order leaves out subtask 'b'" in message


def test_too_many_subtasks() -> None:
    message = rejected(
        planning([task("a"), task("b"), task("c")], ["a", "b", "c"]), PlanRules(max_subtasks=2)
    )
    assert "the plan has 3 subtasks; at most 2 are allowed" in message


def test_unknown_tool_lists_the_real_tools() -> None:
    document = planning([task("a")], ["a"], actions=[{"task_id": "a", "tool": "github_magic"}])
    message = rejected(document, PlanRules(tool_names=frozenset({"read_file", "write_file"})))
    assert "an action names a tool that does not exist: there is no tool 'github_magic'" in message
    assert "the closest tools are write_file" in message


def test_action_for_unknown_task() -> None:
    document = planning([task("a")], ["a"], actions=[{"task_id": "q"}])
    assert "an action names task 'q', which is not a subtask" in rejected(document)


def test_incomplete_reply_without_error_is_rejected() -> None:
    assert "needs goal_understanding, task_decomposition and action_plan" in rejected(
        {"phase": "planning", "goal_understanding": {"main_objective": "x"}}
    )


def test_clarification_reply_needs_no_plan() -> None:
    reply = PlanningReply.model_validate(
        {
            "phase": "planning",
            "error": {
                "type": "unclear_goal",
                "message": "which file?",
                "clarification_needed": ["Which file?"],
            },
        }
    )
    assert reply.error is not None and reply.error.clarification_needed == ["Which file?"]


def test_revision_is_validated_against_the_current_plan() -> None:
    plan = PlanningReply.model_validate(planning([task("a"), task("b", "a")], ["a", "b"])).plan()
    reflection = {
        "reflection": {"status": "failure", "evaluation": "x", "plan_revision_needed": True},
        "plan_revision": {"reason": "r", "updated_action_plan": {"execution_order": ["b"]}},
    }
    with pytest.raises(ValidationError, match="execution_order leaves out subtask 'a'"):
        ReflectionReply.model_validate(reflection, context=PlanRules(current_plan=plan))


def test_revision_needed_without_revision_is_rejected() -> None:
    with pytest.raises(ValidationError, match="plan_revision is missing"):
        ReflectionReply.model_validate(
            {"reflection": {"status": "failure", "evaluation": "x", "plan_revision_needed": True}}
        )


TOOLS = PlanRules(tool_names=frozenset({"read_file", "edit_file", "run_command"}))


def test_tool_names_where_task_ids_belong_are_dropped() -> None:
    """Qwen2.5-Coder 0.5B listed tools as dependencies in 4 of its 5 plans and 1.5B named
    tools in execution_order (planner eval): a task does not depend on a tool, so those names
    go, and the order left incomplete is completed in the subtask order."""
    document = planning(
        [task("read", "read_file"), task("fix", "read", "Edit-File"), task("test", "fix")],
        ["read_file", "read", "edit_file", "fix"],
    )
    plan = PlanningReply.model_validate(document, context=TOOLS).plan()
    assert [t.dependencies for t in plan.task_decomposition.subtasks] == [[], ["read"], ["fix"]]
    assert plan.action_plan.execution_order == ["read", "fix", "test"]


def test_an_order_of_tool_names_only_becomes_the_subtask_order() -> None:
    document = planning([task("a"), task("b", "a")], ["read_file", "run_command"])
    plan = PlanningReply.model_validate(document, context=TOOLS).plan()
    assert plan.action_plan.execution_order == ["a", "b"]


def test_files_and_functions_of_the_issue_or_map_given_as_dependencies_are_dropped() -> None:
    """Qwen2.5-Coder 1.5B, planner eval fahrenheit_formula: `"dependencies": ["temperature.py",
    "to_fahrenheit"]` in every subtask, twice; the re-ask never fixed it."""
    rules = PlanRules(
        tool_names=frozenset({"read_file"}),
        question_reference="Fix `to_fahrenheit` in temperature.py.\nsrc/temperature.py: to_celsius",
    )
    document = planning(
        [task("1", "temperature.py"), task("2", "1", "to_fahrenheit()", "to_celsius")],
        ["1", "2"],
    )
    plan = PlanningReply.model_validate(document, context=rules).plan()
    assert [t.dependencies for t in plan.task_decomposition.subtasks] == [[], ["1"]]
    assert "depends on 'task_9'" in rejected(
        planning([task("1"), task("2", "task_9")], ["1", "2"]), rules
    )


def test_a_dependency_that_names_no_tool_is_still_refused() -> None:
    """Only tool names are forgiven: a dangling task id (a typo, a task left out) still sends
    the plan back to the model."""
    document = planning([task("a"), task("b", "task_a")], ["read_file", "a", "b"])
    assert "subtask 'b' depends on 'task_a', which does not exist" in rejected(document, TOOLS)


def test_a_task_named_like_a_tool_keeps_its_dependants() -> None:
    document = planning([task("read_file"), task("b", "read_file")], ["read_file", "b"])
    plan = PlanningReply.model_validate(document, context=TOOLS).plan()
    assert plan.task_decomposition.subtasks[1].dependencies == ["read_file"]
    assert plan.action_plan.execution_order == ["read_file", "b"]
