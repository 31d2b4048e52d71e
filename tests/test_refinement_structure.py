"""Structure validation of a replanned plan against the previous one, with and without the
individual (task by task) fallback."""

from __future__ import annotations

from typing import Any

import pytest

from planner.config import RefinementConfig
from planner.plan.documents import Plan, PlanningReply, PlanRules
from planner.refinement.structure import stable_order, structure_problems, validate_structure
from tests.plans import plan_doc, subtask

RULES = PlanRules(tool_names=frozenset({"write_file", "read_file"}))
FALLBACK = RefinementConfig()
NO_FALLBACK = RefinementConfig(enable_individual_fallback=False)


def plan_of(*ids: str, **kwargs: Any) -> Plan:
    return PlanningReply.model_validate(plan_doc(*ids, **kwargs)).plan()


def raw_plan(subtasks: list[dict[str, Any]], order: list[str]) -> Plan:
    """A plan as a model might write it, without the executability checks."""
    document = plan_doc("x")
    document["task_decomposition"]["subtasks"] = subtasks
    document["action_plan"] = {"execution_order": order, "actions": []}
    return PlanningReply.model_validate(document).plan()


def described(plan: Plan, task_id: str, text: str) -> Plan:
    """`plan` with one task's description rewritten (a changed individual task)."""
    subtasks = [
        t.model_copy(update={"description": text}) if t.id == task_id else t
        for t in plan.task_decomposition.subtasks
    ]
    decomposition = plan.task_decomposition.model_copy(update={"subtasks": subtasks})
    return plan.model_copy(update={"task_decomposition": decomposition})


TEN = [f"t{i}" for i in range(10)]


@pytest.mark.parametrize(
    ("before", "after", "broken"),
    [
        (10, 14, True),  # +40% and +4 tasks: over both thresholds
        (10, 13, False),  # +30%: not over 0.3 (and +3 > 2)
        (4, 7, True),  # +75% and +3
        (4, 6, False),  # +50% but only +2: not over the absolute minimum
        (10, 6, True),  # -40% and -4: shrinking counts too
        (10, 7, False),  # -30%
        (3, 3, False),
    ],
)
def test_task_count_change_needs_both_thresholds(before: int, after: int, broken: bool) -> None:
    previous = plan_of(*[f"t{i}" for i in range(before)], chain=False)
    proposed = plan_of(*[f"n{i}" for i in range(after)], chain=False)
    problems = structure_problems(previous, proposed, FALLBACK)
    assert bool(problems) is broken
    if broken:
        assert problems == [
            f"the task count changed from {before} to {after} ({abs(after - before) / before:.0%})"
        ]


def test_thresholds_come_from_the_settings() -> None:
    strict = RefinementConfig(task_count_change_threshold=0.1, task_count_change_min_absolute=0)
    previous, proposed = plan_of(*TEN, chain=False), plan_of(*TEN[:8], chain=False)
    assert structure_problems(previous, proposed, strict)  # -20% and -2 > 0
    assert not structure_problems(previous, proposed, FALLBACK)


def test_a_valid_replan_is_taken_as_it_is() -> None:
    previous = plan_of("task_1", "task_2")
    proposed = described(plan_of("task_1", "task_2", "task_3"), "task_1", "Read first")
    result = validate_structure(previous, proposed, FALLBACK, RULES)
    assert result.outcome == "valid" and result.plan == proposed and result.changed
    assert result.problems == []


def test_a_dangling_dependency_breaks_the_structure() -> None:
    previous = plan_of("task_1", "task_2")
    proposed = raw_plan([subtask("task_1"), subtask("task_2", "task_0")], ["task_1", "task_2"])
    problems = structure_problems(previous, proposed, FALLBACK)
    assert problems == ["subtask 'task_2' depends on 'task_0', which does not exist"]
    kept = validate_structure(previous, proposed, NO_FALLBACK, RULES)
    assert kept.outcome == "kept_previous" and kept.plan == previous
    assert kept.problems == problems and not kept.changed


def test_a_cycle_breaks_the_structure() -> None:
    previous = plan_of("task_1", "task_2")
    proposed = raw_plan(
        [subtask("task_1", "task_2"), subtask("task_2", "task_1")], ["task_1", "task_2"]
    )
    problems = structure_problems(previous, proposed, FALLBACK)
    assert problems == ["dependencies form a cycle among: task_1, task_2"]


