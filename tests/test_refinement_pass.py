"""Refinement inside a pass (scripted model over a real socket, real history, real tools)."""

from __future__ import annotations

from planner.testing.steps import Step, reply_json, reply_text
from tests.harness import Harness
from tests.plans import (
    REFINEMENT_ON,
    completed,
    decision,
    evaluation_ok,
    execution_decision,
    finish,
    follow_up,
    judge_plan,
    judge_result,
    judgement,
    plan_doc,
    planned,
    planning,
    refined,
    revise_reply,
    subtask,
    write,
    wrote,
)


def test_a_low_scored_plan_is_replanned_with_the_feedback_and_then_runs(harness: Harness) -> None:
    harness.server.add(
        *planned("task_1", "task_2"),
        judge_plan(40, False, "nothing checks the files", suggestions=("name the files",)),
        refined("task_1", "task_2", "task_3"),
        judge_plan(85, True),  # no second replanning review: the judge just vetted it
        *wrote("a.txt", "b.txt"),
        write("c.txt"),
        execution_decision(False),  # the periodic checkpoint after three actions
        finish(),
        evaluation_ok(),
        judge_result(90, True),
        *completed(completed=3)[1:],
    )
    result = harness.run(**REFINEMENT_ON)

    assert result.status == "completed"
    assert [t.id for t in result.tasks] == ["task_1", "task_2", "task_3"]
    kinds = harness.kinds()
    assert kinds[:6] == [
        "planning",
        "replan_review",
        "refinement_judge_plan",
        "refinement_replan",
        "refinement_judge_plan",
        "execute",
    ]
    # The replan is the planning call again, with the judge's feedback and the old plan.
    replan = harness.prompt(3)
    assert "## Quality review of that plan" in replan and "40/100 and not acceptable" in replan
    assert "- nothing checks the files" in replan and "- name the files" in replan
    assert '"id":"task_2"' in replan and "Plan the work for issue #7" in replan
    assert harness.server.requests[3].body["messages"][0]["content"].count("## Planning Process")
    # Judgements and decisions are recorded with their figures.
    judged = harness.of_type("quality_judgement")
    assert [(j["subject"], j["attempt"], j["score"], j["acceptable"]) for j in judged] == [
        ("plan", 1, 40, False),
        ("plan", 2, 85, True),
        ("result", 1, 90, True),
    ]
    assert judged[0]["issues"] == ["nothing checks the files"]
    first, second, final = harness.of_type("refinement_decision")
    assert (first["decision"], first["rule"], first["priority"]) == ("replan", "not_acceptable", 4)
    assert first["stagnation"] is None and first["attempts"] == 0
    assert (second["decision"], second["rule"], second["attempts"]) == ("accept", "acceptable", 1)
    assert second["stagnation"] == {
        "previous_score": 40,
        "score": 85,
        "improvement": 45.0,
        "relative_improvement": 112.5,
        "stagnated": False,
    }
    assert second["structure_validation"]["outcome"] == "valid"
    assert (final["subject"], final["decision"]) == ("result", "accept")
    replanned = harness.of_type("refinement_replan")[0]
    assert replanned["changed"] and replanned["feedback"]["issues"] == ["nothing checks the files"]
    # The refined plan replaced the first one before anything ran, as a visible revision.
    revision = harness.of_type("revision")[0]
    assert (revision["source"], revision["subject"], revision["review_phases"]) == (
        "refinement",
        "plan",
        [],
    )
    assert revision["reason"] == "quality review 40/100: nothing checks the files"
    assert harness.types().index("action") > harness.types().index("refinement_decision")
    assert "**Revision Reason**: quality review 40/100: nothing checks the files" in (
        harness.reporter.tracking_comment
    )
    # People see the score and the refinement attempts, counted as max_refinement_attempts
    # counts them (replans with the judge's feedback), not as judgements.
    assert "*Quality 85/100 after 1 of 2 refinement attempts*" in (
        harness.reporter.tracking_comment
    )
    assert "*Result quality 90/100, first judgement*" in harness.reporter.tracking_comment
    assert result.plan_quality is not None and result.plan_quality.attempts == 2
    assert result.plan_quality.refinements == 1


