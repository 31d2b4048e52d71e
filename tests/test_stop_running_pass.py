"""`/planner stop` reaches a pass that is running (issue 25, item 18): real entry-point jobs on
the fake GitHub. While one job works on the issue, a person comments `/planner stop`; that job
(a second one) cannot take the issue's lease, so it asks the running pass to stop. The running
pass stops after its current step, saves its work, says so, and the issue shows one state."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from planner.ci.issue_run import REPLY_MARKER
from tests.fake_forge.scenario import file_on
from tests.support.durable import CiJobs, issue_on, two_file_plan

STATUS_LABELS = {"planner:working", "planner:needs-input", "planner:paused", "planner:done"}


def test_stop_during_a_pass_stops_it_at_the_next_step_and_leaves_one_state(
    tmp_path: Path,
) -> None:
    fake, number = issue_on("github", tmp_path, "Two files", "Add ONE.md and TWO.md.")
    try:
        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        running = CiJobs("github", fake, tmp_path / "a", number)
        stopper = CiJobs("github", fake, tmp_path / "b", number)
        stops: list[Any] = []

        def stop_now(process: Any) -> None:  # while request 1 (write ONE.md) waits; the
            # pass stops once task_1 is finished (request 2), before task_2 starts
            stops.append(stopper.run(stopper.comment("/planner stop"), []))

        plan = two_file_plan("ONE.md", "TWO.md")
        finished = running.run(running.labelled(), plan[:3], hooks={1: stop_now})

        [stop] = stops
        assert stop.returncode == 0, stop.stdout + stop.stderr
        [reply] = [c.body for c in fake.comments_on(number) if REPLY_MARKER in c.body]
        assert "Stop requested" in reply
        assert finished.returncode == 0, finished.stdout + finished.stderr
        [tracking] = running.tracking()
        assert "stopped on request (`/planner stop`); the work so far is saved" in tracking.body
        assert file_on(fake.bare, f"planner/issue-{number}", "ONE.md") == "ONE.md"
        shown = STATUS_LABELS & set(fake.issues[number].labels)
        assert shown == {"planner:paused"}
        end = [e for e in running.history() if e["type"] == "run_end"][-1]
        assert end["status"] == "in_progress" and "stopped on request" in end["stop_reason"]
    finally:
        fake.stop()
