"""Each replan level re-enters the right phase and carries progress per §11.4.3."""

from __future__ import annotations

import pytest

from planner.testing.steps import reply_tool_calls
from tests.harness import Harness
from tests.plans import (
    actions_reply,
    completed,
    decision,
    execution_decision,
    finish,
    goal_reply,
    planned,
    planning,
    review,
    review_only,
    revise_reply,
    subtask,
    tasks_reply,
    write,
)
from tests.support.scripted_replies import two_files_written


def fail_after_first_task(level: int, **fields: object) -> list[object]:
    """task_1 completes, task_2's first action fails, the model decides `level`."""
    return [
        *planned("task_1", "task_2"),
        write("a.txt"),
        finish(),
        write("../bad"),
        execution_decision(True, confidence=0.9, replan_level=level, **fields),
    ]


def test_level_1_retries_the_same_call_without_a_new_plan(harness: Harness) -> None:
    harness.server.add(
        *planned("task_1"),
        write("../bad"),
        execution_decision(True, replan_type="retry", error_classification="transient"),
        # the retried call fails the same way; the model now lets the task go on
        execution_decision(False),
        write("ok.txt"),
        execution_decision(False),  # third action: periodic checkpoint
        finish(),
        *completed(),
    )
    result = harness.run()
    assert result.status == "completed" and result.revision == 0
    calls = [e["execution"]["function_call"] for e in harness.of_type("action")]
    assert (
        calls[0]
        == calls[1]
        == {"name": "write_file", "arguments": {"path": "../bad", "content": "hello\n"}}
    )
    assert harness.kinds().count("execute") == 3  # the retry cost no model call
    retry = next(e for e in harness.of_type("replan_decision") if e["level"] == 1)
    assert retry["executed"] and retry["limit_key"] == "execution.max_action_retries"
    assert not result.notifications  # a retry changes neither plan nor checklist


def test_level_2_partial_replan_keeps_ticks_and_resumes_execution(harness: Harness) -> None:
    harness.server.add(
        *fail_after_first_task(2, replan_type="partial_replan"),
        revise_reply(["task_1", "task_3"], [subtask("task_1"), subtask("task_3", "task_1")]),
        write("c.txt"),
        execution_decision(False),
        finish(),
        *completed(completed=2),
    )
    result = harness.run()
    assert result.status == "completed"
    kinds = harness.kinds()
    assert kinds[kinds.index("replan_revise") + 1] == "execute"  # no planning review: phase 4
    assert result.previous_progress == (1, 2)
    first_revised = next(c for c in harness.reporter.checklists if "Revised #1" in c)
    assert "- [x] **task_1**" in first_revised and "- [ ] **task_3**" in first_revised


def regenerated_actions(reply: object) -> list[object]:
    """task_2 fails, the model regenerates the actions (`reply`), the review accepts them and
    task_2 then completes."""
    return [
        *fail_after_first_task(3, replan_type="action_regeneration", unavailable_tools=["x"]),
        reply,
        review_only(action_sequence=decision()),
        write("b.txt"),
        execution_decision(False),
        finish(),
        *completed(completed=2),
    ]


def test_level_3_regenerates_actions_then_reviews_only_the_action_sequence(
    harness: Harness,
) -> None:
    harness.server.add(*regenerated_actions(actions_reply("task_1", "task_2")))
    result = harness.run()
    assert result.status == "completed"
    kinds = harness.kinds()
    assert kinds[kinds.index("replan_actions") + 1] == "replan_review"
    review_prompt = harness.prompt(kinds.index("replan_actions") + 1)
    assert ". action_sequence\n" in review_prompt
    assert ". task_decomposition\n" not in review_prompt
    assert ". goal_understanding\n" not in review_prompt
    regen_prompt = harness.prompt(kinds.index("replan_actions"))
    assert "Already completed (keep them in execution_order): task_1" in regen_prompt
    # §11.4.3: action regeneration keeps the ticks of completed tasks.
    revised = next(c for c in harness.reporter.checklists if "Revised #1" in c)
    assert "- [x] **task_1**" in revised


