"""End to end: an action fails, the model decides a partial replan, people see the revision."""

from __future__ import annotations

from tests.harness import Harness
from tests.plans import partial_replan_steps


def test_failed_action_partial_replan_revised_checklist_and_completion(harness: Harness) -> None:
    harness.server.add(*partial_replan_steps())
    result = harness.run()

    assert result.status == "completed"
    assert [(t.id, t.status) for t in result.tasks] == [
        ("task_1", "completed"),
        ("task_2b", "completed"),
    ]
    assert harness.kinds() == [
        "planning",
        "replan_review",
        "execute",
        "execute",
        "execute",
        "replan_execution",
        "replan_revise",
        "execute",
        "replan_execution",
        "execute",
        "replan_reflection",
        "completion",
    ]
    # The tracking comment showed the revision while the pass ran, and at the end.
    revised = [c for c in harness.reporter.checklists if "(Revised #1)" in c]
    assert revised and "- [x] **task_1**: Do task_1" in revised[0]  # the tick survived
    assert "- [ ] **task_2b**: Do task_2b" in revised[0]
    assert "**Previous Progress**: 1/2" in revised[0]
    assert "<summary>📜 Previous Plan History</summary>" in revised[0]
    assert "### Original Plan (" in revised[0] and "- [ ] task_2: Do task_2" in revised[0]
    # The task's prompt has the revised plan, not the plans before it (a small model copied them).
    task_prompt = harness.server.requests[7].body["messages"][1]["content"]
    assert "(Revised #1)" in task_prompt and "- [ ] **task_2b**: Do task_2b" in task_prompt
    assert "Previous Plan History" not in task_prompt and "Original Plan" not in task_prompt
    final = harness.reporter.tracking_comment
    assert "*Progress: 2/2 (100%) complete*" in final and "*Current Plan: #2 (started at" in final
    # One revision comment, posted once, naming the decision.
    comments = harness.reporter.comments
    assert [c.kind for c in comments] == ["plan_revision"]
    assert result.notifications == comments
    body = comments[0].body
    assert body.startswith("## 🔄 Plan Revision Decided by AI")
    assert "**Phase**: Execution" in body and "**Confidence**: 90%" in body
    assert "**Replan**: level 2, partial replan" in body and "**Status**: executed" in body
    assert "- task_2 writes outside the workspace" in body
    assert "*2026-11-01 10:00:00 UTC*" in body
    # History: the decision with its §10.1 fields, plans before and after.
    executed = [e for e in harness.of_type("replan_decision") if e["executed"]]
    assert len(executed) == 1
    record = executed[0]
    assert record["phase"] == "execution" and record["result"] == "success"
    assert record["llm_decision"]["replan_type"] == "partial_replan"
    assert record["confidence"] == 0.9 and record["override_reason"] is None
    assert record["duration_ms"] >= 0 and record["decided_at"] == "2026-11-01T10:00:00Z"
    assert [t["id"] for t in record["plan_before"]["task_decomposition"]["subtasks"]] == [
        "task_1",
        "task_2",
    ]
    assert [t["id"] for t in record["plan_after"]["task_decomposition"]["subtasks"]] == [
        "task_1",
        "task_2b",
    ]
    revision = harness.of_type("revision")[0]
    assert revision["carry_progress"] is True and revision["review_phases"] == []
