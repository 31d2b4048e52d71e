"""A review that arrives while a pass works on the issue waits its turn and is not lost: the real
entry point in two jobs at once on the fake GitHub, the issue's lease between them."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from planner.memory.history import read_entries, task_uuid
from tests.fake_forge import FakeGitHub
from tests.fake_forge.core import git
from tests.review_scenario import NONE_CASE, STATS, first_pass, largest_fixed, review_event
from tests.support.durable import CiJobs, commit_config, completion_step, one_task_plan
from tests.test_durable_lease import observe_lease_fetches


def test_a_review_during_a_pass_is_handled_by_the_next_one(tmp_path: Path) -> None:
    with FakeGitHub(tmp_path / "fake") as fake:
        run_it(fake, tmp_path)
    assert fake.openapi_problems == []


def run_it(fake: FakeGitHub, tmp_path: Path) -> None:
    fake.add_issue(1, "Add largest and smallest", "stats.py needs them.", labels=["planner"])
    fake.permissions["Codertocat"] = "write"
    fake.push_main(
        {"stats.py": "def mean(values):\n    return sum(values) / len(values)\n"}, "stats"
    )
    commit_config(fake, 'verification:\n  enabled: "off"\n')
    first = CiJobs("github", fake, tmp_path / "a", 1)
    opened = first.run(first.labelled(), [*first_pass()[:3], completion_step()])
    assert opened.returncode == 0, opened.stdout
    [pull] = fake.pulls.values()
    assert "def largest" in git(fake.bare, "show", f"{pull.head}:stats.py")
    assert git(fake.bare, "show", f"{pull.head}:stats.py") + "\n" == STATS

    second = CiJobs("github", fake, tmp_path / "b", 1)
    box: dict[str, Any] = {}

    def review_arrives(process: Any) -> None:
        """The first job is planning (it holds the lease): a reviewer comments on a line and
        submits the review; its job starts and finds the lease held."""
        box["thread"] = fake.add_review_thread(pull.number, "stats.py", 6, NONE_CASE)
        fetches = observe_lease_fetches(fake, 1)
        script = [
            *largest_fixed(),
            completion_step(),
        ]
        event = review_event(fake, "/planner")
        job = threading.Thread(
            target=lambda: box.update(
                done=second.run(event, script, event_name="pull_request_review")
            )
        )
        job.start()
        box["job"] = job
        for _ in range(2):  # it polled the lease twice: it waits for the first job
            assert fetches.acquire(timeout=60)

    running = first.run(
        first.comment("/planner also add DOC.md"),
        one_task_plan("DOC.md"),
        hooks={0: review_arrives},
    )
    box["job"].join(150)

    assert running.returncode == 0, running.stdout
    after = box["done"]
    assert after.returncode == 0, after.stdout
    assert "waiting for run" in after.stdout
    thread = box["thread"]
    [_, reply] = thread.comments
    assert reply.user == "github-actions[bot]" and "Changed in " in reply.body
    assert "The tests did not run" in reply.body and not thread.resolved  # verification is off
    stats = git(fake.bare, "show", f"{pull.head}:stats.py")
    assert "return max(values) if values else None" in stats
    assert git(fake.bare, "show", f"{pull.head}:DOC.md") == "DOC.md"  # the first job's work
    history = list(
        read_entries(
            second.workspace / "planning_history" / f"{task_uuid(fake.repository, '1')}.jsonl"
        )
    )
    kinds = [e["type"] for e in history]
    assert kinds.count("review_thread") == 1 and kinds.count("review_reply") == 1
