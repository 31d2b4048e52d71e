"""The system's side: confidence bands, limits, loop detection, escalation, parse errors."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from planner.config import ReplanningConfig, load_config
from planner.core.errors import ConfigError
from planner.replanning.limits.controls import ReplanControls
from planner.replanning.limits.state import ReplanState
from planner.replanning.prompting.decision import ReplanDecision
from planner.testing.steps import Step, reply_json, reply_text
from tests.harness import Harness
from tests.plans import (
    completed,
    execution_decision,
    finish,
    planned,
    revise_reply,
    subtask,
    write,
)


def replan(confidence: float, **fields: object) -> ReplanDecision:
    return ReplanDecision.model_validate(
        {"replan_needed": True, "confidence": confidence, "replan_type": "partial_replan", **fields}
    )


CONTROLS = ReplanControls(ReplanningConfig())


def alternative(**fields: object) -> Step:
    """The model's answer when asked for another approach: this decision, as it wrote it."""
    return reply_json("replan_alternative", {"replan_decision": fields})


# -- §9.3 confidence bands (unit) ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("confidence", "action", "outcome"),
    [
        (1.0, "execute", "executed"),
        (0.8, "execute", "executed"),
        (0.79, "execute", "executed_with_warning"),
        (0.5, "execute", "executed_with_warning"),
        (0.49, "ask", "asked_user"),
        (0.3, "ask", "asked_user"),
        (0.29, "continue", "kept_low_confidence"),
        (0.0, "continue", "kept_low_confidence"),
    ],
)
def test_confidence_bands(confidence: float, action: str, outcome: str) -> None:
    verdict = CONTROLS.should_override(replan(confidence), "execution", "t", ReplanState())
    assert (verdict.action, verdict.outcome) == (action, outcome)
    assert (verdict.warning is not None) == (outcome == "executed_with_warning")


def test_bands_follow_the_configured_thresholds() -> None:
    settings = ReplanningConfig.model_validate(
        {"llm_decision": {"min_confidence_threshold": 0.7, "user_confirmation_threshold": 0.6}}
    )
    controls = ReplanControls(settings)
    assert controls.should_override(replan(0.65), "execution", "t", ReplanState()).action == "ask"
    assert (
        controls.should_override(replan(0.55), "execution", "t", ReplanState()).outcome
        == "kept_low_confidence"
    )
    assert controls.should_override(replan(0.72), "execution", "t", ReplanState()).warning


def test_confirmation_disabled_or_already_answered_keeps_the_plan() -> None:
    settings = ReplanningConfig.model_validate(
        {"llm_decision": {"require_user_confirmation_on_low_confidence": False}}
    )
    verdict = ReplanControls(settings).should_override(replan(0.4), "execution", "t", ReplanState())
    assert verdict.outcome == "kept_low_confidence" and "disabled" in str(verdict.override_reason)
    verdict = CONTROLS.should_override(replan(0.4), "execution", "t", ReplanState(), answered=True)
    assert verdict.outcome == "kept_low_confidence" and "already asked" in str(
        verdict.override_reason
    )


def test_no_replan_needed_is_never_overridden() -> None:
    verdict = CONTROLS.should_override(
        ReplanDecision(replan_needed=False, confidence=0.1), "execution", "t", ReplanState()
    )
    assert (verdict.action, verdict.outcome, verdict.override_reason) == (
        "continue",
        "no_replan",
        None,
    )


# -- §9.1 limits, §9.2 override rules, §13.3 loops (unit) ----------------------------------------


def counted(*keys: str, signature: str = "") -> ReplanState:
    state = ReplanState()
    for key in keys:
        state.count(key, signature)
    return state


@pytest.mark.parametrize(
    ("fields", "phase", "limit_key", "limit"),
    [
        ({"replan_level": 1}, "execution", "execution.max_action_retries", 3),
        ({"replan_level": 2}, "execution", "execution.max_partial_replans", 2),
        ({"replan_level": 3}, "execution", "action_sequence.max_regeneration_attempts", 3),
        ({"replan_level": 4}, "execution", "task_decomposition.max_redecomposition_attempts", 3),
        ({"replan_type": "plan_revision"}, "reflection", "reflection.max_plan_revisions", 2),
        (
            {"replan_type": "task_redecomposition"},
            "task_decomposition",
            "task_decomposition.max_redecomposition_attempts",
            3,
        ),
        (
            {"replan_type": "action_regeneration"},
            "action_sequence",
            "action_sequence.max_regeneration_attempts",
            3,
        ),
    ],
)
def test_each_phase_limit_with_seed_defaults(
    fields: dict[str, object], phase: str, limit_key: str, limit: int
) -> None:
    decision = replan(0.9, **fields)
    below = CONTROLS.should_override(decision, phase, "t", counted(*[limit_key] * (limit - 1)))  # type: ignore[arg-type]
    assert below.action == "execute" and below.limit_key == limit_key
    at = CONTROLS.should_override(decision, phase, "t", counted(*[limit_key] * limit))  # type: ignore[arg-type]
    assert at.outcome == "limit_reached" and f"limit of {limit} ({limit_key})" in str(
        at.override_reason
    )


