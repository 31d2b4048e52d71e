"""What watching for changes outside any judged call costs per action, on a repository of many
files (planner.approval.effects.EffectGuard over
planner.tools.commands.effects.TreeWatcher), and what ending the tools' leftover processes costs
(planner.tools.sandbox.leftovers).

    python benchmarks/bench_strays.py [--files 5000] [--file-bytes 2000] [--runs 20]

Per action, the gate compares the tree with the state it last judged (the stray check) and
takes a new snapshot after the action; a command or MCP call is compared once more after it
ran. Figures are medians of `--runs`, after a first snapshot that hashed every file:
(a) the stray check alone, nothing changed (`settle`);
(b) a direct file action through the guard, around a write of one file (`carry_out`);
(c) a command through the guard, around a command that changes nothing (`run`);
(d) the stray check that finds one deleted file, rolls it back and keeps it for a person;
(e) as root on Linux: the processes of the sandbox user stopped and continued around a task's
    commit, and killed when the tools close, with 0 and 10 of them left running.

Prints figures; it is not a test.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing planner

from benchmarks.bench_effects import repository, repository_options  # noqa: E402
from benchmarks.timing import median_ms  # noqa: E402
from planner.approval.effects import EffectGuard  # noqa: E402
from planner.approval.models import ActionSpecExt  # noqa: E402
from planner.approval.validation import SpecRules  # noqa: E402
from planner.config import ApprovalConfig  # noqa: E402
from planner.core.interfaces import ToolResult  # noqa: E402
from planner.tools.commands.effects import TreeWatcher  # noqa: E402
from planner.tools.files.paths import PathPolicy  # noqa: E402
from planner.tools.sandbox.isolation import SandboxUser  # noqa: E402
from planner.tools.sandbox.leftovers import adopt_orphans, end_processes, held  # noqa: E402

SANDBOX = SandboxUser(4713, 4713, "/")
"""A uid no account uses: the benchmark ends only processes it started itself."""
COMMAND = ActionSpecExt(id="a1", kind="run", content="true", description="bench")


def guard_for(root: Path) -> EffectGuard:
    """The guard as a pass builds it: defaults, some command allowed, low and medium in bulk."""
    config = ApprovalConfig()
    rules = SpecRules(PathPolicy.create(root), config, runs_commands=True)
    return EffectGuard(TreeWatcher(root), rules, lambda risk: risk == "high")


def per_action(root: Path, runs: int) -> dict[str, float]:
    guard = guard_for(root)
    guard.accept()  # the first snapshot of the pass: every file hashed once
    note = root / "pkg0000" / "notes.txt"

    def write() -> ToolResult:
        note.write_text(f"{time.perf_counter_ns()}\n")
        return ToolResult(ok=True)

    figures = {
        "settle": median_ms(guard.settle, runs),
        "carry_out": median_ms(lambda: guard.carry_out(COMMAND, write), runs),
        "run": median_ms(lambda: guard.run(COMMAND, lambda: ToolResult(ok=True)), runs),
        "stray": median_ms(lambda: delete_then_settle(root, guard), runs),
    }
    guard.watcher.close()
    return figures


def delete_then_settle(root: Path, guard: EffectGuard) -> None:
    """A deletion no judged call made: found, rolled back, kept for a person."""
    (root / "pkg0001" / "mod01.py").unlink()
    held_back = guard.settle()
    assert len(held_back) == 1 and (root / "pkg0001" / "mod01.py").exists()
    guard.take_strays()


def leftovers(runs: int) -> dict[str, float]:
    """The sandbox user's processes held around a commit and ended at close (root only)."""
    adopt_orphans()
    try:
        return {
            "hold around a commit, none running": hold_ms(0, runs),
            "hold around a commit, 10 running": hold_ms(10, runs),
            "end at close, none running": end_ms(0, runs),
            "end at close, 10 running": end_ms(10, runs),
        }
    finally:
        end_processes(SANDBOX)
        adopt_orphans(False)


def hold_ms(count: int, runs: int) -> float:
    """Stopping and continuing `count` detached processes of the sandbox user."""
    detach(count)

    def hold() -> None:
        with held(SANDBOX):
            pass

    figure = median_ms(hold, runs)
    end_processes(SANDBOX)
    return figure


def end_ms(count: int, runs: int) -> float:
    """Killing `count` detached processes of the sandbox user, started anew for each run."""
    times = []
    for _ in range(runs):
        detach(count)
        times.append(median_ms(lambda: end_processes(SANDBOX), 1))
    return statistics.median(times)


def detach(count: int) -> None:
    """`count` sleeping processes in sessions of their own, as a command that daemonises."""
    script = f"for i in $(seq {count}); do setsid sleep 300 </dev/null >/dev/null 2>&1 & done"
    subprocess.run(["sh", "-c", script], cwd="/", check=True, **SANDBOX.popen_arguments())


def main(argv: list[str] | None = None) -> int:
    parser = repository_options(__doc__.splitlines()[0], 5_000)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args(argv)
    with repository(args.files, args.file_bytes) as root:
        figures = per_action(root, args.runs)
    print(f"repository: {args.files} files of {args.file_bytes} bytes; medians of {args.runs}")
    print(f"(a) stray check, nothing changed:       {figures['settle']:7.1f} ms")
    print(f"(b) a file action through the guard:    {figures['carry_out']:7.1f} ms")
    print(f"(c) a command through the guard:        {figures['run']:7.1f} ms")
    print(f"(d) stray check finding one deletion:   {figures['stray']:7.1f} ms")
    if sys.platform != "linux" or os.geteuid() != 0:
        print("(e) skipped: the sandbox user exists only when planner runs as root on Linux")
        return 0
    for name, value in leftovers(args.runs).items():
        print(f"(e) {name + ':':36s}{value:7.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
