"""The tracking comment: content per state, neutralised model text, the 65,536-character limit."""

from __future__ import annotations

from datetime import UTC, datetime

from planner.ci.forges.base import TRACKING_MARKER
from planner.ci.report.tracking import (
    MAX_COMMENT_CHARS,
    TrackingView,
    earlier_runs,
    neutralize,
    render_tracking,
    run_line,
)
from planner.outcome.result import PassResult, TaskView, Usage


def result(status: str = "completed", tasks: int = 2, **fields: object) -> PassResult:
    views = [
        TaskView(id=f"task_{i}", description=f"Do step {i}", status="completed")
        for i in range(1, tasks + 1)
    ]
    usage = Usage(model_calls=4, prompt_tokens=1200, completion_tokens=300)
    return PassResult.model_validate(
        {
            "status": status,
            "goal": "Add docs",
            "tasks": views,
            "usage": usage,
            "actions": 3,
            **fields,
        }
    )


def test_working_comment_before_any_model_call() -> None:
    body = render_tracking(
        TrackingView(
            state="working",
            actor="octo",
            event="issues.labeled",
            branch="planner/issue-1",
            branch_url="https://example.test/tree/planner/issue-1",
            run_url="https://example.test/runs/9",
        )
    )
    assert body.startswith(TRACKING_MARKER + "\n### 🤖 planner · ⏳ Working")
    assert "for @octo (issues.labeled)" in body
    assert "[CI run](https://example.test/runs/9)" in body
    assert "Branch [`planner/issue-1`](https://example.test/tree/planner/issue-1)" in body
    assert "Execution Plan" not in body and "Model calls" not in body


def test_completed_comment_has_checklist_links_and_usage() -> None:
    view = TrackingView(
        state="completed",
        actor="octo",
        event="issues.labeled",
        result=result(),
        pull_label="#2",
        pull_url="https://example.test/pull/2",
    )
    body = render_tracking(view)
    assert "✅ Done" in body
    assert "- [x] **task_1**: Do step 1" in body and "*Progress: 2/2 (100%) complete*" in body
    assert "Pull request [#2](https://example.test/pull/2)" in body
    assert "Model calls: 4 · tokens: 1,500 (1,200 prompt + 300 completion) · actions: 3" in body
    assert "**Why:**" not in body


def test_needs_input_comment_says_why_and_what_to_do() -> None:
    stuck = result(
        "needs_human",
        stop_reason="clarification needed: which format?",
        messages=["I need to know the format."],
        questions=["JSON or YAML?"],
    )
    body = render_tracking(TrackingView(state="needs_human", result=stuck, phrase="/planner"))
    assert "🙋 Needs your input" in body
    assert "**Why:** clarification needed: which format?" in body
    assert "> I need to know the format." in body and "- ❓ JSON or YAML?" in body
    assert "Answer with `/planner <your answer>` to continue." in body


def test_paused_and_failed_comments_point_to_resume() -> None:
    paused = render_tracking(TrackingView(state="in_progress", result=result("in_progress")))
    assert "`/planner resume` to continue" in paused
    failed = render_tracking(TrackingView(state="failed", reason="push rejected"))
    assert "❌ Failed" in failed and "**Why:** push rejected" in failed


def test_model_text_cannot_inject_markup_mentions_or_markers() -> None:
    hostile = result(goal="<img src=https://evil.test/x.png> ping @everyone")
    hostile.tasks[0].description = "<!-- planner:tracking --> @octo-org/admins"
    body = render_tracking(TrackingView(state="completed", result=hostile))
    assert "<img" not in body and "&lt;img" in body
    assert body.count(TRACKING_MARKER) == 1
    assert "@everyone" not in body and "@octo-org" not in body
    assert neutralize("a <b> & @c") == "a &lt;b&gt; &amp; @\u200bc"


def test_run_log_round_trips() -> None:
    view = TrackingView(
        state="completed", actor="octo", event="issues.labeled", result=result(), run_url="u"
    )
    line = run_line(view, datetime(2025, 3, 3, 10, 0, tzinfo=UTC))
    assert line == (
        "- 2025-03-03 10:00 UTC · issues.labeled by @\u200bocto · ✅ Done · "
        "4 model calls, 1,500 tokens · [CI run](u)"
    )
    view.earlier_runs = [line, line.replace("10:00", "11:00")]
    body = render_tracking(view)
    assert earlier_runs(body) == view.earlier_runs
    assert earlier_runs("no log here") == []


def test_copied_run_log_lines_are_made_inert_once() -> None:
    hostile = (
        "- 2025-03-03 10:00 UTC · <img src=https://evil.test/t.png> @octo-org/admins "
        "<!-- planner:tracking --> & more"
    )
    body = "\n".join(
        ["<!-- planner:runs -->", hostile, "- plain & simple", "<!-- /planner:runs -->"]
    )
    [line, plain] = earlier_runs(body)
    assert "<" not in line and ">" not in line and "@octo" not in line
    assert line.startswith("- 2025-03-03 10:00 UTC · &lt;img src=")
    assert "@\u200bocto-org/admins" in line and "&amp; more" in line
    assert plain == "- plain &amp; simple"
    again = render_tracking(TrackingView(state="completed", earlier_runs=[line, plain]))
    assert earlier_runs(again) == [line, plain]  # copied run after run, escaped only once


def test_the_limit_drops_old_runs_first_and_keeps_the_checklist() -> None:
    many = [f"- run {i} " + "x" * 200 for i in range(400)]
    view = TrackingView(state="completed", result=result(tasks=50), earlier_runs=many)
    body = render_tracking(view)
    assert len(body) <= MAX_COMMENT_CHARS
    assert "earlier runs not shown" in body
    kept = earlier_runs(body)
    assert kept and kept[-1] == many[-1] and kept[0] != many[0]
    assert all(f"**task_{i}**" in body for i in range(1, 51))


def test_long_messages_are_shortened_before_the_checklist_is_touched() -> None:
    long = result("needs_human", messages=["m" * 40_000, "n" * 40_000], tasks=30)
    body = render_tracking(TrackingView(state="needs_human", result=long))
    assert len(body) <= MAX_COMMENT_CHARS
    assert all(f"**task_{i}**" in body for i in range(1, 31))
    assert "…" in body


def test_a_small_limit_still_yields_a_bounded_body() -> None:
    body = render_tracking(TrackingView(state="completed", result=result(tasks=40)), limit=1_000)
    assert len(body) <= 1_000 and body.endswith("(cut to fit the comment size limit)")
