"""Core figures: orchestration overhead of a pass, and history append/load cost.

    python3 scripts/dev.py bench      (or: .venv/bin/python benchmarks/bench_core.py)

(a) One pass against the scripted model server with zero model latency: 5 tasks x 2 actions,
    so everything measured is planner's own work plus local HTTP. Reported per pass and per
    action, and with the time spent inside model calls (HTTP round trips) taken out.
(b) PlanningHistoryStore: append (flock + fsync per entry) and full load at 1e2, 1e4, 1e5 entries.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from planner.config import load_config
from planner.memory.history import PlanningHistoryStore
from planner.run.runner import PassSetup, run_pass
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import Step
from planner.text.issue import IssueContext
from tests.plans import completed, finish, judge_plan, judge_result, planned, write

TASKS = [f"task_{n}" for n in range(1, 6)]
ISSUE = IssueContext(repository="bench/repo", number="1", title="Benchmark", body="Write files.")


def pass_script() -> list[Step]:
    # the plan, its replanning review and its quality judgement (both on by default)
    steps = [*planned(*TASKS), judge_plan(85, True)]
    for task in TASKS:
        steps += [write(f"{task}-a.txt"), write(f"{task}-b.txt"), finish()]
    evaluation, completion = completed(completed=len(TASKS))
    return [*steps, evaluation, judge_result(90, True), completion]


def one_pass(server: ScriptedModelServer, root: Path) -> tuple[float, float, int]:
    root.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    server.add(*pass_script())
    env = {"OPENAI_API_KEY": "bench", "OPENAI_BASE_URL": server.base_url}
    config = load_config(None, env=env, overrides={"planning.reflection.trigger_interval": 0})
    started = time.perf_counter()
    result = run_pass(PassSetup(config=config, workspace=root), ISSUE)
    elapsed = time.perf_counter() - started
    assert result.status == "completed", result.stop_reason
    store = PlanningHistoryStore(root / "planning_history", ISSUE.repository, ISSUE.number)
    model_ms = sum(e["latency_ms"] for e in store.entries() if e["type"] == "model_call")
    return elapsed * 1000, model_ms, result.actions


def bench_pass(runs: int = 20) -> None:
    totals, own = [], []
    actions = 0
    with tempfile.TemporaryDirectory() as tmp, ScriptedModelServer() as server:
        for n in range(runs):
            total_ms, model_ms, actions = one_pass(server, Path(tmp) / f"r{n}")
            totals.append(total_ms)
            own.append(total_ms - model_ms)
        server.assert_consumed()
    median, median_own = statistics.median(totals), statistics.median(own)
    shape = f"{runs} passes of {len(TASKS)} tasks / {actions} actions"
    print(f"(a) pass overhead, {shape}, zero-latency model:")
    print(f"    {median:.1f} ms per pass, {median / actions:.2f} ms per action (median, with HTTP)")
    print(
        f"    {median_own:.1f} ms per pass, {median_own / actions:.2f} ms per action "
        "excluding time inside model calls"
    )


def bench_history() -> None:
    print("(b) history (one entry ~ 300 bytes; append = lock + write + fsync):")
    for count in (100, 10_000, 100_000):
        with tempfile.TemporaryDirectory() as tmp:
            store = PlanningHistoryStore(Path(tmp), "bench/repo", "1")
            sample = min(count, 2_000)  # fsync dominates; time a sample, bulk-write the rest
            started = time.perf_counter()
            for n in range(sample):
                store.append("action", index=n, task_id="task_1", ok=True, result="x" * 200)
            append_us = (time.perf_counter() - started) / sample * 1e6
            _bulk_fill(store.filepath, count - sample)
            started = time.perf_counter()
            loaded = PlanningHistoryStore(Path(tmp), "bench/repo", "1").entries()
            load_ms = (time.perf_counter() - started) * 1000
            assert len(loaded) == count
            print(
                f"    {count:>7} entries: append {append_us:8.1f} µs/entry, load {load_ms:9.1f} ms"
            )


def _bulk_fill(path: Path, count: int) -> None:
    line = path.read_bytes().splitlines(keepends=True)[-1]
    with path.open("ab") as handle:
        handle.write(line * count)


if __name__ == "__main__":
    bench_pass()
    bench_history()
