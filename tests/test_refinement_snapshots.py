"""Snapshots of what refinement shows the model (judge, replan and follow-up prompts) and people
(the quality lines of the checklist and tracking comment, the PR body's final judgement)."""

from __future__ import annotations

from planner.ci.report.tracking import TrackingView, final_judgement_lines, render_tracking
from planner.core.interfaces import ToolSpec
from planner.outcome.result import PassResult, QualityNote, TaskView, render_checklist
from planner.plan.documents import PlanningReply
from planner.refinement.judge import judge_view
from planner.text.issue import IssueContext
from planner.text.prompts import render
from tests.plans import plan_doc
from tests.snapshot import assert_snapshot

ISSUE = IssueContext(
    repository="octo/repo",
    number="7",
    title="Add a changelog",
    body="Please add CHANGELOG.md.<!-- hidden -->",
    instruction="also mention v0.1",
)
TOOLS = [
    ToolSpec(name="read_file", description="Read a file."),
    ToolSpec(name="write_file", description="Write a file."),
]
PLAN = PlanningReply.model_validate(plan_doc("task_1", "task_2")).plan()
TASKS = [
    TaskView(id="task_1", description="Do task_1", status="completed", summary="wrote it"),
    TaskView(id="task_2", description="Do task_2", status="completed", summary=""),
]


def test_judge_prompts() -> None:
    plan = render("refinement_judge_plan.md.j2", issue=judge_view(ISSUE), plan=PLAN, tools=TOOLS)
    result = render(
        "refinement_judge_result.md.j2",
        issue=judge_view(ISSUE),
        plan=PLAN,
        tasks=TASKS,
        diff="diff --git a/CHANGELOG.md b/CHANGELOG.md\n+# Changelog\n",
        tests="",
    )
    system = render(
        "system_planning.md.j2",
        phase="quality_judge",
        strategy="chain_of_thought",
        decomposition_level="moderate",
        reflection_interval=3,
    )
    assert "<!-- hidden -->" not in plan and "also mention v0.1" in plan
    assert_snapshot("refinement_judge_prompts.txt", "\n=====\n".join([system, plan, result]))


def test_replan_and_follow_up_prompts() -> None:
    replan = render(
        "refinement_replan.md.j2",
        planning_request="Plan the work for issue #7 of octo/repo.\n(planning request here)\n",
        previous_plan=PLAN.model_dump_json(),
        score=40,
        acceptable=False,
        issues=["nothing checks the file"],
        suggestions=["name the sections"],
        guidance="Use Keep a Changelog.",
        completed=["task_1"],
    )
    follow = render(
        "refinement_follow_up.md.j2",
        plan=PLAN,
        checklist="- [x] **task_1**: Do task_1\n- [x] **task_2**: Do task_2\n",
        score=55,
        acceptable=False,
        issues=["v0.1 is not mentioned"],
        suggestions=[],
        tools=TOOLS,
        existing=["task_1", "task_2"],
        max_new=98,
    )
    accepted = render(
        "refinement_follow_up.md.j2",
        plan=PLAN,
        checklist="- [x] **task_1**: Do task_1\n- [x] **task_2**: Do task_2\n",
        score=88,
        acceptable=True,
        issues=[],
        suggestions=["link the changelog from the README"],
        tools=TOOLS,
        existing=["task_1", "task_2"],
        max_new=98,
    )
    assert "not acceptable" not in accepted and "the reviewer did not name" not in accepted
    assert_snapshot("refinement_replan_prompts.txt", "\n=====\n".join([replan, follow, accepted]))


def test_comment_lines() -> None:
    result = PassResult(
        status="completed",
        goal="Add a changelog",
        tasks=TASKS,
        plan_quality=QualityNote(score=82, attempts=2, refinements=1, max_refinements=2),
        result_quality=QualityNote(
            score=90, suggestions=["Link it from the <README>", "@someone review"]
        ),
    )
    checklist = render_checklist(result)
    assert "*Quality 82/100 after 1 of 2 refinement attempts*" in checklist
    view = TrackingView(state="completed", actor="alice", event="issues", result=result)
    pull = "\n".join(final_judgement_lines(result))
    assert "&lt;README&gt;" in pull and "@\u200bsomeone" in pull  # model text made inert
    unscored = PassResult(status="in_progress", tasks=TASKS, plan_quality=QualityNote(attempts=1))
    assert "*Quality not scored, first judgement*" in render_checklist(unscored)
    assert_snapshot(
        "refinement_comment_lines.md",
        "\n=====\n".join([checklist, render_tracking(view), pull]),
    )


def test_no_quality_lines_without_a_judgement() -> None:
    plain = PassResult(status="completed", goal="Add a changelog", tasks=TASKS)
    assert "Quality" not in render_checklist(plain)
    assert final_judgement_lines(plain) == []
