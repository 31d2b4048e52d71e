"""approval.mode plan keeps what it staged (issue 25, item 2), end to end on the fake GitHub.

A pass in plan mode stages every change for one approval at the end. When a pass ends before
that (here its model-call budget), the staged changes must outlive it: the next run may bring
back only the issue's JSONL history (GitLab's artifacts carry nothing else), it must read the
staged content where it reads the file, and the approval must carry every staged change to the
branch — no task may stand ticked while its change is gone."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Any

import pytest

from planner.ci.forges.base import TRACKING_MARKER
from planner.testing.steps import reply_tool_calls
from tests.fake_forge import FakeGitHub
from tests.fake_forge.rig import Rig, github_rig, say
from tests.fake_forge.scenario import file_on, labeled_event
from tests.plans import finish, planning, write
from tests.support.durable import completion_step

QUIET = {
    "approval.mode": "plan",
    "planning.replanning.enabled": False,
    "planning.reflection.enabled": False,
}
BRANCH = "planner/issue-1"


@pytest.fixture
def rig(fake_github: FakeGitHub, tmp_path: Path) -> Rig:
    return github_rig(fake_github, tmp_path, "Two notes", "Add A.md, then B.md.")


def only_jsonl_travels(history: Path) -> None:
    """What a GitLab artifact brings back: the issue's JSONL history files, nothing else."""
    for path in list(history.iterdir()):
        if path.is_dir():
            shutil.rmtree(path)
        elif path.suffix != ".jsonl":
            path.unlink()


def sees_staged_a(body: dict[str, Any]) -> None:
    tool_results = [m["content"] for m in body["messages"] if m["role"] == "tool"]
    assert "[staged, not yet approved]\nA staged\n" in tool_results[-1]


def test_changes_staged_by_a_pass_that_stopped_reach_the_branch_after_approval(rig: Rig) -> None:
    fake = rig.fake
    assert isinstance(fake, FakeGitHub)
    first = [planning("task_1", "task_2"), write("A.md", "A staged\n"), finish()]
    budget = {"budget.max_model_calls": 3}  # the pass stops after task_1
    stopped = rig.run(labeled_event(), first, event_name="issues", **QUIET, **budget)
    assert stopped.status == "in_progress" and not fake.branch_exists(BRANCH)
    only_jsonl_travels(rig.history)

    read_a = reply_tool_calls("execute", [("read_file", {"path": "A.md"})])
    write_b = dataclasses.replace(write("B.md", "B staged\n"), expect=sees_staged_a)
    second = [read_a, write_b, finish()]  # then the staged changes are asked about
    waiting = say(rig, "/planner resume", second, **QUIET)
    assert waiting.status == "needs_human"
    [tracking] = [c.body for c in fake.comments_on(1) if TRACKING_MARKER in c.body]
    assert "`A.md`" in tracking and "`B.md`" in tracking

    done = say(rig, "/planner approve all", [completion_step()], **QUIET)
    assert done.status == "completed"
    assert file_on(fake.bare, BRANCH, "A.md") == "A staged"
    assert file_on(fake.bare, BRANCH, "B.md") == "B staged"


def test_tasks_whose_changes_wait_for_approval_are_not_ticked(rig: Rig) -> None:
    """Issue 44, item 3: beside "These changes were **not** made" the checklist said
    "2/2 (100%) complete". A task is done only once its change is on the branch."""
    fake = rig.fake
    assert isinstance(fake, FakeGitHub)
    script = [
        planning("task_1", "task_2"),
        write("A.md", "A staged\n"),
        finish(),
        write("B.md", "B staged\n"),
        finish(),
    ]
    waiting = rig.run(labeled_event(), script, event_name="issues", **QUIET)
    assert waiting.status == "needs_human"
    [tracking] = [c.body for c in fake.comments_on(1) if TRACKING_MARKER in c.body]
    assert "These changes were **not** made" in tracking
    assert "*Progress: 0/2 (0%) complete*" in tracking
    assert "- [ ] **task_1**: " in tracking and "⏸️ waiting for approval" in tracking
    assert "- [x]" not in tracking
    # Issue 57, item 1: every rendering of the plan shows the same: the job summary (rebuilt
    # from the history after the pass) and the Mermaid graph said "2/2 (100%)" and "(done)".
    summary = job_summary(rig, waiting)
    assert "*Progress: 0/2 (0%) complete*" in summary and "- [x]" not in summary
    assert summary.count("⏸️ waiting for approval") == 2
    graph = tracking[tracking.index("```mermaid") :]
    assert "(done)" not in graph and graph.count('(waiting for approval)"]:::waiting') == 2

    done = say(rig, "/planner approve all", [completion_step()], **QUIET)
    assert done.status == "completed"
    [tracking] = [c.body for c in fake.comments_on(1) if TRACKING_MARKER in c.body]
    assert "*Progress: 2/2 (100%) complete*" in tracking and "waiting for approval" not in tracking
    summary = job_summary(rig, done)
    assert "*Progress: 2/2 (100%) complete*" in summary and "waiting for approval" not in summary
    assert tracking[tracking.index("```mermaid") :].count("(done)") == 2
    [pull] = fake.pulls.values()
    assert "*Progress: 2/2 (100%) complete*" in pull.body


def job_summary(rig: Rig, outcome: Any) -> str:
    """The job summary the action writes after this run."""
    from planner.ci.report.summary import SummaryFacts, open_history, render_summary

    history = open_history(rig.history, rig.fake.repository, 1)
    return render_summary(outcome, SummaryFacts(history=history, workspace=rig.tmp))