def test_global_limit_counts_every_kind() -> None:
    state = counted(*["execution.max_action_retries"] * 2, *["x"] * 8)
    verdict = CONTROLS.should_override(replan(0.9, replan_level=4), "execution", "t", state)
    assert verdict.outcome == "limit_reached" and "10 replans in total" in str(
        verdict.override_reason
    )


def test_questions_are_limited_and_then_assumed() -> None:
    ask = ReplanDecision(replan_needed=True, confidence=0.9, replan_type="clarification_request")
    key = "goal_understanding.max_clarification_requests"
    assert CONTROLS.should_override(ask, "goal_understanding", "r", counted(key)).action == "ask"
    verdict = CONTROLS.should_override(ask, "goal_understanding", "r", counted(key, key))
    assert (verdict.action, verdict.outcome) == ("assume", "assumed")


def test_loop_detection_blocks_the_same_approach_to_the_same_trigger() -> None:
    signature = "execution|action write_file failed: x|L1"
    state = counted("execution.max_action_retries", signature=signature)
    decision = replan(0.9, replan_level=1)
    trigger = "action write_file failed: x"
    assert CONTROLS.should_override(decision, "execution", trigger, state).action == "execute"
    state.count("execution.max_action_retries", signature)
    verdict = CONTROLS.should_override(decision, "execution", trigger, state)
    assert verdict.outcome == "loop_detected" and "infinite loop" in str(verdict.override_reason)
    # a different approach, or the same approach to another trigger, is not a loop
    assert CONTROLS.should_override(replan(0.9), "execution", trigger, state).executes
    assert CONTROLS.should_override(decision, "execution", "other", state).executes
    off = ReplanControls(
        ReplanningConfig.model_validate({"global": {"infinite_loop_detection": False}})
    )
    assert off.should_override(decision, "execution", trigger, state).executes


def test_config_keys_defaults_and_env_overrides() -> None:
    config = load_config(
        None,
        env={
            "REPLANNING_ENABLED": "false",
            "REPLANNING_MIN_CONFIDENCE": "0.6",
            "MAX_TOTAL_REPLANS": "4",
        },
    )
    replanning = config.planning.replanning
    assert replanning.enabled is False
    assert replanning.llm_decision.min_confidence_threshold == 0.6
    assert replanning.global_.max_total_replans == 4
    defaults = load_config(None, env={}).planning.replanning.model_dump(by_alias=True)
    assert defaults == {
        "enabled": True,
        "decision_mode": "separate",
        "llm_decision": {
            "min_confidence_threshold": 0.5,
            "require_user_confirmation_on_low_confidence": True,
            "user_confirmation_threshold": 0.3,
        },
        "goal_understanding": {
            "max_clarification_requests": 2,
            "auto_assume_on_no_response": True,
            "auto_assume_timeout_minutes": 30,
        },
        "task_decomposition": {"max_redecomposition_attempts": 3},
        "action_sequence": {"max_regeneration_attempts": 3},
        "execution": {"max_action_retries": 3, "max_partial_replans": 2},
        "reflection": {"max_plan_revisions": 2},
        "global": {
            "max_total_replans": 10,
            "infinite_loop_detection": True,
            "same_trigger_max_count": 2,
        },
    }


def test_config_errors_name_the_key_and_the_source(tmp_path: Path) -> None:
    lowered = load_config(None, env={"REPLANNING_MIN_CONFIDENCE": "0.2"})
    assert lowered.planning.replanning.llm_decision.user_confirmation_threshold == 0.2
    conflicting = {"planning.replanning.llm_decision.user_confirmation_threshold": 0.4}
    with pytest.raises(ConfigError) as error:
        load_config(None, env={"REPLANNING_MIN_CONFIDENCE": "0.2"}, overrides=conflicting)
    message = str(error.value)
    assert "must not exceed min_confidence_threshold" in message
    assert "environment variable REPLANNING_MIN_CONFIDENCE" in message
    path = tmp_path / "planner.yml"
    path.write_text("planning:\n  replanning:\n    global:\n      max_loops: 1\n")
    with pytest.raises(ConfigError, match="allowed here: infinite_loop_detection"):
        load_config(path, env={})


# -- the same rules in a pass --------------------------------------------------------------------


def failing_pass(*decision_steps: object) -> list[object]:
    return [*planned("task_1"), write("../bad"), *decision_steps]


