"""What the approval gate costs: per write_file through the guarded registry against the bare
tool, the preview (validation + unified diff) of a 1 MB file overwrite, and the check of a
write that replaces a 3,000-line module with other content (destructive_change).

    python benchmarks/bench_approval.py [--writes 200]

Prints figures; it is not a test. The gated write is auto-approved (risky mode, low/medium in
bulk): propose, set_action_specs (validation, preflight, diff), approve, execute, and the plan
files saved atomically at each step.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing planner

from planner.approval.models import ActionSpec, MessageRef  # noqa: E402
from planner.approval.setup import install_gate  # noqa: E402
from planner.config import PlannerConfig  # noqa: E402
from planner.memory.history import PlanningHistoryStore  # noqa: E402
from planner.tools.build import build_registry  # noqa: E402
from planner.tools.files.destructive import destructive_change  # noqa: E402


def timed(action: Callable[[int], object], count: int) -> float:
    """Median milliseconds of `count` calls."""
    samples = []
    for index in range(count):
        started = time.perf_counter()
        action(index)
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--writes", type=int, default=200)
    count = parser.parse_args().writes
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        config = PlannerConfig.model_validate({"approval": {"large_file_bytes": 10_000_000}})
        repo, history = root / "repo", root / "history"
        repo.mkdir()
        bare = build_registry(config.tools, repo, (history,))
        gated = build_registry(config.tools, repo, (history,))
        store = PlanningHistoryStore(history, "bench/repo", "1")
        gate = install_gate(config, repo, store, gated, ())

        def write(registry_call: Callable[..., object], prefix: str) -> Callable[[int], object]:
            return lambda i: registry_call(
                "write_file", {"path": f"{prefix}{i}.txt", "content": "x\n"}
            )

        plain = timed(write(bare.call, "plain"), count)
        guarded = timed(write(gated.call, "gated"), count)
        print(f"write_file, bare tool:           {plain:.2f} ms (median of {count})")
        print(f"write_file through the gate:     {guarded:.2f} ms (+{guarded - plain:.2f} ms)")

        big = repo / "big.txt"
        big.write_text("".join(f"line {n} of a large file\n" for n in range(40_000)))
        changed = big.read_text().replace("line 20000 ", "line twenty thousand ")
        tool = gate.tool

        def preview(_: int) -> object:
            plan_id = tool.propose("bench", [MessageRef(message_id="b", timestamp="t")])
            return tool.set_action_specs(
                plan_id, [ActionSpec(kind="write", path="big.txt", content=changed)]
            )

        size = big.stat().st_size
        median = timed(preview, 10)
        print(f"preview of a {size / 1e6:.1f} MB overwrite: {median:.1f} ms (median of 10)")
        bare.close()
        gated.close()
    module, other = module_and_rewrite()
    check = timed(lambda _: destructive_change("stats.py", module, other, whole=True), 10)
    print(
        f"destructive-change check, 3,000-line module written over: {check:.1f} ms (median of 10)"
    )


def module_and_rewrite() -> tuple[str, str]:
    """300 functions of 12 lines (blank lines and `return` lines repeat hundreds of times), and
    1,000 other functions written over them."""
    functions = [
        f"def helper_{n}(values):\n    total = 0\n    for value in values:\n"
        f"        total += value * {n}\n\n    if total < 0:\n        return None\n"
        "    return total\n\n\n"
        for n in range(300)
    ]
    other = "".join(f"def replaced_{n}():\n    return {n}\n\n\n" for n in range(1000))
    return "".join(functions), other


if __name__ == "__main__":
    main()
