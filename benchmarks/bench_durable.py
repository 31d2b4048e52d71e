"""What durability costs (issue 15), against the fake GitHub over real sockets.

    .venv/bin/python benchmarks/bench_durable.py

(a) One CI pass (run_for_event, 5 tasks x 1 file, replanning and reflection off, zero model
    latency) on the fake GitHub: the time spent in the checkpoint commits + pushes after each
    task, the final publish, the lease (take, free with the history in it) and the
    reconciliation of history and branch, per pass and per task. Median of 5 passes.
(b) The issue's history through the lease ref at 1e2, 1e4 and 1e5 entries (~300 bytes each):
    save (hash-object, mktree, commit-tree, push) and fetch (fetch, read the blob, compare,
    rename into place); and reading it back with every entry validated.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.forge import github_env
from planner.ci import issue_run
from planner.ci.branch import lease
from planner.ci.branch.gitops import GitWorkspace, Identity
from planner.ci.durability import durable
from planner.ci.handlers import issue_pass
from planner.ci.job import run_for_event
from planner.memory.history import PlanningHistoryStore, read_entries
from planner.testing.scripted_server import ScriptedModelServer
from tests.fake_forge import FakeGitHub
from tests.fake_forge.scenario import clone, labeled_event, model_config
from tests.support.durable import completion_step, task_steps, two_file_plan

TASKS = 5
SPENT: dict[str, float] = defaultdict(float)


def timed(owner: Any, name: str, label: str) -> None:
    original: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            SPENT[label] += time.perf_counter() - started

    setattr(owner, name, wrapper)


def five_task_script() -> list[Any]:
    import json

    from planner.testing.steps import reply_json

    plan = json.loads(two_file_plan("a", "b")[0].content or "{}")
    subtask, action = plan["task_decomposition"]["subtasks"][0], plan["action_plan"]["actions"][0]
    ids = [f"task_{n}" for n in range(1, TASKS + 1)]
    # Each task names its own file: plan repair joins consecutive tasks that change the same files.
    plan["task_decomposition"]["subtasks"] = [
        {**subtask, "id": i, "description": f"Write {i}.txt"} for i in ids
    ]
    plan["action_plan"]["actions"] = [
        {
            **action,
            "task_id": i,
            "purpose": f"create {i}.txt",
            "expected_outcome": f"{i}.txt written",
        }
        for i in ids
    ]
    plan["action_plan"]["execution_order"] = ids
    steps = [reply_json("planning", plan)]
    for task in ids:
        steps += task_steps(task, f"{task}.txt")
    return [*steps, completion_step()]


def one_pass(root: Path) -> tuple[float, dict[str, float]]:
    SPENT.clear()
    with running(FakeGitHub(root / "fake")) as fake:
        fake.add_issue(1, "Bench", "Write files.", labels=["planner"])
        fake.permissions["Codertocat"] = "write"
        env = github_env(fake, GITHUB_RUN_ID="1")
        workspace = clone(fake.bare, root / "job")
        with ScriptedModelServer(five_task_script()) as model:
            config = model_config(
                model.base_url,
                root / "history",
                **{"planning.replanning.enabled": False, "planning.reflection.enabled": False},
            )
            started = time.perf_counter()
            outcome = run_for_event(
                "github",
                workspace=workspace,
                config=config,
                env=env,
                event=labeled_event(),
                event_name="issues",
            )
            total = time.perf_counter() - started
            assert outcome.status == "completed", outcome.reason
    return total, dict(SPENT)


def bench_pass() -> None:
    timed(durable.CheckpointReporter, "checkpoint", "checkpoint commit + push (per task)")
    timed(issue_pass, "publish_pass", "final commit + publish")
    timed(issue_run, "take_lease", "lease: take")
    timed(issue_run, "free_lease", "lease: free with history")
    timed(issue_pass, "reconcile_branch", "reconcile history and branch")
    totals, parts = [], defaultdict(list)
    for _ in range(5):
        with tempfile.TemporaryDirectory() as tmp:
            total, spent = one_pass(Path(tmp))
        totals.append(total)
        for label, seconds in spent.items():
            parts[label].append(seconds)
    print(f"(a) one CI pass, {TASKS} tasks, fake GitHub: {statistics.median(totals) * 1000:.0f} ms")
    extra = 0.0
    for label, values in parts.items():
        median = statistics.median(values) * 1000
        extra += median
        print(f"    {label:<40} {median:8.1f} ms per pass")
    print(
        f"    {'durability in all':<40} {extra:8.1f} ms per pass, {extra / TASKS:.1f} ms per task"
    )


def bench_history() -> None:
    print("(b) history through the lease ref (save = commit + push, fetch = fetch + read):")
    identity = Identity("bench", "bench@example.invalid")
    for count in (100, 10_000, 100_000):
        with tempfile.TemporaryDirectory() as tmp, running(FakeGitHub(Path(tmp) / "fake")) as fake:
            root = Path(tmp)
            git = GitWorkspace(clone(fake.bare, root / "job"), fake_remote(fake))
            history = fill(root / "history", count)
            rules = lease.LeaseRules(seconds=60, wait=60, identity=identity)
            held = lease.acquire(git, 1, "bench", rules)
            started = time.perf_counter()
            lease.release(git, held, history, identity)
            save_ms = (time.perf_counter() - started) * 1000
            other = GitWorkspace(clone(fake.bare, root / "next"), fake_remote(fake))
            target = root / "fresh" / history.name
            started = time.perf_counter()
            taken = lease.acquire(other, 1, "bench-2", rules)
            assert lease.restore_history(other, taken, target)
            fetch_ms = (time.perf_counter() - started) * 1000
            started = time.perf_counter()
            read = sum(1 for _ in read_entries(target))
            read_ms = (time.perf_counter() - started) * 1000
            assert read == count
            print(
                f"    {count:>7} entries ({history.stat().st_size / 1e6:5.1f} MB): save "
                f"{save_ms:8.1f} ms, fetch {fetch_ms:8.1f} ms, read + validate {read_ms:8.1f} ms"
            )


@contextlib.contextmanager
def running(fake: FakeGitHub) -> Iterator[FakeGitHub]:
    fake.start()
    try:
        yield fake
    finally:
        fake.stop()


def fake_remote(fake: FakeGitHub) -> Any:
    from planner.ci.forges.github import GitHubForge
    from planner.config import ForgeConfig

    return GitHubForge.from_env(github_env(fake), ForgeConfig()).git_remote()


def fill(directory: Path, count: int) -> Path:
    store = PlanningHistoryStore(directory, "bench/repo", "1")
    store.append("action", index=0, task_id="task_1", ok=True, result="x" * 200)
    line = store.filepath.read_bytes()
    with store.filepath.open("ab") as handle:
        handle.write(line * (count - 1))
    return store.filepath


if __name__ == "__main__":
    bench_pass()
    bench_history()
