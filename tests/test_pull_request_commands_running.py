"""Commands on planner's pull request while a pass runs on its issue (issue 44, item 1, the
state "pass running"): real entry-point jobs on the fake GitHub. While a second pass works on
the issue, a person writes `/planner cancel` and `/planner resume` on the pull request (their
jobs wait for the issue's lease), then `/planner stop` (its job asks the running pass to stop).
Each command means what it means on the issue: the stop ends the pass at its next step; the
cancel finds no session and says so; the resume, asked before the stop, starts no work."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from planner.ci.issue_run import REPLY_MARKER
from tests.fake_forge.scenario import comment_event, file_on
from tests.support.ci_job import Finished
from tests.support.durable import CiJobs, issue_on, one_task_plan

STATUS_LABELS = {"planner:working", "planner:needs-input", "planner:paused", "planner:done"}


def on_pull(jobs: CiJobs, pull: int, body: str) -> dict[str, Any]:
    made = jobs.fake.comment_json(jobs.fake.add_comment(pull, body))
    payload = comment_event(body, made, pull)
    payload["issue"]["pull_request"] = {"url": f"{jobs.fake.api_url}/pulls/{pull}"}
    payload["repository"]["full_name"] = jobs.fake.repository
    return payload


def test_cancel_resume_and_stop_on_the_pull_request_while_a_pass_runs(tmp_path: Path) -> None:
    fake, number = issue_on("github", tmp_path, "Two files", "Add ONE.md.")
    try:
        for name in ("a", "b", "c", "d"):
            (tmp_path / name).mkdir()
        running = CiJobs("github", fake, tmp_path / "a", number)
        first = running.run(running.labelled(), one_task_plan("ONE.md"))
        assert first.returncode == 0, first.stdout + first.stderr
        [pull] = fake.pulls.values()

        waiting: dict[str, Finished] = {}
        threads: list[threading.Thread] = []

        def wait_for_the_lease(name: str, body: str) -> None:
            jobs = CiJobs("github", fake, tmp_path / name, number)
            payload = on_pull(jobs, pull.number, body)  # the comment exists from now on

            def job() -> None:
                waiting[name] = jobs.run(payload, [])  # no model call may happen

            threads.append(threading.Thread(target=job))
            threads[-1].start()

        def commands(process: Any) -> None:  # while the second pass writes TWO.md
            wait_for_the_lease("b", "/planner cancel")
            wait_for_the_lease("c", "/planner resume")
            stopper = CiJobs("github", fake, tmp_path / "d", number)
            stop = stopper.run(on_pull(stopper, pull.number, "/planner stop"), [])
            assert stop.returncode == 0, stop.stdout + stop.stderr

        second = running.run(
            running.comment("/planner also add TWO.md"),
            one_task_plan("TWO.md")[:3],  # plan, write, finish: then it stops
            hooks={1: commands},
        )
        for thread in threads:
            thread.join(timeout=120)

        assert second.returncode == 0, second.stdout + second.stderr
        assert file_on(fake.bare, f"planner/issue-{number}", "TWO.md") == "TWO.md"
        end = [e for e in running.history() if e["type"] == "run_end"][-1]
        assert end["status"] == "in_progress" and "stopped on request" in end["stop_reason"]
        [tracking] = running.tracking()
        assert {name: done.returncode for name, done in waiting.items()} == {"b": 0, "c": 0}
        said = [c.body for c in fake.comments_on(number) if REPLY_MARKER in c.body]
        assert any("Stop requested" in body for body in said)
        assert any("Nothing to cancel" in body for body in said)  # no session, no pass
        assert "nothing was done" in tracking.body  # the resume asked before the stop
        assert STATUS_LABELS & set(fake.issues[number].labels) == {"planner:paused"}
    finally:
        fake.stop()