def test_high_confidence_executes_without_a_warning(harness: Harness) -> None:
    harness.server.add(
        *failing_pass(execution_decision(True, confidence=0.95, replan_type="partial_replan")),
        revise_reply(["task_1"]),
        write("ok.txt"),
        finish(),
        *completed(),
    )
    result = harness.run()
    assert result.status == "completed"
    assert "**Status**: executed" in result.notifications[0].body


def test_medium_confidence_executes_with_a_logged_warning(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    harness.server.add(
        *failing_pass(execution_decision(True, confidence=0.6, replan_type="partial_replan")),
        revise_reply(["task_1"]),
        write("ok.txt"),
        finish(),
        *completed(),
    )
    result = harness.run()
    assert result.status == "completed" and result.revision == 1
    record = next(e for e in harness.of_type("replan_decision") if e["executed"])
    assert record["outcome"] == "executed_with_warning" and "below 80%" in record["warning"]
    assert "⚠️ executed with a warning: confidence 60% is below 80%" in result.notifications[0].body
    assert "executed with a warning: confidence 60% is below 80%" in caplog.text


def test_low_confidence_asks_the_user_then_the_answer_decides(harness: Harness) -> None:
    harness.server.add(
        *failing_pass(
            execution_decision(
                True,
                confidence=0.4,
                replan_type="partial_replan",
                reasoning="maybe the path is wrong",
            )
        ),
    )
    first = harness.run()
    assert first.status == "needs_human"
    assert first.questions and "40% confident" in first.questions[0]
    notice = first.notifications[0]
    assert notice.kind == "clarification"
    assert "I will continue with the current plan once 30 minutes pass" in notice.body
    # The next run carries the answer: the same decision point is asked again, with it.
    harness.server.add(
        execution_decision(True, confidence=0.9, replan_type="partial_replan"),
        revise_reply(["task_1"]),
        write("ok.txt"),
        finish(),
        *completed(),
    )
    second = harness.answer("Yes, write inside the repository instead.")
    assert second.status == "completed" and second.revision == 1
    prompt = harness.prompt(
        len(harness.kinds()) - 1 - harness.kinds()[::-1].index("replan_execution")
    )
    assert "Answer from the people on the issue" in prompt
    assert "Yes, write inside the repository instead." in prompt
    assert "write_file" in prompt and "no-parent-segments" in prompt  # the stored facts


def test_very_low_confidence_never_changes_the_plan(harness: Harness) -> None:
    harness.server.add(
        *failing_pass(
            execution_decision(True, confidence=0.1, replan_type="full_replan", replan_level=5)
        ),
        write("ok.txt"),
        finish(),
        *completed(),
    )
    result = harness.run()
    assert result.status == "completed" and result.revision == 0
    assert not result.notifications
    record = harness.of_type("replan_decision")[3]
    assert record["outcome"] == "kept_low_confidence" and record["executed"] is False
    assert "not trusted" in record["override_reason"]


def test_limit_reached_asks_for_an_alternative_then_continues(harness: Harness) -> None:
    harness.server.add(
        *failing_pass(execution_decision(True, replan_type="partial_replan")),
        alternative(
            replan_needed=False, confidence=0.8, reasoning="continue; the next call can fix it"
        ),
        write("ok.txt"),
        finish(),
        *completed(),
    )
    result = harness.run(**{"planning.replanning.execution.max_partial_replans": 0})
    assert result.status == "completed" and result.revision == 0
    prompt = harness.prompt(harness.kinds().index("replan_alternative"))
    assert "cannot be carried out: not executed: the limit of 0" in prompt
    assert "Do not propose the same approach (partial replan) again" in prompt
    assert [n.kind for n in result.notifications] == ["replan_override"]
    assert "⛔ overridden by planner" in result.notifications[0].body


def test_no_alternative_escalates_to_a_person(harness: Harness) -> None:
    harness.server.add(
        *failing_pass(execution_decision(True, replan_type="partial_replan")),
        alternative(
            replan_needed=True,
            confidence=0.9,
            clarification_needed=True,
            clarification_questions=["Where may I write?"],
        ),
    )
    result = harness.run(**{"planning.replanning.global.max_total_replans": 0})
    assert result.status == "needs_human" and "replanning at execution" in result.stop_reason
    assert result.questions == ["Where may I write?"]
    assert [n.kind for n in result.notifications] == ["replan_override", "escalation"]
    assert "- Where may I write?" in result.notifications[1].body
    intervention = harness.of_type("human_intervention")[0]
    assert intervention["document"]["status"] == "requires_human_intervention"


def test_person_after_escalation_resets_the_counts(harness: Harness) -> None:
    harness.server.add(
        *failing_pass(execution_decision(True, replan_type="partial_replan")),
        reply_text("replan_alternative", "no idea"),
    )
    first = harness.run(
        **{
            "planning.replanning.execution.max_partial_replans": 1,
            "planning.replanning.global.max_total_replans": 0,
        }
    )
    assert first.status == "needs_human"
    harness.server.add(
        write("../bad"),
        execution_decision(True, replan_type="partial_replan"),
        revise_reply(["task_1"]),
        write("ok.txt"),
        finish(),
        *completed(),
    )
    second = harness.answer(
        "Go ahead, one more try.",
        **{
            "planning.replanning.execution.max_partial_replans": 1,
            "planning.replanning.global.max_total_replans": 1,
        },
    )
    assert second.status == "completed" and second.revision == 1


def test_loop_detected_in_a_pass_requests_a_different_approach(harness: Harness) -> None:
    retry = execution_decision(True, replan_type="retry", replan_level=1)
    harness.server.add(
        *failing_pass(retry, retry, retry),  # the third identical retry is refused
        alternative(
            replan_needed=True, confidence=0.9, replan_type="partial_replan", replan_level=2
        ),
        revise_reply(["task_1"]),
        write("ok.txt"),
        finish(),
        *completed(),
    )
    result = harness.run(**{"planning.reflection.trigger_interval": 0})
    assert result.status == "completed" and result.revision == 1
    outcomes = [
        e["outcome"] for e in harness.of_type("replan_decision") if e["phase"] == "execution"
    ]
    assert outcomes == ["executed", "executed", "loop_detected", "executed"]
    assert len(harness.of_type("action")) == 4  # the original call, two retries, then ok.txt
    prompt = harness.prompt(harness.kinds().index("replan_alternative"))
    assert "possible infinite loop" in prompt


def test_unparseable_decisions_mean_no_replan_with_a_warning(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    harness.server.add(
        *failing_pass(reply_text("replan_execution", "I think we should replan, maybe.")),
        write("../bad2"),
        reply_text(
            "replan_execution",
            'Sure:\n```json\n{"replan_decision": {"replan_needed": false, "confidence": 0.9}}\n```',
        ),
        write("../bad3"),
        reply_json("replan_execution", {"replan_decision": {"confidence": "high"}}),
        finish(),
        *completed(),
    )
    with caplog.at_level(logging.WARNING):
        result = harness.run(**{"planning.reflection.trigger_interval": 0})
    assert result.status == "completed" and result.revision == 0
    records = harness.of_type("replan_decision")[3:6]
    assert [r["outcome"] for r in records] == ["unparseable", "no_replan", "unparseable"]
    assert records[0]["raw"].startswith("I think we should replan")
    assert records[0]["executed"] is False and records[0]["result"] == "skipped"
    assert "not JSON; continuing without a replan" in caplog.text


def test_unusable_replacement_plan_asks_for_an_alternative(harness: Harness) -> None:
    harness.server.add(
        *failing_pass(execution_decision(True, replan_type="partial_replan")),
        reply_text("replan_revise", "cannot"),
        reply_json(
            "replan_revise",
            {  # more subtasks than planning.max_subtasks: no repair makes that usable
                "reason": "x",
                "updated_subtasks": [subtask(f"task_{n}") for n in range(1, 6)],
                "updated_action_plan": {"execution_order": ["task_1"], "actions": []},
            },
        ),
        alternative(replan_needed=False, confidence=0.7),
        write("ok.txt"),
        finish(),
        *completed(),
    )
    result = harness.run(**{"planning.max_subtasks": 3})
    assert result.status == "completed" and result.revision == 0
    failure = next(e for e in harness.of_type("replan_decision") if e["outcome"] == "failed")
    assert failure["result"] == "failure" and failure["executed"] is True
    assert "the plan has 5 subtasks" in failure["override_reason"]
    prompt = harness.prompt(harness.kinds().index("replan_alternative"))
    assert "the replacement plan was unusable" in prompt


def test_a_completed_task_dropped_by_a_revision_is_put_back(harness: Harness) -> None:
    """The revision leaves out completed task_1: it is put back (first, as it ran) and the
    revision accepted without asking again; the record says so."""
    harness.server.add(
        *planned("task_1", "task_2"),
        write("a.txt"),
        finish(),
        write("../bad"),
        execution_decision(True, replan_type="partial_replan"),
        revise_reply(["task_3"], [subtask("task_3")]),  # drops completed task_1
        write("c.txt"),
        execution_decision(False),
        finish(),
        *completed(completed=2),
    )
    result = harness.run()
    assert result.status == "completed"
    assert harness.kinds().count("replan_revise") == 1
    assert [(t.id, t.status) for t in result.tasks] == [
        ("task_1", "completed"),
        ("task_3", "completed"),
    ]
    assert "completed task 'task_1' kept in the plan" in json.dumps(harness.entries())