def test_the_judge_sees_goal_tasks_dependencies_and_tools_but_not_the_conversation(
    harness: Harness,
) -> None:
    harness.server.add(
        *planned("task_1", "task_2"),
        judge_plan(80, True),
        *wrote("a.txt", "b.txt"),
        evaluation_ok(),
        judge_result(80, True),
        *completed(completed=2)[1:],
    )
    harness.run(**REFINEMENT_ON)
    request = harness.server.requests[2]
    messages = request.body["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]
    prompt = messages[1]["content"]
    assert "Write the files" in prompt  # the goal
    assert "- task_2 (low; after task_1): Do task_2" in prompt
    assert "  - write_file: write task_2" in prompt  # its planned action
    assert "Tools the tasks can use: read_file, write_file" in prompt
    assert "Plan completed. Starting execution." not in prompt  # the planner's own reply
    assert "Past planning and execution history" not in prompt
    assert "## Phase: quality judgement" in messages[0]["content"]
    assert request.body["response_format"]["json_schema"]["name"] == "refinement_judge_plan"


def test_rejected_plan_stops_before_any_action_and_guidance_starts_a_new_attempt(
    harness: Harness,
) -> None:
    one_attempt = {**REFINEMENT_ON, "planning.refinement.max_refinement_attempts": 1}
    harness.server.add(
        *planned("task_1", "task_2"),
        judge_plan(30, False, "the plan writes the wrong files"),
        refined("task_1", "task_2", tool="read_file"),
        judge_plan(32, False, "still the wrong files"),
    )
    first = harness.run(**one_attempt)

    assert first.status == "needs_human"
    # "after N attempts" is the count max_refinement_attempts limits: 1 of 1, not 2.
    assert first.stop_reason == (
        "the quality judge rejected the plan (32/100 after 1 of 1 refinement attempts)"
    )
    assert "*Quality 32/100 after 1 of 1 refinement attempts*" in (
        harness.reporter.tracking_comment
    )
    assert "Quality issue: still the wrong files" in first.messages
    assert any("/planner <guidance>" in message for message in first.messages)
    assert "action" not in harness.types() and "task" not in harness.types()
    decision = harness.of_type("refinement_decision")[-1]
    assert (decision["decision"], decision["rule"]) == ("reject", "attempts_exhausted")

    # The same trigger without guidance changes nothing and costs no model call.
    calls = len(harness.server.requests)
    again = harness.run(**one_attempt)
    assert again.status == "needs_human" and len(harness.server.requests) == calls

    harness.server.add(
        refined("task_1", "task_2b", chain=False),
        judge_plan(88, True),
        *wrote("a.txt", "b.txt"),
        evaluation_ok(),
        judge_result(90, True),
        *completed(completed=2)[1:],
    )
    third = harness.answer("Write a.txt and b.txt only", **one_attempt)

    assert third.status == "completed"
    guided = harness.prompt(calls)
    assert "the people on the issue gave this guidance" in guided
    assert "Write a.txt and b.txt only" in guided and "- still the wrong files" in guided
    replanned = harness.of_type("refinement_replan")[-1]
    assert replanned["guided"] and replanned["feedback"]["guidance"] == "Write a.txt and b.txt only"
    accepted = harness.of_type("refinement_decision")[-2]
    assert (accepted["decision"], accepted["attempts"]) == ("accept", 0)  # a new round
    assert (harness.workspace / "b.txt").exists()


def review_judging(score: int, ok: bool, *issues: str) -> Step:
    """The combined plan review whose reply also carries the plan's quality judgement."""
    decisions = {
        p: decision() for p in ("goal_understanding", "task_decomposition", "action_sequence")
    }
    return reply_json(
        "replan_review", {**decisions, "quality_judgement": judgement(score, ok, issues)}
    )


def test_the_plan_is_judged_inside_the_plan_review_one_call_instead_of_two(
    harness: Harness,
) -> None:
    """Replanning's plan review and refinement's plan judgement read the same plan; with both
    on (the default) the judgement is a section of the review request, so the plan is read
    once (the planning phase's tokens stay under the seed's 2,000)."""
    harness.server.add(
        planning("task_1"),
        review_judging(88, True),
        *wrote("a.txt"),
        evaluation_ok(),
        judge_result(90, True),
        *completed()[1:],
    )

    result = harness.run(**REFINEMENT_ON)

    assert result.status == "completed", result.stop_reason
    assert "refinement_judge_plan" not in harness.kinds()
    review_prompt = harness.prompt(harness.kinds().index("replan_review"))
    assert "## 4. quality_judgement" in review_prompt and "is_acceptable: bool" in review_prompt
    [judged, _] = harness.of_type("quality_judgement")
    assert (judged["subject"], judged["score"], judged["unavailable"]) == ("plan", 88, False)
    assert "*Quality 88/100, first judgement*" in harness.reporter.tracking_comment


def test_a_review_without_a_usable_judgement_falls_back_to_the_judge_call(
    harness: Harness,
) -> None:
    """A review reply that leaves the judgement out (or garbles it) loses nothing: the judge is
    asked on its own, as before."""
    harness.server.add(
        *planned("task_1"),  # the review reply has no quality_judgement
        judge_plan(85, True),
        *wrote("a.txt"),
        evaluation_ok(),
        judge_result(90, True),
        *completed()[1:],
    )

    result = harness.run(**REFINEMENT_ON)

    assert result.status == "completed", result.stop_reason
    assert harness.kinds().count("refinement_judge_plan") == 1
    assert "## 4. quality_judgement" in harness.prompt(harness.kinds().index("replan_review"))


def test_a_final_judgement_that_accepts_with_suggestions_is_not_called_a_rejection(
    harness: Harness,
) -> None:
    """refine_suggestions_on_success: the judge accepted the work and suggested more. The
    follow-up prompt used to tell the model its work was "not acceptable yet" and had a problem
    the reviewer "did not name"; it must ask for the suggestions as what they are."""
    harness.server.add(
        *planned("task_1"),
        judge_plan(80, True),
        *wrote("a.txt"),
        evaluation_ok(),
        judge_result(85, True, suggestions=("mention a.txt in README",)),
        follow_up({**subtask("task_2", "task_1"), "description": "Mention a.txt in README"}),
        write("README.md", "# demo\n\nSee a.txt.\n"),
        finish(),
        evaluation_ok(),
        judge_result(92, True),
        *completed(completed=2)[1:],
    )
    suggestions_on = {"planning.refinement.refine_suggestions_on_success": True}

    result = harness.run(**REFINEMENT_ON, **suggestions_on)

    assert result.status == "completed", result.stop_reason
    follow = harness.prompt(harness.kinds().index("refinement_follow_up"))
    assert "judged the finished work 85/100 and acceptable, with suggestions" in follow
    assert "## The reviewer's suggestions\n- mention a.txt in README" in follow
    assert "Add the tasks that carry out these suggestions." in follow
    assert "not acceptable" not in follow and "did not name the problem" not in follow
    assert (harness.workspace / "README.md").read_text() == "# demo\n\nSee a.txt.\n"


def test_a_final_judgement_that_finds_a_gap_adds_a_task_that_then_runs(harness: Harness) -> None:
    harness.server.add(
        *planned("task_1"),
        judge_plan(80, True),
        *wrote("a.txt"),
        evaluation_ok(),
        judge_result(55, False, "README does not mention a.txt"),
        follow_up({**subtask("task_2", "task_1"), "description": "Mention a.txt in README"}),
        write("README.md", "# demo\n\nSee a.txt.\n"),
        finish(),
        evaluation_ok(),
        judge_result(92, True, suggestions=("add a test",)),
        *completed(completed=2)[1:],
    )
    result = harness.run(**REFINEMENT_ON)

    assert result.status == "completed"
    assert [(t.id, t.status) for t in result.tasks] == [
        ("task_1", "completed"),
        ("task_2", "completed"),
    ]
    follow = harness.prompt(harness.kinds().index("refinement_follow_up"))
    assert "- README does not mention a.txt" in follow and "existing ids: task_1" in follow
    judge = harness.prompt(harness.kinds().index("refinement_judge_result"))
    assert "+++ b/a.txt" in judge and "+hello" in judge  # the diff of the work
    assert "- task_1: done" in judge
    revision = harness.of_type("revision")[-1]
    assert (revision["source"], revision["subject"], revision["carry_progress"]) == (
        "refinement",
        "result",
        True,
    )
    assert revision["reason"] == "final quality review 55/100: README does not mention a.txt"
    assert result.result_quality is not None
    assert (result.result_quality.score, result.result_quality.attempts) == (92, 2)
    assert result.result_quality.suggestions == ["add a test"]
    # refinement revisions are not reflection revisions
    assert harness.of_type("replan_decision")[-1]["phase"] == "reflection"


def test_finished_work_that_stays_unacceptable_goes_to_a_person(harness: Harness) -> None:
    harness.server.add(
        *planned("task_1"),
        judge_plan(80, True),
        *wrote("a.txt"),
        evaluation_ok(),
        judge_result(40, False, "a.txt is empty of meaning"),
    )
    result = harness.run(**{**REFINEMENT_ON, "planning.refinement.max_refinement_attempts": 0})
    assert result.status == "needs_human"
    assert result.stop_reason.startswith("the quality judge rejected the finished work (40/100")
    assert "Quality issue: a.txt is empty of meaning" in result.messages
    assert "completion" not in harness.types()


def test_a_judge_without_a_usable_reply_does_not_hold_up_a_valid_plan(harness: Harness) -> None:
    harness.server.add(
        *planned("task_1"),
        reply_text("refinement_judge_plan", "I think it is fine"),
        reply_text("refinement_judge_plan", "really fine"),
        *wrote("a.txt"),
        evaluation_ok(),
        judge_result(90, True),
        *completed()[1:],
    )
    result = harness.run(**REFINEMENT_ON)
    assert result.status == "completed"
    judged = harness.of_type("quality_judgement")[0]
    assert judged["unavailable"] and judged["score"] is None
    decision = harness.of_type("refinement_decision")[0]
    assert (decision["decision"], decision["rule"]) == ("accept", "no_score")
    assert "*Quality not scored, first judgement*" in harness.reporter.tracking_comment


def test_a_pass_stopped_mid_refinement_resumes_at_the_same_step(harness: Harness) -> None:
    harness.server.add(*planned("task_1"), judge_plan(40, False, "too vague"))
    first = harness.run(**{**REFINEMENT_ON, "budget.max_model_calls": 3})
    assert first.status == "in_progress"
    assert harness.of_type("refinement_decision")[-1]["decision"] == "replan"

    harness.server.add(
        refined("task_1b"),
        judge_plan(80, True),
        *wrote("a.txt"),
        evaluation_ok(),
        judge_result(90, True),
        *completed()[1:],
    )
    second = harness.run(**REFINEMENT_ON)
    assert second.status == "completed"
    assert [j["attempt"] for j in harness.of_type("quality_judgement")] == [1, 2, 1]
    assert len(harness.of_type("refinement_replan")) == 1  # the replan ran once, not twice


def test_a_plan_changed_by_replanning_is_judged_again(harness: Harness) -> None:
    harness.server.add(
        *planned("task_1", "task_2"),
        judge_plan(80, True),
        *wrote("a.txt"),
        write("../outside.txt"),  # refused: a failed action
        execution_decision(
            True,
            confidence=0.9,
            replan_type="partial_replan",
            replan_level=2,
            reasoning="write inside the workspace",
        ),
        revise_reply(["task_1", "task_2b"], [subtask("task_1"), subtask("task_2b", "task_1")]),
        judge_plan(75, True),  # the changed plan, judged before it runs
        write("b.txt"),
        execution_decision(False),
        finish(),
        evaluation_ok(),
        judge_result(90, True),
        *completed(completed=2)[1:],
    )
    result = harness.run(**REFINEMENT_ON)
    assert result.status == "completed"
    judged = harness.of_type("quality_judgement")
    assert [(j["subject"], j["attempt"], j["score"]) for j in judged] == [
        ("plan", 1, 80),
        ("plan", 1, 75),  # a new round: replanning's change, not refinement's
        ("result", 1, 90),
    ]
    kinds = harness.kinds()
    assert kinds.index("replan_revise") < kinds.index("refinement_judge_plan", 3)
    executed = [e for e in harness.of_type("replan_decision") if e["executed"]]
    assert len(executed) == 1  # refinement did not spend replanning's counts


def test_a_replan_that_changes_nothing_is_not_judged_again(harness: Harness) -> None:
    """The same plan again: its judgement stands, the score did not move (stagnation), and
    without attempts left it is rejected - one judge call, no loop."""
    harness.server.add(
        *planned("task_1"),
        judge_plan(45, False, "too vague"),
        refined("task_1"),
        refined("task_1"),
    )
    result = harness.run(**REFINEMENT_ON)
    assert result.status == "needs_human"
    assert harness.kinds().count("refinement_judge_plan") == 1
    decisions = [(d["decision"], d["rule"]) for d in harness.of_type("refinement_decision")]
    assert decisions == [
        ("replan", "not_acceptable"),
        ("replan", "stagnation"),
        ("reject", "attempts_exhausted"),
    ]
    assert [r["changed"] for r in harness.of_type("refinement_replan")] == [False, False]


def test_refinement_revisions_leave_replannings_revision_cap_alone(harness: Harness) -> None:
    """max_revisions 1 caps replanning's plan revisions; refinement's revision before the plan
    ran does not use it up, so the partial replan after a failed action still runs."""
    harness.server.add(
        *planned("task_1", "task_2"),
        judge_plan(40, False, "task_2 is vague"),
        refined("task_1", "task_2", tool="read_file"),
        judge_plan(80, True),
        *wrote("a.txt"),
        write("../outside.txt"),  # refused: a failed action
        execution_decision(
            True, confidence=0.9, replan_type="partial_replan", replan_level=2, reasoning="inside"
        ),
        revise_reply(["task_1", "task_2b"], [subtask("task_1"), subtask("task_2b", "task_1")]),
        judge_plan(78, True),
        write("b.txt"),
        execution_decision(False),
        finish(),
        evaluation_ok(),
        judge_result(90, True),
        *completed(completed=2)[1:],
    )
    result = harness.run(**{**REFINEMENT_ON, "planning.revision.max_revisions": 1})
    assert result.status == "completed"
    assert [r["source"] for r in harness.of_type("revision")] == ["refinement", "replanning"]
    assert [e["outcome"] for e in harness.of_type("replan_decision") if e["executed"]] == [
        "executed"
    ]


def test_a_replan_that_breaks_the_structure_keeps_the_old_tasks_and_takes_what_fits(
    harness: Harness,
) -> None:
    """The reply triples the plan (structure broken); individual fallback keeps the previous
    tasks and takes over only task_1's rewrite, and the next decision records how."""
    rewritten = plan_doc("task_1", "task_2", "n1", "n2", "n3", "n4")
    rewritten["task_decomposition"]["subtasks"][0]["description"] = "Read README first"
    harness.server.add(
        *planned("task_1", "task_2"),
        judge_plan(40, False, "task_1 is vague"),
        reply_json("refinement_replan", rewritten),
        judge_plan(70, True),
        *wrote("a.txt", "b.txt"),
        evaluation_ok(),
        judge_result(90, True),
        *completed(completed=2)[1:],
    )
    result = harness.run(**REFINEMENT_ON)
    assert result.status == "completed"
    assert [(t.id, t.description) for t in result.tasks] == [
        ("task_1", "Read README first"),
        ("task_2", "Do task_2"),
    ]
    structure = harness.of_type("refinement_replan")[0]["structure_validation"]
    assert structure["outcome"] == "fallback" and structure["taken"] == ["task_1"]
    assert "the task count changed from 2 to 6 (200%)" in structure["problems"]
    decided = harness.of_type("refinement_decision")[1]
    assert decided["structure_validation"] == structure and decided["decision"] == "accept"