def test_individual_fallback_takes_the_changed_tasks_that_fit() -> None:
    """The reply rewrote task_1 sensibly, gave task_2 a dependency on a task that does not
    exist, and added four tasks (structure broken by the count): the previous plan stays, with
    task_1 taken over and task_2 refused."""
    previous = plan_of("task_1", "task_2", "task_3")
    subtasks = [
        {**subtask("task_1"), "description": "Read the README first"},
        {**subtask("task_2", "task_9"), "description": "Write the guide"},
        subtask("task_3", "task_2"),
        *[subtask(f"extra_{i}") for i in range(4)],
    ]
    order = ["task_1", "task_2", "task_3", *[f"extra_{i}" for i in range(4)]]
    proposed = raw_plan(subtasks, order)

    result = validate_structure(previous, proposed, FALLBACK, RULES)

    assert result.outcome == "fallback" and result.changed
    assert result.taken == ["task_1"]
    assert len(result.refused) == 1 and result.refused[0].startswith("task_2: ")
    assert "'task_9', which does not exist" in result.refused[0]
    assert "the task count changed from 3 to 7 (133%)" in result.problems
    tasks = {t.id: t.description for t in result.plan.task_decomposition.subtasks}
    assert tasks == {
        "task_1": "Read the README first",
        "task_2": "Do task_2",
        "task_3": "Do task_3",
    }
    assert result.plan.action_plan.execution_order == ["task_1", "task_2", "task_3"]


def test_without_fallback_a_broken_plan_keeps_the_previous_one_whole() -> None:
    previous = plan_of("task_1", "task_2", "task_3")
    proposed = raw_plan(
        [{**subtask("task_1"), "description": "Better"}, subtask("task_2", "task_1", "task_2")],
        ["task_1", "task_2"],
    )
    result = validate_structure(previous, proposed, NO_FALLBACK, RULES)
    assert result.outcome == "kept_previous" and result.plan == previous
    assert result.taken == [] and "subtask 'task_2' depends on itself" in result.problems


def test_fallback_that_can_take_nothing_keeps_the_previous_plan() -> None:
    previous = plan_of("task_1", "task_2")
    proposed = raw_plan(
        [subtask("task_1", "task_2"), subtask("task_2", "task_1")], ["task_1", "task_2"]
    )
    result = validate_structure(previous, proposed, FALLBACK, RULES)
    assert result.outcome == "kept_previous" and result.plan == previous
    assert result.taken == [] and len(result.refused) == 1  # task_1 -> task_2 cycle


def test_fallback_takes_a_rewritten_dependency_that_still_fits_and_reorders() -> None:
    previous = plan_of("task_1", "task_2", chain=False)
    proposed = raw_plan(
        [subtask("task_1", "task_2"), subtask("task_2"), subtask("zz", "nowhere")],
        ["task_2", "task_1", "zz"],
    )
    result = validate_structure(previous, proposed, FALLBACK, RULES)
    assert result.outcome == "fallback" and result.taken == ["task_1"]
    assert result.plan.action_plan.execution_order == ["task_2", "task_1"]


def test_completed_tasks_must_stay_and_are_never_rewritten() -> None:
    previous = plan_of("task_1", "task_2")
    proposed = plan_of("task_2", "task_3", chain=False)
    result = validate_structure(previous, proposed, FALLBACK, RULES, keep=frozenset({"task_1"}))
    assert "completed task 'task_1' was dropped" in result.problems
    assert result.plan.subtask("task_1") is not None
    rewritten = described(previous, "task_1", "Done differently")
    assert (
        validate_structure(previous, rewritten, FALLBACK, RULES, keep=frozenset({"task_1"})).outcome
        == "valid"
    )  # valid as a whole: a changed text of a done task harms nothing


def test_unknown_tools_are_not_taken_over() -> None:
    previous = plan_of("task_1", "task_2")
    proposed = plan_of("task_1", "task_2", tool="delete_everything")
    result = validate_structure(previous, proposed, FALLBACK, RULES)
    assert result.outcome == "kept_previous" and result.plan == previous
    assert any("delete_everything" in problem for problem in result.problems)


def test_stable_order_keeps_the_preferred_order_where_dependencies_allow() -> None:
    plan = raw_plan([subtask("a", "c"), subtask("b"), subtask("c")], ["a", "b", "c"])
    assert stable_order(plan.task_decomposition.subtasks, ["a", "b", "c"]) == ["b", "c", "a"]
