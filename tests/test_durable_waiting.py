"""Waiting states keep their promises: the real entry point on the fake forges.

A question the final evaluation asked is answered by a comment: the answer feeds the final
evaluation again (completed tasks keep their ticks, no new plan is made).
"""

from __future__ import annotations

from tests.plans import completion, decision, evaluation, review_ok
from tests.support.durable import CiJobs, jobs_fixture, one_task_plan

REPLANNING = {"REPLANNING_ENABLED": "true", "REFLECTION_ENABLED": "true"}
ASK = decision(
    True,
    0.9,
    "the issue does not say whether the changelog needs a date",
    evaluation_result="partial",
    replan_type="clarification_request",
    clarification_needed=True,
    clarification_questions=["Should each release in the changelog carry a date?"],
    assumptions_to_make=["no dates"],
)


jobs = jobs_fixture("Changelog", "Add CHANGELOG.md.")


def test_an_answer_to_the_final_evaluations_question_feeds_the_final_evaluation(
    jobs: CiJobs,
) -> None:
    plan, write, finish, _ = one_task_plan("CHANGELOG.md")
    asked = jobs.run(
        jobs.labelled(), [plan, review_ok(), write, finish, evaluation(**ASK)], env=REPLANNING
    )
    assert asked.returncode == 0, asked.stdout
    [comment] = jobs.tracking()
    assert "- [x] **task_1**" in comment.body

    answered = jobs.run(
        jobs.comment("/planner no dates, please"),
        [evaluation(), completion(done=True)],
        env=REPLANNING,
    )

    assert answered.returncode == 0, answered.stdout
    assert jobs.kinds == ["replan_reflection", "completion"]  # no planning request: same plan
    [comment] = jobs.tracking()
    assert "✅ Done" in comment.body and "- [x] **task_1**" in comment.body
    plans = [e for e in jobs.history() if e["type"] == "plan"]
    assert len(plans) == 1
    resolved = [e for e in jobs.history() if e["type"] == "clarification_resolved"]
    assert [e["resolution"] for e in resolved] == ["answered"]
    assert "no dates, please" in resolved[0]["answer"]