def test_level_4_redecomposes_clears_progress_and_reviews_from_decomposition(
    harness: Harness,
) -> None:
    harness.server.add(
        *fail_after_first_task(4, replan_type="full_replan"),
        tasks_reply("step_1", "step_2"),
        review_only(task_decomposition=decision(), action_sequence=decision()),
        write("s1.txt"),
        execution_decision(False),
        finish(),
        write("s2.txt"),
        finish(),
        *completed(completed=2),
    )
    result = harness.run()
    assert result.status == "completed"
    kinds = harness.kinds()
    review_prompt = harness.prompt(kinds.index("replan_tasks") + 1)
    assert ". task_decomposition\n" in review_prompt
    assert ". action_sequence\n" in review_prompt
    assert ". goal_understanding\n" not in review_prompt
    revision = harness.of_type("revision")[0]
    assert revision["carry_progress"] is False
    assert revision["review_phases"] == ["task_decomposition", "action_sequence"]
    revised = next(c for c in harness.reporter.checklists if "Revised #1" in c)
    assert "- [ ] **step_1**" in revised and "- [ ] **step_2**" in revised
    assert "**Previous Progress**: 1/2" in revised


def test_level_4_clears_ticks_even_for_reused_task_ids(harness: Harness) -> None:
    harness.server.add(
        *fail_after_first_task(4),
        tasks_reply("task_1", "task_2"),
        review_only(task_decomposition=decision(), action_sequence=decision()),
    )
    harness.server.allow_leftovers = True
    harness.run(**{"budget.max_model_calls": 8})
    revised = next(c for c in harness.reporter.checklists if "Revised #1" in c)
    assert "- [ ] **task_1**" in revised  # cleared: a new decomposition starts over


def test_level_5_goes_back_to_goal_understanding(harness: Harness) -> None:
    harness.server.add(
        *fail_after_first_task(
            5,
            replan_type="full_replan",
            target_phase="goal_understanding",
            reasoning="the issue asks for something else",
        ),
        goal_reply("goal_1"),
        review(),
        write("g.txt"),
        execution_decision(False),
        finish(),
        *completed(),
    )
    result = harness.run()
    assert result.status == "completed"
    assert [t.id for t in result.tasks] == ["goal_1"]
    kinds = harness.kinds()
    goal_prompt = harness.prompt(kinds.index("replan_goal"))
    assert "Plan the work for issue #7" in goal_prompt  # the planning request itself
    assert "the issue asks for something else" in goal_prompt
    review_prompt = harness.prompt(kinds.index("replan_goal") + 1)
    assert ". goal_understanding\n" in review_prompt
    assert harness.of_type("revision")[0]["review_phases"] == [
        "goal_understanding",
        "task_decomposition",
        "action_sequence",
    ]


def test_review_redecomposition_before_execution(harness: Harness) -> None:
    """A planning-phase decision re-enters its own phase before anything runs."""
    harness.server.add(
        planning("task_1"),
        review(
            task_decomposition=decision(
                True,
                0.9,
                "task_1 is too coarse",
                replan_type="task_redecomposition",
                missing_steps=["read first"],
                recommended_granularity="finer",
            )
        ),
        tasks_reply("read", "write"),
        review_only(task_decomposition=decision(), action_sequence=decision()),
        *two_files_written("r.txt", "w.txt"),
    )
    result = harness.run()
    assert result.status == "completed"
    assert [t.id for t in result.tasks] == ["read", "write"]
    decisions = harness.of_type("replan_decision")
    by_phase = {d["phase"]: d["outcome"] for d in decisions[:3]}
    assert by_phase == {
        "goal_understanding": "no_replan",
        "task_decomposition": "executed",
        "action_sequence": "superseded",
    }
    prompt = harness.prompt(harness.kinds().index("replan_tasks"))
    assert "- Problem: read first" in prompt and "- Recommended granularity: finer" in prompt


def test_retry_of_a_failed_task_runs_it_again(harness: Harness) -> None:
    harness.server.add(
        *planned("task_1"),
        finish("failed", "the network was down"),
        execution_decision(True, replan_type="retry", error_classification="transient"),
        write("a.txt"),
        finish(),
        *completed(),
    )
    result = harness.run()
    assert result.status == "completed" and result.tasks[0].status == "completed"
    execute_prompts = [
        r.body["messages"][1]["content"] for r in harness.server.requests if r.kind == "execute"
    ]
    assert len(execute_prompts) == 3  # task_1 twice: failed, then retried


def test_reflection_phase_plan_revision_adds_work_then_completes(harness: Harness) -> None:
    harness.server.add(
        *planned("task_1"),
        write("a.txt"),
        finish(),
        reply_json_evaluation_needing_more(),
        revise_reply(["task_1", "task_2"], [subtask("task_1"), subtask("task_2", "task_1")]),
        write("b.txt"),
        finish(),
        *completed(completed=2),
    )
    result = harness.run()
    assert result.status == "completed"
    assert [(t.id, t.status) for t in result.tasks] == [
        ("task_1", "completed"),
        ("task_2", "completed"),
    ]
    record = next(e for e in harness.of_type("replan_decision") if e["executed"])
    assert (
        record["phase"] == "reflection" and record["limit_key"] == "reflection.max_plan_revisions"
    )
    prompt = harness.prompt(harness.kinds().index("replan_revise"))
    assert "- Action to plan: add a test" in prompt


