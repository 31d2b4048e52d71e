"""The parts of the assumption sweep (end to end: tests/test_durable_sweep.py): the pass's
proceed-after time, the tracking comment's marker, the events that are sweeps, the workflow
a sweep dispatches."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
import yaml

from planner.ci.events.github import parse_github_event
from planner.ci.events.gitlab import gitlab_trigger_from_env
from planner.ci.events.triggers import Skip, Sweep, Trigger
from planner.ci.forges.github import workflow_file
from planner.ci.report.tracking import TrackingView, proceed_after_of, render_tracking
from planner.config import ForgeConfig
from planner.outcome.result import PassResult
from tests.harness import Harness
from tests.plans import planning, review
from tests.support.ci_job import COMPONENT
from tests.test_replanning_questions import ASK

CONFIG = ForgeConfig()
OFF = {"planning.replanning.goal_understanding.auto_assume_on_no_response": False}


def test_a_pass_that_asks_carries_when_it_proceeds_without_an_answer(harness: Harness) -> None:
    harness.server.add(planning("task_1"), review(goal_understanding=ASK))
    result = harness.run()
    assert result.status == "needs_human"
    assert result.proceed_after == "2026-11-01T10:30:00Z"  # the harness clock + 30 minutes
    harness.clock.advance(10)
    assert harness.run().proceed_after == "2026-11-01T10:30:00Z"  # still waiting: same time


def test_no_proceed_after_time_when_it_waits_for_an_answer_however_long(
    harness: Harness,
) -> None:
    harness.server.add(planning("task_1"), review(goal_understanding=ASK))
    result = harness.run(**OFF)
    assert result.status == "needs_human" and result.proceed_after == ""


def test_the_marker_is_written_only_while_waiting_and_read_back() -> None:
    result = PassResult(status="needs_human", proceed_after="2026-11-24T09:30:00Z")
    body = render_tracking(TrackingView(state="needs_human", result=result))
    assert "<!-- planner:proceed-after 2026-11-24T09:30:00Z -->" in body
    assert "first scheduled sweep after 2026-11-24 09:30 UTC" in body
    view = TrackingView(state="needs_human", proceed_after="2026-11-24T09:35:00+00:00")
    assert proceed_after_of(render_tracking(view)) == datetime(2026, 11, 24, 9, 35, tzinfo=UTC)
    assert proceed_after_of(body) == datetime(2026, 11, 24, 9, 30, tzinfo=UTC)
    done = render_tracking(TrackingView(state="completed", result=result))
    assert proceed_after_of(done) is None
    garbage = result.model_copy(update={"proceed_after": "soon --> <b>x</b>"})
    assert "proceed-after" not in render_tracking(TrackingView(state="needs_human", result=garbage))
    with pytest.raises(ValueError, match="unreadable"):
        proceed_after_of("<!-- planner:proceed-after 24/11/2026 -->")


def test_scheduled_events_are_sweeps_and_nothing_else_is() -> None:
    assert isinstance(parse_github_event("schedule", {"schedule": "*/15 * * * *"}, CONFIG), Sweep)
    scheduled = gitlab_trigger_from_env({"CI_PIPELINE_SOURCE": "schedule"}, CONFIG)
    assert scheduled == Sweep(platform="gitlab", event="pipeline (schedule)")
    for source in ("push", "web", "api"):
        assert isinstance(gitlab_trigger_from_env({"CI_PIPELINE_SOURCE": source}, CONFIG), Skip)


def _dispatch(login: str, kind: str, instruction: str = "") -> dict[str, Any]:
    return {
        "inputs": {"issue": "4", "instruction": instruction},
        "sender": {"login": login, "id": 1, "type": kind},
        "repository": {"full_name": "o/r"},
    }


def test_a_bots_dispatch_is_a_sweep_run_only_without_an_instruction() -> None:
    run = parse_github_event("workflow_dispatch", _dispatch("github-actions[bot]", "Bot"), CONFIG)
    assert isinstance(run, Trigger) and (run.kind, run.issue_number) == ("sweep", 4)
    relayed = _dispatch("github-actions[bot]", "Bot", "/planner do it")
    assert isinstance(parse_github_event("workflow_dispatch", relayed, CONFIG), Skip)
    person = parse_github_event("workflow_dispatch", _dispatch("octo", "User"), CONFIG)
    assert isinstance(person, Trigger) and person.kind == "dispatch"
    env = {"PLANNER_ISSUE_IID": "4", "GITLAB_USER_LOGIN": "project_42_bot_5f2a"}
    pipeline = gitlab_trigger_from_env({"CI_PIPELINE_SOURCE": "api", **env}, CONFIG)
    assert isinstance(pipeline, Trigger) and pipeline.kind == "sweep"
    with_text = {"CI_PIPELINE_SOURCE": "api", "PLANNER_INSTRUCTION": "do it", **env}
    assert isinstance(gitlab_trigger_from_env(with_text, CONFIG), Skip)


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        ("o/r/.github/workflows/planner.yml@refs/heads/main", "planner.yml"),
        ("o/r/.github/workflows/plan ner.yaml@refs/tags/v1", "plan ner.yaml"),
        ("o/r/.github/workflows/planner.yml", "planner.yml"),
        ("", ""),
        ("o/r/ci/planner.yml@refs/heads/main", ""),
    ],
)
def test_the_workflow_a_sweep_dispatches_comes_from_the_workflow_ref(
    ref: str, expected: str
) -> None:
    assert workflow_file(ref) == expected


def test_the_component_runs_the_sweep_and_the_pipelines_it_creates() -> None:
    """A scheduled pipeline runs the job (the sweep); the pipelines the sweep creates are API
    pipelines naming the issue, which the job's rules let through as well."""
    _, jobs = yaml.safe_load_all(COMPONENT.read_text(encoding="utf-8"))
    rules = [" ".join(rule["if"].split()) for rule in jobs["planner"]["rules"]]
    assert '$CI_PIPELINE_SOURCE == "schedule" && $PLANNER_SWEEP != "false"' in rules
    api = [rule for rule in rules if '"api"' in rule]
    assert api and all("$PLANNER_ISSUE_IID" in rule for rule in api)
