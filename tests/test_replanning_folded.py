"""decision_mode: folded — the decision rides in the phase's own reply; no extra calls."""

from __future__ import annotations

from typing import Any

from planner.testing.steps import reply_json, reply_tool_calls
from tests.harness import Harness
from tests.plans import (
    decision,
    finish,
    plan_doc,
    revise_reply,
    subtask,
    tasks_reply,
    write,
)

FOLDED = {"planning.replanning.decision_mode": "folded"}
FINE = {
    "goal_understanding": decision(),
    "task_decomposition": decision(),
    "action_sequence": decision(),
}


def folded_plan(*task_ids: str, review: dict[str, Any] | None = None) -> Any:
    return reply_json("planning", {**plan_doc(*task_ids), "replan_review": review or FINE})


def folded_completion(replan: dict[str, Any] | None = None, completed: int = 1) -> Any:
    document: dict[str, Any] = {
        "phase": "completion",
        "done": True,
        "comment": "done",
        "summary": {"goal_achieved": True, "tasks_completed": completed},
        "replan_decision": replan or decision(evaluation_result="success"),
    }
    return reply_json("completion", document)


def test_no_decision_calls_at_all(harness: Harness) -> None:
    harness.server.add(folded_plan("task_1"), write("../bad"), finish(), folded_completion())
    result = harness.run(**FOLDED)
    assert result.status == "completed"
    assert harness.kinds() == ["planning", "execute", "execute", "completion"]
    planning_prompt = harness.prompt(0)
    assert 'add "replan_review" to your reply' in planning_prompt
    tools = [t["function"]["name"] for t in harness.server.requests[1].body["tools"]]
    assert "request_replan" in tools
    assert 'add "replan_decision" to' in harness.prompt(3)
    phases = [e["phase"] for e in harness.of_type("replan_decision")]
    assert phases == ["goal_understanding", "task_decomposition", "action_sequence", "reflection"]
    assert all(e["mode"] == "folded" for e in harness.of_type("replan_decision"))


def test_folded_review_redecomposes_and_the_new_reply_carries_its_own_review(
    harness: Harness,
) -> None:
    wants = {**FINE, "task_decomposition": decision(True, 0.9, replan_type="task_redecomposition")}
    regenerated = tasks_reply("s_1")
    body = regenerated.content or ""
    import json

    document = json.loads(body)
    document["replan_review"] = {
        "task_decomposition": decision(),
        "action_sequence": decision(),
    }
    harness.server.add(
        folded_plan("task_1", review=wants),
        reply_json("replan_tasks", document),
        write("s.txt"),
        finish(),
        folded_completion(),
    )
    result = harness.run(**FOLDED)
    assert result.status == "completed" and [t.id for t in result.tasks] == ["s_1"]
    assert "replan_review" not in harness.kinds()
    assert 'add "replan_review" to your reply' in harness.prompt(1)
    accepted = harness.of_type("plan_review")
    assert accepted and accepted[-1]["phases"] == ["task_decomposition", "action_sequence"]


def test_request_replan_tool_replans_during_execution(harness: Harness) -> None:
    harness.server.add(
        folded_plan("task_1", "task_2"),
        write("a.txt"),
        finish(),
        write("../bad"),
        reply_tool_calls(
            "execute",
            [
                (
                    "request_replan",
                    {
                        "confidence": 0.9,
                        "reasoning": "wrong place",
                        "replan_type": "partial_replan",
                        "replan_level": 2,
                    },
                )
            ],
        ),
        revise_reply(["task_1", "task_3"], [subtask("task_1"), subtask("task_3", "task_1")]),
        write("c.txt"),
        finish(),
        folded_completion(completed=2),
    )
    result = harness.run(**FOLDED)
    assert result.status == "completed" and [t.id for t in result.tasks] == ["task_1", "task_3"]
    assert [n.kind for n in result.notifications] == ["plan_revision"]
    record = next(e for e in harness.of_type("replan_decision") if e["executed"])
    assert record["phase"] == "execution" and "write_file failed" in record["trigger"]


def test_request_replan_retry_is_answered_in_the_conversation(harness: Harness) -> None:
    harness.server.add(
        folded_plan("task_1"),
        write("../bad"),
        reply_tool_calls(
            "execute",
            [("request_replan", {"confidence": 0.9, "reasoning": "flaky", "replan_type": "retry"})],
        ),
        write("ok.txt"),
        finish(),
        folded_completion(),
    )
    assert harness.run(**FOLDED).status == "completed"
    tool_answers = [
        m["content"] for m in harness.server.requests[3].body["messages"] if m["role"] == "tool"
    ]
    assert tool_answers[-1].startswith("Retry approved")


def test_request_replan_refused_tells_the_model(harness: Harness) -> None:
    harness.server.add(
        folded_plan("task_1"),
        reply_tool_calls(
            "execute",
            [
                (
                    "request_replan",
                    {"confidence": 0.1, "reasoning": "unsure", "replan_type": "partial_replan"},
                )
            ],
        ),
        finish(),
        folded_completion(),
    )
    assert harness.run(**FOLDED).status == "completed"
    answer = [m for m in harness.server.requests[2].body["messages"] if m["role"] == "tool"]
    assert answer[-1]["content"].startswith("No replan")


def test_completion_reply_revises_the_plan_before_it_is_recorded(harness: Harness) -> None:
    more = decision(
        True,
        0.9,
        "a test is missing",
        replan_type="plan_revision",
        additional_actions=["add a test"],
        evaluation_result="partial_success",
    )
    harness.server.add(
        folded_plan("task_1"),
        finish(),
        folded_completion(more),
        revise_reply(["task_1", "task_2"], [subtask("task_1"), subtask("task_2", "task_1")]),
        finish(),
        folded_completion(completed=2),
    )
    result = harness.run(**FOLDED)
    assert result.status == "completed" and result.revision == 1
    assert len(harness.of_type("completion")) == 1  # the first reply did not complete the work


def test_missing_folded_review_falls_back_to_a_review_call(harness: Harness) -> None:
    from tests.plans import review

    harness.server.add(
        reply_json("planning", plan_doc("task_1")), review(), finish(), folded_completion()
    )
    result = harness.run(**FOLDED)
    assert result.status == "completed"
    assert harness.kinds() == ["planning", "replan_review", "execute", "completion"]
    assert harness.of_type("plan_review")[0]["outcome"] == "accepted"
