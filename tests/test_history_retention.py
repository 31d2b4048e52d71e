"""Local history retention (planning-process.md §11.1): the history of completed work is
deleted `planning.history.retention_days` (90) after its last entry; nothing else is.

Before, history files were never pruned: a runner's cache or a maintainer's checkout kept the
history of every issue planner ever worked on, growing without bound.
"""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.harness import START, Harness
from tests.plans import completed, finish, planned, write


def stamp(days_ago: float) -> str:
    return (START - timedelta(days=days_ago)).isoformat().replace("+00:00", "Z")


def entry(kind: str, days_ago: float, **fields: Any) -> str:
    return json.dumps({"type": kind, "timestamp": stamp(days_ago), **fields})


def history_file(directory: Path, name: str, *lines: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def other_histories(directory: Path) -> dict[str, Path]:
    return {
        "done_long_ago": history_file(
            directory, "done_long_ago",
            entry("run_start", 120), entry("completion", 120, done=True), entry("run_end", 100),
        ),
        "done_lately": history_file(
            directory, "done_lately",
            entry("run_start", 11), entry("completion", 10, done=True), entry("run_end", 10),
        ),
        "unfinished": history_file(
            directory, "unfinished",
            entry("completion", 300, done=True), entry("run_start", 200), entry("task", 200),
        ),
        "not_done": history_file(
            directory, "not_done", entry("run_start", 200), entry("completion", 200, done=False)
        ),
        "damaged": history_file(directory, "damaged", '{"type": "completion", "done": tr'),
    }  # fmt: skip


def test_completed_work_older_than_the_retention_is_deleted_and_nothing_else(
    harness: Harness,
) -> None:
    files = other_histories(harness.workspace / "planning_history")
    harness.server.add(*planned("task_1"), write("a.txt"), finish(), *completed())

    result = harness.run()

    assert result.status == "completed"
    assert not files["done_long_ago"].exists()
    for kept in ("done_lately", "unfinished", "not_done", "damaged"):
        assert files[kept].exists(), kept
    assert harness.types()[0] == "run_start"  # this pass's own history is there


def test_retention_days_zero_keeps_every_history(harness: Harness) -> None:
    files = other_histories(harness.workspace / "planning_history")
    harness.server.add(*planned("task_1"), write("a.txt"), finish(), *completed())

    harness.run(**{"planning.history.retention_days": 0})

    assert all(path.exists() for path in files.values())


def plan_file(directory: Path, plan_id: str, issue: str, status: str) -> Path:
    record = {"plan": {"id": plan_id, "title": "t", "content": "c", "created_at": stamp(200),
                       "issue": issue}, "state": {"status": status}}  # fmt: skip
    path = directory / "plans" / plan_id / "plan.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record), encoding="utf-8")
    (path.parent / "preview").mkdir()
    (path.parent / "preview" / "a1.diff").write_text("+x\n", encoding="utf-8")
    return path.parent


def session_file(directory: Path, number: int, status: str, days_ago: float) -> str:
    session_id = f"planning-{number:08d}-0000-4000-8000-000000000000"
    path = directory / "planning-sessions" / f"{session_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"session_id": session_id, "status": status, "updated_at": stamp(days_ago)}
    path.write_text(json.dumps(body), encoding="utf-8")
    logs = directory / "logs" / session_id
    logs.mkdir(parents=True)
    (logs / "discovery.log").write_text("--- x\n", encoding="utf-8")
    return session_id


def aged(days_ago: float, *paths: Path) -> None:
    """The file times of what an earlier pass wrote that long ago."""
    moment = (START - timedelta(days=days_ago)).timestamp()
    for path in paths:
        for each in [path, *path.rglob("*")] if path.is_dir() else [path]:
            os.utime(each, (moment, moment))


def test_retention_covers_plans_sessions_logs_payloads_and_telemetry(harness: Harness) -> None:
    """Issue 44, item 8: only `*.jsonl` was pruned; plans/<id>/, planning-sessions/*.json and
    logs/planning-*/ grew without bound (and payloads/ would have)."""
    directory = harness.workspace / "planning_history"
    gone_session = session_file(directory, 1, "approved", 100)
    session_file(directory, 2, "cancelled", 120)  # ended long ago, named by no history
    waiting = session_file(directory, 3, "discovery", 200)
    named_by_open_work = session_file(directory, 4, "approved", 150)
    done = history_file(
        directory, "done_long_ago",
        entry("run_start", 120, issue_id="5"),
        entry("planning_session", 120, issue_id="5", session={"session_id": gone_session}),
        entry("approval_plan", 110, issue_id="5", record={"plan": {"id": "plan-pending"}}),
        entry("approval_executed", 110, issue_id="5", plan_id="plan-run"),
        entry("completion", 100, issue_id="5", done=True), entry("run_end", 100, issue_id="5"),
    )  # fmt: skip
    history_file(
        directory, "open_work",
        entry("planning_session", 150, issue_id="6", session={"session_id": named_by_open_work}),
        entry("approval_plan", 150, issue_id="6", record={"plan": {"id": "plan-open"}}),
        entry("run_start", 150, issue_id="6"), entry("task", 150, issue_id="6"),
    )  # fmt: skip
    plans = {
        "plan-pending": plan_file(directory, "plan-pending", "5", "pending_review"),
        "plan-run": plan_file(directory, "plan-run", "5", "completed"),
        "plan-orphan": plan_file(directory, "plan-orphan", "9", "completed"),
        "plan-open": plan_file(directory, "plan-open", "6", "completed"),
        "plan-asking": plan_file(directory, "plan-asking", "8", "pending_review"),
    }
    index = [{"id": name, "title": "t", "status": "completed"} for name in plans]
    (directory / "plans" / "index.json").write_text(json.dumps(index), encoding="utf-8")
    (directory / "plans" / "cleared-5").write_text("plan-run", encoding="utf-8")
    events = [json.dumps({"event": "e", "timestamp": stamp(d)}) + "\n" for d in (200, 1)]
    (directory / "plans" / "events.ndjson").write_text("".join(events), encoding="utf-8")
    payloads = directory / "payloads"
    for owner in (done.stem, "open_work", "no-history-left"):
        (payloads / owner).mkdir(parents=True)
        (payloads / owner / f"{'0' * 64}.jsonl").write_text("{}\n", encoding="utf-8")
    aged(120, *plans.values(), *(payloads / name for name in ("open_work", "no-history-left")))
    aged(120, *(directory / "logs").iterdir())
    harness.server.add(*planned("task_1"), write("a.txt"), finish(), *completed())

    assert harness.run().status == "completed"

    assert not done.exists() and not (payloads / done.stem).exists()
    assert not (payloads / "no-history-left").exists() and (payloads / "open_work").exists()
    left = {name for name, folder in plans.items() if folder.exists()}
    assert left == {"plan-open", "plan-asking"}  # open work's plan; one still asking people
    listed = json.loads((directory / "plans" / "index.json").read_text(encoding="utf-8"))
    assert {ref["id"] for ref in listed} & set(plans) == left
    assert not (directory / "plans" / "cleared-5").exists()
    sessions = {p.stem for p in (directory / "planning-sessions").glob("*.json")}
    assert sessions == {waiting, named_by_open_work}
    assert {p.name for p in (directory / "logs").iterdir()} == sessions
    kept_events = (directory / "plans" / "events.ndjson").read_text(encoding="utf-8")
    assert events[1] in kept_events and events[0] not in kept_events  # (then this pass's)


def test_a_pending_plans_payloads_outlive_the_retention(harness: Harness) -> None:
    """Issue 57, item 5: a terminal plan's payloads (`payloads/local`, no history file of
    that name) counted as orphaned; a pending plan older than the retention kept its plan and
    lost its payloads (payload_missing). Nothing a live or pending plan refers to is deleted;
    an orphan folder no plan names still goes."""
    from planner.approval.setup import build_gate, build_plan_tool
    from planner.approval.waiting import AwaitingApproval
    from planner.config import PlannerConfig
    from planner.core.interfaces import ToolCall
    from planner.tools.build import build_registry

    directory = harness.workspace / "planning_history"
    config = PlannerConfig.model_validate({"approval": {"auto_approve": []}})
    registry = build_registry(config.tools, harness.workspace, (directory,))
    tool = build_plan_tool(config, harness.workspace, directory, "3", registry.call)
    text = "line of notes\n" * 300  # stored once, by hash, under payloads/local
    asked = ToolCall(id="c", name="write_file", arguments={"path": "notes.txt", "content": text})
    with pytest.raises(AwaitingApproval):
        build_gate(tool, config, "repo#3").before_action("task_1", asked)
    [record] = tool.records()
    orphan = directory / "payloads" / "no-history-left"
    orphan.mkdir(parents=True)
    (orphan / f"{'0' * 64}.jsonl").write_text("{}\n", encoding="utf-8")
    aged(120, directory / "plans", directory / "payloads")
    harness.server.add(*planned("task_1"), write("a.txt"), finish(), *completed())

    assert harness.run().status == "completed"

    assert (directory / "payloads" / "local").is_dir() and not orphan.exists()
    [spec] = tool.store.load(record.plan.id).state.action_specs  # type: ignore[union-attr]
    assert not spec.payload_missing and spec.content == text
