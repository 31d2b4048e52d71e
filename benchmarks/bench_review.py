"""A review of planner's pull request, worked through by a real model.

    python benchmarks/bench_review.py [--server URL] [--model NAME] [--runs N] [--scripted]

The fake GitHub (tests/fake_forge) holds a pull request planner opened (a scripted first pass adds
`largest` and `smallest` to stats.py). A reviewer comments on both new functions ("this fails on
an empty list: return None then") and submits the review with `/planner`; the review pass runs
against the model at --server (default: the 1.5B that `python3 scripts/local_model.py start
--model 1.5b` serves). Per run: threads whose change is right (largest([]) and smallest([]) are
None, the functions still work), threads completed with a wrong change, threads resolved, model
calls, prompt and completion tokens, minutes.

Every job runs in the setup a user gets: the default history folder `planning_history` inside the
checkout (carried from job to job by the issue's lease ref). `--scripted` replays the right
answers from the scripted model instead, to check the benchmark itself (its figures are no
measure of any model).
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.forge import github_env  # noqa: E402
from planner.ci.job import run_for_event  # noqa: E402
from planner.config import load_config  # noqa: E402
from planner.testing.scripted_server import ScriptedModelServer  # noqa: E402
from tests.fake_forge import FakeGitHub  # noqa: E402
from tests.fake_forge.scenario import clone  # noqa: E402
from tests.plans import REFINEMENT_OFF, completion, finish  # noqa: E402
from tests.review_scenario import (  # noqa: E402
    DEFAULT_LAYOUT,
    SETTINGS,
    edit,
    github_reviewed,
    on_branch,
    review_event,
)

COMMENT = "this fails on an empty list: return None then"
CHECKS = {
    "largest": ([3, 1, 2], 3),
    "smallest": ([3, 1, 2], 1),
}


def local_server() -> str:
    """The running 1.5B's base URL; '' when none runs."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "local_model.py"), "url", "--model", "1.5b"],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() if done.returncode == 0 else ""


def scripted_answers() -> list[Any]:
    """The right changes, one per thread, as a model that gets them right would make them."""
    return [
        edit("    return max(values)", "    return max(values) if values else None"),
        finish(summary="largest() returns None for an empty list"),
        edit("    return min(values)", "    return min(values) if values else None"),
        finish(summary="smallest() returns None for an empty list"),
        completion(completed=2),
    ]


def one_run(server: str, model: str, tmp: Path, **settings: Any) -> dict[str, Any]:
    fake = FakeGitHub(tmp / "fake").start()
    try:
        github_reviewed(fake, tmp, **DEFAULT_LAYOUT)
        [pull] = fake.pulls.values()
        threads = {
            "largest": fake.add_review_thread(pull.number, "stats.py", 6, COMMENT),
            "smallest": fake.add_review_thread(pull.number, "stats.py", 10, COMMENT),
        }
        env = {"OPENAI_API_KEY": "local", "OPENAI_BASE_URL": server, "OPENAI_MODEL": model}
        overrides = {**SETTINGS, **DEFAULT_LAYOUT, **settings}
        config = load_config(None, env=env, overrides=overrides)
        rig_env = github_env(fake)
        started = time.monotonic()
        outcome = run_for_event(
            "github",
            workspace=clone(fake.bare, tmp / "review-job"),
            config=config,
            env=rig_env,
            event=review_event(fake, "/planner"),
            event_name="pull_request_review",
        )
        minutes = (time.monotonic() - started) / 60
        right = behaves(on_branch(fake), tmp)
        completed = {name: "Changed in " in t.comments[-1].body for name, t in threads.items()}
        return {
            "status": outcome.status,
            "right": sum(right[name] for name in threads),
            "wrong_but_completed": sum(completed[n] and not right[n] for n in threads),
            "resolved": sum(t.resolved for t in threads.values()),
            "calls": outcome.model_calls,
            "tokens": outcome.tokens_used,
            "minutes": minutes,
        }
    finally:
        fake.stop()


def behaves(source: bytes, tmp: Path) -> dict[str, bool]:
    path = tmp / "stats_under_test.py"
    path.write_bytes(source)
    spec = importlib.util.spec_from_file_location("stats_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception:
        return dict.fromkeys(CHECKS, False)
    found = {}
    for name, (values, expected) in CHECKS.items():
        try:
            function = getattr(module, name)
            found[name] = function([]) is None and function(values) == expected
        except Exception:
            found[name] = False
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--server", default="")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b-instruct")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--scripted", action="store_true", help="replay the right answers")
    args = parser.parse_args()
    if args.scripted:
        with ScriptedModelServer(scripted_answers() * args.runs) as scripted:
            # the quality judge's replies are not scripted: it stays off, as in the tests
            return table(scripted.base_url, "scripted", args.runs, **REFINEMENT_OFF)
    server = args.server or local_server()
    if not server:
        print("bench_review: skipped, no local model (python3 scripts/local_model.py start)")
        return 0
    return table(server, args.model, args.runs)


def table(server: str, model: str, runs: int, **settings: Any) -> int:
    print("History: planning_history inside the checkout (the default).")
    print(
        "| run | status | threads right (of 2) | wrong but completed | resolved | calls "
        "| tokens | minutes |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for run in range(1, runs + 1):
        with tempfile.TemporaryDirectory(prefix="bench-review-") as tmp:
            row = one_run(server, model, Path(tmp), **settings)
        print(
            f"| {run} | {row['status']} | {row['right']} | {row['wrong_but_completed']} | "
            f"{row['resolved']} | {row['calls']} | {row['tokens']:,} | {row['minutes']:.1f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
