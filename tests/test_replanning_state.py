"""Counts and pending work survive the end of a pass and a new process (§10.2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from planner.config import load_config
from planner.memory.history import PlanningHistoryStore
from planner.replanning.limits.state import ReplanState
from planner.testing.steps import reply_json
from tests.harness import Harness
from tests.plans import (
    REFINEMENT_OFF_ENV,
    completed,
    execution_decision,
    finish,
    planned,
    revise_reply,
    write,
)

PARTIAL = {"replan_type": "partial_replan", "replan_level": 2}
CONTINUE = reply_json(
    "replan_alternative",
    {"replan_decision": {"replan_needed": False, "confidence": 0.9, "reasoning": "go on"}},
)


def run_cli(
    harness: Harness, tmp_path: Path, config: str, env: dict[str, str] | None = None
) -> dict:
    """`python -m planner run` on the same repository and issue, in a new process."""
    (harness.workspace / ".github").mkdir(exist_ok=True)
    (harness.workspace / ".github" / "planner.yml").write_text(config, encoding="utf-8")
    issue = tmp_path / "issue.md"
    issue.write_text("# Write files\n\nPlease write the files.\n", encoding="utf-8")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PLANNING_"))}
    completed_run = subprocess.run(
        [
            sys.executable,
            "-m",
            "planner",
            "run",
            "--repo",
            str(harness.workspace),
            "--issue-file",
            str(issue),
            "--issue-id",
            "7",
            "--repository",
            "octo/repo",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **clean,
            "OPENAI_API_KEY": "k",
            "OPENAI_BASE_URL": harness.server.base_url,
            "OPENAI_MODEL": "scripted",
            **REFINEMENT_OFF_ENV,
            **(env or {}),
        },
    )
    assert completed_run.returncode == 0, completed_run.stderr
    return dict(json.loads(completed_run.stdout))


def first_run_with_one_partial_replan(harness: Harness) -> None:
    """One executed partial replan, then the action budget ends the pass mid-way."""
    harness.server.add(
        *planned("task_1", "task_2"),
        write("../bad"),
        execution_decision(True, **PARTIAL),
        revise_reply(["task_1", "task_2"]),
        write("a.txt"),  # the second action: over budget, not executed
    )
    first = harness.run(**{"budget.max_actions": 1})
    assert first.status == "in_progress" and first.revision == 1


def test_phase_limit_holds_across_two_processes(harness: Harness, tmp_path: Path) -> None:
    first_run_with_one_partial_replan(harness)
    harness.server.add(
        write("../bad-again"),
        execution_decision(True, **PARTIAL),  # a second partial replan: over the limit of 1
        CONTINUE,
        finish(),
        write("b.txt"),
        finish(),
        *completed(completed=2),
    )
    config = "planning:\n  replanning:\n    execution:\n      max_partial_replans: 1\n"
    result = run_cli(harness, tmp_path, config)
    assert result["status"] == "completed" and result["revision"] == 1
    alternative = harness.server.requests[-6].body["messages"][-1]["content"]
    assert "the limit of 1 (execution.max_partial_replans) was reached" in alternative
    assert [n["kind"] for n in result["notifications"]] == ["replan_override"]


def test_global_limit_from_the_environment_across_processes(
    harness: Harness, tmp_path: Path
) -> None:
    first_run_with_one_partial_replan(harness)
    harness.server.add(
        write("../bad-again"),
        execution_decision(True, replan_type="retry", replan_level=1),
        CONTINUE,
        finish(),
        write("b.txt"),
        finish(),
        *completed(completed=2),
    )
    result = run_cli(harness, tmp_path, "{}\n", env={"MAX_TOTAL_REPLANS": "1"})
    assert result["status"] == "completed"
    alternative = harness.server.requests[-6].body["messages"][-1]["content"]
    assert "the limit of 1 replans in total" in alternative


def test_interrupted_replan_is_finished_by_the_next_run(harness: Harness) -> None:
    harness.server.add(
        *planned("task_1"),
        write("../bad"),
        execution_decision(True, **PARTIAL, reasoning="write elsewhere"),
    )
    first = harness.run(**{"budget.max_model_calls": 4})
    assert first.status == "in_progress" and "4 model calls" in first.stop_reason
    started = harness.of_type("replan_started")
    assert len(started) == 1 and not harness.of_type("revision")
    harness.server.add(revise_reply(["task_1"]), write("ok.txt"), finish(), *completed())
    second = harness.run()
    assert second.status == "completed" and second.revision == 1
    assert harness.kinds()[4] == "replan_revise"  # the first call of the second run
    finished = [e for e in harness.of_type("replan_decision") if e["executed"]]
    assert [e["replan_id"] for e in finished] == [started[0]["replan_id"]]
    assert len(harness.of_type("replan_started")) == 1  # finished, not started (counted) again
    before_completion = [e for e in harness.entries() if e["type"] != "completion"]
    state = ReplanState.from_entries(before_completion)
    assert state.counts["execution.max_partial_replans"] == 1 and state.interrupted is None


def test_counts_derive_from_history_and_reset_at_the_right_points() -> None:
    key = "execution.max_partial_replans"
    question = "goal_understanding.max_clarification_requests"
    entries = [
        {"type": "replan_started", "replan_id": "a", "limit_key": key, "signature": "s"},
        {"type": "replan_decision", "replan_id": "a", "executed": True, "outcome": "executed"},
        {
            "type": "replan_decision",
            "replan_id": "q",
            "counted": True,
            "limit_key": question,
            "outcome": "asked_user",
            "phase": "goal_understanding",
            "questions": ["?"],
        },
        {"type": "human_input", "text": "answer"},
    ]
    state = ReplanState.from_entries(entries)
    assert (state.counts[key], state.counts[question], state.total) == (1, 1, 2)
    assert state.signatures["s"] == 1
    assert state.pending_question is not None and state.pending_question.answers == ["answer"]
    # an answer to a question does not reset counts; an answer after an escalation does
    escalated = ReplanState.from_entries(
        [*entries, {"type": "human_intervention"}, {"type": "human_input", "text": "go"}]
    )
    assert escalated.counts[key] == 0 and escalated.counts[question] == 1
    assert escalated.total == 1 and not escalated.signatures
    finished = ReplanState.from_entries([*entries, {"type": "completion", "done": True}])
    assert finished.total == 0 and finished.pending_question is None


def test_statistics_after_a_pass(harness: Harness) -> None:
    harness.server.add(
        *planned("task_1"),
        write("../bad"),
        execution_decision(True, confidence=0.6, **PARTIAL),
        revise_reply(["task_1"]),
        write("ok.txt"),
        finish(),
        reply_json(
            "replan_reflection", {"replan_decision": {"replan_needed": False, "confidence": 0.8}}
        ),
    )
    assert harness.run(**{"budget.max_model_calls": 8}).status == "in_progress"
    from planner.replanning.manager import ReplanManager

    store = PlanningHistoryStore(harness.workspace / "planning_history", "octo/repo", "7")
    config = load_config(None, env={})
    manager = ReplanManager(config, store, port=None, issue=None, clock=harness.clock)  # type: ignore[arg-type]
    stats = manager.get_replan_statistics()
    assert stats.decisions == 5 and stats.executed == 1 and stats.total_counted == 1
    assert stats.by_phase == {
        "goal_understanding": 1,
        "task_decomposition": 1,
        "action_sequence": 1,
        "execution": 1,
        "reflection": 1,
    }
    assert stats.by_outcome["executed_with_warning"] == 1
    assert stats.remaining["execution.max_partial_replans"] == 1 and stats.remaining["total"] == 9


def test_review_owed_when_the_pass_stopped_is_done_first_next_run(harness: Harness) -> None:
    from tests.plans import planning, review

    harness.server.add(planning("task_1"))
    first = harness.run(**{"budget.max_model_calls": 1})
    assert first.status == "in_progress" and harness.of_type("plan")
    harness.server.add(review(), finish(), *completed())
    second = harness.run()
    assert second.status == "completed"
    assert harness.kinds() == [
        "planning",
        "replan_review",
        "execute",
        "replan_reflection",
        "completion",
    ]
