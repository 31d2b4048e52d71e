"""What the seeds promise and planner lacked (issue 25, item 9): a session status command
(ADR-021 `status --session`), plan ids that are UUIDs, the `scheduled` state persisted, and a
timestamp on every telemetry line (plan-tool.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from planner.approval.models import SpecSelection
from planner.approval.setup import build_gate, build_plan_tool
from planner.approval.waiting import AwaitingApproval
from planner.cli.main import main
from planner.config import PlannerConfig
from planner.core.interfaces import ToolCall
from planner.interactive.model import PlanningSessionStatus, new_session
from planner.interactive.storage import SessionStore
from planner.memory.history import PlanningHistoryStore
from planner.run.runner import repository_name
from planner.tools.build import build_registry

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"


def test_plan_status_shows_the_session_and_the_pass_it_was_handed_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    history = repo / "planning_history"
    session = new_session("Add staff login")
    session.status = PlanningSessionStatus.APPROVED
    session.planner_session_id = "run-7"
    SessionStore(history).save(session)
    journal = PlanningHistoryStore(history, repository_name(repo), session.session_id, "run-7")
    journal.append("run_end", status="completed", stop_reason="all tasks done")

    assert main(["plan", "--status", session.session_id, "--repo", str(repo)]) == 0

    out = capsys.readouterr().out
    assert f"Session {session.session_id}: approved" in out
    assert "Request: Add staff login" in out
    assert "Pass run-7: completed (all tasks done)" in out
    assert main(["plan", "--status", "--repo", str(repo)]) == 0  # the list, no key needed
    assert session.session_id in capsys.readouterr().out


def test_plans_have_uuid_ids_a_persisted_scheduled_state_and_timestamped_events(
    tmp_path: Path,
) -> None:
    repo, history = tmp_path / "repo", tmp_path / "history"
    repo.mkdir()
    config = PlannerConfig.model_validate({"approval": {"auto_approve": []}})
    registry = build_registry(config.tools, repo, (history,))
    journal = PlanningHistoryStore(history, "octo/repo", "7")
    tool = build_plan_tool(config, repo, history, "7", registry.call, journal=journal)
    write = {"path": "notes.txt", "content": "hello\n"}
    with pytest.raises(AwaitingApproval):
        build_gate(tool, config, "octo/repo#7").before_action(
            "task_1", ToolCall(id="c", name="write_file", arguments=write)
        )
    [record] = tool.records()
    assert re.fullmatch(f"plan-{UUID}", record.plan.id)

    tool.approve(record.plan.id, "octocat", SpecSelection(all=True))
    tool.execute(record.plan.id)
    saved = [e["record"]["state"]["status"] for e in journal.entries() if "record" in e]
    assert saved[-3:] == ["scheduled", "executing", "completed"]

    lines = (history / "plans" / "events.ndjson").read_text(encoding="utf-8").splitlines()
    events = [json.loads(line) for line in lines]
    assert len(events) >= 5 and all(re.match(r"\d{4}-\d\d-\d\dT", e["timestamp"]) for e in events)
