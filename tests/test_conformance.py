"""Seed conformance found in review: each test failed before its fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.config import load_config
from planner.core.errors import ConfigError
from planner.testing.steps import reply_json, reply_tool_calls
from tests.harness import Harness
from tests.plans import (
    completed,
    completion,
    decision,
    execution_decision,
    finish,
    planned,
    planning,
    reflection,
    review,
    revise_reply,
    subtask,
    write,
)

REFLECTION_PATH = {"planning.replanning.enabled": False}


# -- reflection triggers: an error (with trigger_on_error) OR the interval (seed §7.4.1 phase 5) --


def test_a_failed_action_on_the_interval_is_reflected_on_without_trigger_on_error(
    harness: Harness,
) -> None:
    harness.server.add(
        planning("task_1"),
        write("a.txt"),  # action 1: fine
        write("../outside.txt"),  # action 2: refused, and the interval of 2 is reached
        reflection(False),
        finish(),
        completion(),
    )
    overrides = {
        "planning.reflection.trigger_on_error": False,
        "planning.reflection.trigger_interval": 2,
        **REFLECTION_PATH,
    }
    result = harness.run(**overrides)
    assert result.status == "completed"
    assert harness.types().count("reflection") == 1
    assert "failed" in harness.prompt(3) and "write_file" in harness.prompt(3)


def test_a_failed_action_off_the_interval_is_not_reflected_on_without_trigger_on_error(
    harness: Harness,
) -> None:
    harness.server.add(planning("task_1"), write("../outside.txt"), finish(), completion())
    overrides = {
        "planning.reflection.trigger_on_error": False,
        "planning.reflection.trigger_interval": 2,
        **REFLECTION_PATH,
    }
    assert harness.run(**overrides).status == "completed"
    assert "reflection" not in harness.types()


def test_with_replanning_a_failed_action_on_the_interval_gets_a_decision(harness: Harness) -> None:
    harness.server.add(
        *planned("task_1"),
        write("a.txt"),
        write("../outside.txt"),
        execution_decision(False),
        finish(),
        *completed(),
    )
    overrides = {
        "planning.reflection.trigger_on_error": False,
        "planning.reflection.trigger_interval": 2,
    }
    assert harness.run(**overrides).status == "completed"
    execution = [e for e in harness.of_type("replan_decision") if e["phase"] == "execution"]
    assert len(execution) == 1 and "failed" in execution[0]["trigger"]


# -- planning.enabled: false uses the base system prompt (seed §7.5) ------------------------------


def test_legacy_mode_sends_the_base_system_prompt_without_the_planning_section(
    harness: Harness,
) -> None:
    harness.server.add(
        reply_tool_calls("legacy", [("write_file", {"path": "a.txt", "content": "a\n"})]),
        reply_tool_calls("legacy", [("finish_task", {"status": "completed", "summary": "ok"})]),
    )
    assert harness.run(**{"planning.enabled": False}).status == "completed"
    system = harness.server.requests[0].body["messages"][0]
    assert system["role"] == "system"
    assert "## Rules for untrusted content" in system["content"]
    assert "Planning Process" not in system["content"]
    assert "phases" not in system["content"].lower()
    assert "## Current mode: direct execution" in system["content"]


def test_planning_mode_keeps_the_planning_section(harness: Harness) -> None:
    harness.server.add(*planned("task_1"), finish(), *completed())
    assert harness.run().status == "completed"
    assert "## Planning Process" in harness.server.requests[0].body["messages"][0]["content"]


# -- a question in a replan decision was not executed (replanning.md §10.1) ------------------------


def test_a_question_is_recorded_as_not_executed(harness: Harness) -> None:
    ask = decision(
        True,
        confidence=0.9,
        replan_type="clarification_request",
        clarification_questions=["Which files should be written, a.txt or b.txt?"],
        assumptions_to_make=["a.txt"],
    )
    harness.server.add(planning("task_1"), review(goal_understanding=ask))
    assert harness.run().status == "needs_human"
    record = next(e for e in harness.of_type("replan_decision") if e["outcome"] == "asked_user")
    assert record["executed"] is False
    assert record["questions"] == ["Which files should be written, a.txt or b.txt?"]


# -- replanning on: reflection.depth and revision.max_revisions are not silently ignored --------


def test_max_revisions_caps_replans_that_revise_the_plan(harness: Harness) -> None:
    """With replanning on, an explicitly set planning.revision.max_revisions bounds the plan
    revisions since the last person's input, like on the reflection path."""
    partial = {"replan_type": "partial_replan", "replan_level": 2}
    harness.server.add(
        *planned("task_1"),
        write("../one"),
        execution_decision(True, **partial),
        revise_reply(["task_1"], [subtask("task_1")]),
        write("../two"),
        execution_decision(True, **partial),  # a second revision: over the cap of 1
        reply_json("replan_alternative", {"replan_decision": decision(False)}),
        finish(),
        *completed(),
    )
    result = harness.run(**{"planning.revision.max_revisions": 1})
    assert result.status == "completed"
    records = [e for e in harness.of_type("replan_decision") if e["phase"] == "execution"]
    capped = next(e for e in records if e["outcome"] == "limit_reached")
    assert "planning.revision.max_revisions" in capped["override_reason"]
    assert harness.types().count("revision") == 1


def test_max_revisions_left_unset_leaves_the_replanning_limits_alone() -> None:
    config = load_config(None, env={})
    assert "max_revisions" not in config.planning.revision.model_fields_set


@pytest.mark.parametrize("source", ["file", "override"])
def test_reflection_depth_with_replanning_on_is_rejected_naming_the_key(
    tmp_path: Path, source: str
) -> None:
    path = tmp_path / "planner.yml"
    path.write_text("planning:\n  reflection:\n    depth: deep\n", encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        if source == "file":
            load_config(path, env={})
        else:
            load_config(None, env={}, overrides={"planning.reflection.depth": "shallow"})
    message = str(raised.value)
    assert "planning.reflection.depth" in message
    assert "planning.replanning.enabled" in message


def test_reflection_depth_with_replanning_off_is_honoured(tmp_path: Path) -> None:
    overrides = {"planning.reflection.depth": "deep", "planning.replanning.enabled": False}
    assert load_config(None, env={}, overrides=overrides).planning.reflection.depth == "deep"
