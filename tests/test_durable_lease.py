"""No event is dropped and issues run in parallel: the real entry point, jobs at once.

Two events on one issue: the second job waits for the first one's lease, then handles its own
instruction with the first one's history (carried by the lease ref, not by a cache: the two
jobs start from the same empty cache). Two issues: both jobs run at the same time.
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from planner.engine.history import read_entries, task_uuid
from tests.fake_forge import FakeGitHub, FakeGitLab
from tests.fake_forge.core import git
from tests.fake_forge.scenario import file_on
from tests.support.durable import CiJobs, Finished, one_task_plan, two_file_plan

PLAN = two_file_plan("ONE.md", "TWO.md")


def forge(platform: str, tmp: Path) -> tuple[Any, list[int]]:
    if platform == "github":
        fake: Any = FakeGitHub(tmp / "fake").start()
        numbers = [1, 2]
        for number in numbers:
            fake.add_issue(number, f"Issue {number}", "Add files.", labels=["planner"])
        fake.permissions["Codertocat"] = "write"
        return fake, numbers
    fake = FakeGitLab(tmp / "fake").start()
    numbers = [12, 13]
    for number in numbers:
        fake.add_issue(number, f"Issue {number}", "Add files.", labels=["bug", "planner"])
    fake.members[7] = 30
    return fake, numbers


@pytest.fixture(params=["github", "gitlab"])
def setup(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    fake, numbers = forge(request.param, tmp_path)
    try:
        yield request.param, fake, numbers
    finally:
        fake.stop()


def in_thread(run: Any) -> tuple[threading.Thread, dict[str, Finished]]:
    box: dict[str, Finished] = {}
    thread = threading.Thread(target=lambda: box.update(done=run()))
    thread.start()
    return thread, box


def test_two_events_on_one_issue_at_once_run_one_after_the_other_and_keep_both(
    setup: Any, tmp_path: Path
) -> None:
    platform, fake, numbers = setup
    first = CiJobs(platform, fake, tmp_path / "a", numbers[0])
    second = CiJobs(platform, fake, tmp_path / "b", numbers[0])
    started = threading.Event()

    def hold(process: subprocess.Popen[bytes]) -> None:
        lease_fetches = observe_lease_fetches(fake, numbers[0])
        started.set()  # the first job holds the lease and is planning ...
        for _ in range(2):  # ... until the second job found it held and polled once more
            lease_fetches.acquire(timeout=30)

    label = first.labelled()
    thread, box = in_thread(lambda: first.run(label, PLAN, hooks={0: hold}))
    assert started.wait(60)
    comment = second.comment("/planner also add THREE.md")
    after = second.run(comment, one_task_plan("THREE.md"))
    thread.join(120)

    assert box["done"].returncode == 0, box["done"].stdout
    assert after.returncode == 0, after.stdout
    assert "waiting for run" in after.stdout  # it waited for the first job's lease
    branch = f"planner/issue-{numbers[0]}"
    for name in ("ONE.md", "TWO.md", "THREE.md"):
        assert file_on(fake.bare, branch, name) == name
    history = list(
        read_entries(second.workspace / "planning_history" / history_file(fake, numbers[0]))
    )
    starts = [e for e in history if e["type"] == "run_start"]
    assert len(starts) == 2 and starts[1]["instruction"] == "also add THREE.md"
    [text] = [e["text"] for e in history if e["type"] == "human_input"]
    assert text == "also add THREE.md"
    assert len(second.tracking()) == 1
    pulls = fake.pulls if platform == "github" else fake.merge_requests
    assert len(pulls) == 1
    assert lease_state(fake, numbers[0]) == "free"


def test_two_issues_at_once_run_in_parallel(setup: Any, tmp_path: Path) -> None:
    platform, fake, numbers = setup
    jobs = [CiJobs(platform, fake, tmp_path / str(n), n) for n in numbers]
    both = threading.Barrier(2, timeout=60)

    def meet(process: subprocess.Popen[bytes]) -> None:
        both.wait()  # each job reaches its first task only while the other one runs too

    events = [job.labelled() for job in jobs]
    runs = [
        in_thread(lambda j=j, e=e: j.run(e, PLAN, hooks={1: meet}))
        for j, e in zip(jobs, events, strict=True)
    ]
    for thread, _ in runs:
        thread.join(120)

    for (_, box), number in zip(runs, numbers, strict=True):
        assert box["done"].returncode == 0, box["done"].stdout
        for name in ("ONE.md", "TWO.md"):
            assert file_on(fake.bare, f"planner/issue-{number}", name) == name
    assert [len(job.tracking()) for job in jobs] == [1, 1]


def observe_lease_fetches(fake: Any, number: int) -> threading.Semaphore:
    """Released once for every fetch of the issue's lease ref that reaches the fake forge
    from now on (its ls-refs request names the ref)."""
    fetched = threading.Semaphore(0)
    original, ref = fake._git, f"refs/planner/issues/{number}".encode()

    def observe(method: str, found: Any, query: str, headers: Any, body: bytes) -> Any:
        if found["rest"] == "git-upload-pack" and ref in body:
            fetched.release()
        return original(method, found, query, headers, body)

    fake._git = observe
    return fetched


def history_file(fake: Any, number: int) -> str:
    return f"{task_uuid(fake.repository, str(number))}.jsonl"


def lease_state(fake: Any, number: int) -> str:
    message = git(fake.bare, "log", "-1", "--format=%B", f"refs/planner/issues/{number}")
    return next(
        line.split(": ", 1)[1] for line in message.splitlines() if line.startswith("state:")
    )
