"""PlanningHistoryStore: append-only JSONL that survives crashes and concurrent writers."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

from planner.memory.history import PlanningHistoryStore, task_uuid

PLAN = {"goal_understanding": {"main_objective": "x"}, "task_decomposition": {"subtasks": []}}


def store(tmp_path: Path, issue: str = "7") -> PlanningHistoryStore:
    return PlanningHistoryStore(tmp_path / "history", "octo/repo", issue, run_id="r1")


def test_save_and_load_plan(tmp_path: Path) -> None:
    history = store(tmp_path)
    assert not history.has_plan()
    history.save_plan(PLAN)
    latest = history.get_latest_plan()
    assert latest is not None and latest["plan"] == PLAN and latest["type"] == "plan"
    assert latest["timestamp"].endswith("Z") and latest["issue_id"] == "7"
    assert history.has_plan()


def test_revisions_and_reflections_are_listed_in_order(tmp_path: Path) -> None:
    history = store(tmp_path)
    history.save_plan(PLAN)
    for n in (1, 2):
        history.save_reflection({"reflection": {"status": "failure", "n": n}})
        history.save_revision({"rev": n}, {"plan_revision": {"reason": f"r{n}", "changes": ["c"]}})
    revisions = history.get_revision_history()
    assert [(r["revision"], r["reason"], r["updated_plan"]) for r in revisions] == [
        (1, "r1", {"rev": 1}),
        (2, "r2", {"rev": 2}),
    ]
    assert [r["evaluation"]["reflection"]["n"] for r in history.get_all_reflections()] == [1, 2]
    latest = history.get_latest_plan()
    assert latest is not None and latest["updated_plan"] == {"rev": 2}


def test_file_name_is_stable_per_repository_and_issue(tmp_path: Path) -> None:
    first, again, other = store(tmp_path), store(tmp_path), store(tmp_path, "8")
    assert first.filepath == again.filepath != other.filepath
    assert first.filepath.name == f"{task_uuid('octo/repo', '7')}.jsonl"
    assert task_uuid("Octo/Repo", "7") == task_uuid("octo/repo", "7")


def test_past_executions_reads_only_that_issues_file(tmp_path: Path) -> None:
    history = store(tmp_path)
    history.save_plan(PLAN)
    store(tmp_path, "8").save_plan(PLAN)
    junk = history.directory / "zzz-unrelated.jsonl"
    junk.write_bytes(b"\xff\xfe not json at all\n")
    past = history.get_past_executions_for_issue("7")
    assert [e["issue_id"] for e in past] == ["7"]
    assert history.warnings == []  # the unrelated file was never opened


def test_resume_in_a_second_process(tmp_path: Path) -> None:
    store(tmp_path).save_plan(PLAN)
    code = (
        "import json; from pathlib import Path;"
        "from planner.memory.history import PlanningHistoryStore;"
        f"s = PlanningHistoryStore(Path({str(tmp_path / 'history')!r}), 'octo/repo', '7');"
        "print(json.dumps(s.get_latest_plan()['plan']))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == PLAN


def test_corrupt_line_in_the_middle_is_skipped_and_kept(tmp_path: Path) -> None:
    history = store(tmp_path)
    history.save_plan(PLAN)
    with history.filepath.open("ab") as handle:
        handle.write(b'{"type": "reflection", "evaluation": {oops\n')
        handle.write(b"\x80\x81 binary garbage\n")
        handle.write(b'["not", "an", "entry"]\n')
    history.save_reflection({"ok": True})
    before = history.filepath.read_bytes()
    reader = store(tmp_path)
    assert [e["type"] for e in reader.entries()] == ["plan", "reflection"]
    assert len(reader.warnings) == 3 and "history line" in reader.warnings[0]
    assert reader.filepath.read_bytes() == before  # reading never rewrites


def test_truncated_last_line_does_not_swallow_the_next_entry(tmp_path: Path) -> None:
    history = store(tmp_path)
    history.save_plan(PLAN)
    with history.filepath.open("ab") as handle:
        handle.write(b'{"type": "reflection", "evalu')  # killed mid-write
    store(tmp_path).save_reflection({"after": "crash"})
    reader = store(tmp_path)
    entries = reader.entries()
    assert [e["type"] for e in entries] == ["plan", "reflection"]
    assert entries[1]["evaluation"] == {"after": "crash"}
    assert len(reader.warnings) == 1
    assert b'{"type": "reflection", "evalu\n' in reader.filepath.read_bytes()  # kept as it was


def _append_many(directory: str, writer: int, count: int) -> None:
    history = PlanningHistoryStore(Path(directory), "octo/repo", "7")
    payload = "x" * 5000  # larger than PIPE_BUF, so only the lock keeps lines whole
    for n in range(count):
        history.append("action", writer=writer, n=n, payload=payload)


def test_concurrent_appends_from_two_processes_never_interleave(tmp_path: Path) -> None:
    directory = str(tmp_path / "history")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_append_many, args=(directory, w, 200)) for w in (1, 2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    reader = PlanningHistoryStore(Path(directory), "octo/repo", "7")
    entries = reader.entries()
    assert reader.warnings == []
    assert len(entries) == 400
    for writer in (1, 2):
        assert [e["n"] for e in entries if e["writer"] == writer] == list(range(200))


def test_every_append_is_fsynced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    history = store(tmp_path)
    history.save_plan(PLAN)
    history.save_reflection({})
    assert len(synced) == 2


def test_unwritable_directory_is_a_clear_error(tmp_path: Path) -> None:
    from planner.memory.history import HistoryError

    history = store(tmp_path)
    history.filepath.mkdir()  # a directory where the file should be
    with pytest.raises(HistoryError, match="cannot open history"):
        history.save_plan(PLAN)


def test_lone_surrogates_from_a_model_are_recorded_not_lost(tmp_path: Path) -> None:
    history = store(tmp_path)
    history.append("action", arguments={"content": "broken emoji \ud83d here"})
    history.append("task", task_id="after")
    reader = store(tmp_path)
    entries = reader.entries()
    assert [e["type"] for e in entries] == ["action", "task"] and reader.warnings == []
    assert entries[0]["arguments"]["content"] == "broken emoji \ud83d here"


def test_an_append_waits_for_a_writer_holding_the_lock(tmp_path: Path) -> None:
    """The lock, not the kernel's append atomicity, keeps a truncated-line repair and the
    next entry together; a second writer must wait while the first holds it."""
    import fcntl

    history = store(tmp_path)
    history.save_plan(PLAN)
    before = history.filepath.read_bytes()
    code = (
        "from pathlib import Path; from planner.memory.history import PlanningHistoryStore;"
        f"PlanningHistoryStore(Path({str(history.directory)!r}), 'octo/repo', '7')"
        ".append('task', task_id='late')"
    )
    holder = os.open(history.filepath, os.O_RDWR)
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        writer = subprocess.Popen([sys.executable, "-c", code])
        with pytest.raises(subprocess.TimeoutExpired):
            writer.wait(timeout=2)  # blocked on the lock (a fast exit would fail this)
        assert history.filepath.read_bytes() == before
    finally:
        fcntl.flock(holder, fcntl.LOCK_UN)
        os.close(holder)
    assert writer.wait(timeout=30) == 0
    assert [e["type"] for e in store(tmp_path).entries()] == ["plan", "task"]
