"""The skip path of the container's entry point: process start to exit for an event that does
not concern the planner (an `issues.labeled` event for the label `bug`).

    python benchmarks/bench_entrypoint.py [--runs 20]

Prints figures; it is not a test. Every run is a new `python entrypoint.py` process with the
environment a GitHub runner gives the Docker action (every INPUT_* of action.yml), so the figure
includes interpreter start-up, reading inputs and config, and parsing the event. For comparison:
the bare interpreter, and what importing planner.ci.job alone costs (an entry point that loaded
everything before deciding to skip would pay at least that on top). Bytecode is compiled by a
warm-up run first, as the image's is at build time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing planner

from tests.support.ci_job import action_inputs  # noqa: E402

PAYLOAD = ROOT / "tests" / "fixtures" / "github" / "webhooks" / "issues.labeled.json"
HEAVY = (
    "openai",
    "mcp",
    "requests",
    "jinja2",
    "planner.ci.job",
    "planner.model.llm",
    "planner.storage",
)


def runner_env(tmp: Path) -> dict[str, str]:
    (tmp / "home").mkdir()
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp / "home"),
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "issues",
        "GITHUB_EVENT_PATH": str(PAYLOAD),  # labeled `bug`: not ours
        "GITHUB_REPOSITORY": "Codertocat/Hello-World",
        "GITHUB_WORKSPACE": str(tmp),
        "GITHUB_API_URL": "http://127.0.0.1:9/api/v3",  # never contacted on the skip path
        "GITHUB_SERVER_URL": "http://127.0.0.1:9",
        "GITHUB_RUN_ID": "1",
        "GITHUB_OUTPUT": str(tmp / "set_output"),
        "GITHUB_STEP_SUMMARY": str(tmp / "step_summary"),
        **action_inputs("ghs_benchmarkToken0123456789"),
    }


def timed(command: list[str], env: dict[str, str], cwd: Path, runs: int) -> list[float]:
    subprocess.run(command, env=env, cwd=cwd, capture_output=True, check=True)  # warm-up
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(command, env=env, cwd=cwd, capture_output=True)
        times.append((time.perf_counter() - started) * 1000)
        assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    return times


def describe(label: str, times: list[float]) -> None:
    ordered = sorted(times)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    print(
        f"    {label:<44} median {statistics.median(times):6.0f} ms, "
        f"min {ordered[0]:5.0f} ms, p90 {p90:5.0f} ms"
    )


def loaded_on_skip(env: dict[str, str], cwd: Path) -> list[str]:
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from planner.ci.action import main; "
        "main(); import json; print(json.dumps(sorted(set(sys.modules) & set(sys.argv[2:]))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(ROOT), *HEAVY], env=env, cwd=cwd, capture_output=True
    )
    last_line = done.stdout.decode().strip().splitlines()[-1]
    return list(json.loads(last_line))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        env = runner_env(tmp)
        entry = [sys.executable, str(ROOT / "entrypoint.py")]
        eager = [
            sys.executable,
            "-c",
            f"import sys; sys.path.insert(0, {str(ROOT)!r}); import planner.ci.job",
        ]
        print(f"entry point skip path ({args.runs} runs each, Python {sys.version.split()[0]}):")
        describe("python entrypoint.py, event not ours", timed(entry, env, tmp, args.runs))
        describe(
            "python -c pass (interpreter start-up)",
            timed([sys.executable, "-c", "pass"], env, tmp, args.runs),
        )
        describe(
            "import planner.ci.job alone (eager entry point)", timed(eager, env, tmp, args.runs)
        )
        heavy = loaded_on_skip(env, tmp)
        print(f"    heavy modules loaded on the skip path: {', '.join(heavy) or 'none'}")


if __name__ == "__main__":
    main()