def reply_json_evaluation_needing_more() -> object:
    from tests.plans import evaluation

    return evaluation(
        True,
        confidence=0.85,
        replan_type="plan_revision",
        reasoning="no test was written",
        achievement_rate=60,
        issues_identified=["missing test"],
        additional_actions=["add a test"],
        revision_scope="minor",
    )


def test_folded_tool_call_is_a_tool_not_an_action(harness: Harness) -> None:
    """request_replan exists only in folded mode; separately it is an unknown tool."""
    harness.server.add(
        *planned("task_1"),
        reply_tool_calls("execute", [("request_replan", {"confidence": 0.9})]),
        finish(),  # refused as an unknown tool: answered to the model, no replan decision
        *completed(),
    )
    result = harness.run()
    assert result.status == "completed"
    assert "unknown tool 'request_replan'" in harness.of_type("action")[0]["error"]


def test_goal_recheck_that_cannot_plan_asks_the_people(harness: Harness) -> None:
    from planner.testing.steps import reply_json

    cannot = {
        "phase": "planning",
        "comment": "unclear",
        "error": {
            "message": "two readings of the issue",
            "clarification_needed": ["Should the files be written once or twice?"],
            "assumptions": ["the first one"],
        },
    }
    harness.server.add(*fail_after_first_task(5), reply_json("replan_goal", cannot))
    result = harness.run()
    assert result.status == "needs_human" and result.questions == [
        "Should the files be written once or twice?"
    ]
    assert [n.kind for n in result.notifications] == ["clarification"]
    assert "- the first one" in result.notifications[0].body
    failed = next(e for e in harness.of_type("replan_decision") if e["level"] == 5)
    assert failed["result"] == "failure" and "questions" in failed["override_reason"]
    # The answer re-enters goal understanding with it.
    harness.server.add(goal_reply("task_x"), review(), write("x.txt"), finish(), *completed())
    again = harness.answer("The second reading.")
    assert again.status == "completed" and [t.id for t in again.tasks] == ["task_x"]
    assert "The second reading." in harness.prompt(harness.kinds().index("replan_goal", 7))


@pytest.mark.parametrize(
    ("level", "carry", "reenters", "review"),
    [
        (1, True, "execution", []),
        (2, True, "execution", []),
        (3, True, "action_sequence", ["action_sequence"]),
        (4, False, "task_decomposition", ["task_decomposition", "action_sequence"]),
        (
            5,
            False,
            "goal_understanding",
            ["goal_understanding", "task_decomposition", "action_sequence"],
        ),
    ],
)
def test_level_table_matches_the_seed(
    level: int, carry: bool, reenters: str, review: list[str]
) -> None:
    """§7.4 (re-entry) and §11.4.3 (progress carry-over), as the levels declare them."""
    from planner.replanning.limits.levels import LEVELS

    spec = LEVELS[level]
    assert (spec.carry_progress, spec.reenters, spec.review_phases) == (carry, reenters, review)


def test_level_5_clears_progress(harness: Harness) -> None:
    harness.server.add(*fail_after_first_task(5), goal_reply("task_1", "task_2"), review())
    harness.server.allow_leftovers = True
    harness.run(**{"budget.max_model_calls": 7})
    revised = next(c for c in harness.reporter.checklists if "Revised #1" in c)
    assert "- [ ] **task_1**" in revised and "**Previous Progress**: 1/2" in revised
    assert harness.of_type("revision")[0]["carry_progress"] is False


def test_a_replacement_plan_is_repaired_not_asked_again(harness: Harness) -> None:
    """Seen with Qwen2.5-Coder 1.5B: a regenerated action plan named a tool that does not
    exist ('calculate_expression') and was re-asked, as a fresh plan no longer is."""
    regenerated = actions_reply("task_1", "task_2", tool="calculate_expression")
    harness.server.add(*regenerated_actions(regenerated))
    result = harness.run()
    assert result.status == "completed"
    assert harness.kinds().count("replan_actions") == 1
    [repaired] = harness.of_type("plan_repaired")
    assert any("calculate_expression" in line for line in repaired["repairs"])
    [revision] = harness.of_type("revision")
    tools = {a["tool"] for a in revision["updated_plan"]["action_plan"]["actions"]}
    assert "calculate_expression" not in tools
