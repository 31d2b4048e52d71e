"""No event is dropped and issues run in parallel: the real entry point, jobs at once.

Two events on one issue: the second job waits for the first one's lease, then handles its own
instruction with the first one's history (carried by the lease ref, not by a cache: the two
jobs start from the same empty cache). Two issues: both jobs run at the same time.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from planner.memory.history import read_entries, task_uuid
from tests.fake_forge import FakeGitHub, FakeGitLab
from tests.fake_forge.core import IDENTITY, git
from tests.fake_forge.scenario import file_on
from tests.support.durable import (
    CiJobs,
    Finished,
    commit_config,
    issue_on,
    one_task_plan,
    two_file_plan,
)
from tests.support.planning_session import design_step, discovery_step

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


# -- a lease someone else holds ---------------------------------------------------------------


def hold_lease(fake: Any, number: int, holder: str, expires: float) -> str:
    """A lease ref on the forge as another run leaves it (held until `expires`)."""
    tree = git(fake.bare, "hash-object", "-t", "tree", "-w", "/dev/null")
    message = f"planner lease\n\nstate: held\nholder: {holder}\nexpires: {expires:.0f}\n"
    sha = git(fake.bare, "commit-tree", tree, "-m", message, env=IDENTITY)
    git(fake.bare, "update-ref", f"refs/planner/issues/{number}", sha)
    return sha


@pytest.fixture(params=["github", "gitlab"])
def short_lease(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """An issue on a forge whose config makes a lease last (and be waited for) 3 seconds."""
    fake, number = issue_on(request.param, tmp_path, "Two files", "Add ONE.md and TWO.md.")
    commit_config(fake, "forge:\n  lease_seconds: 3\n  lease_wait_seconds: 3\n")
    try:
        yield CiJobs(request.param, fake, tmp_path, number)
    finally:
        fake.stop()


@pytest.mark.parametrize("event", ["labelled", "interactive"])
def test_a_lease_held_past_the_wait_leaves_the_event_unhandled_and_says_so(
    short_lease: CiJobs, event: str
) -> None:
    """A live run holds the issue for longer than this run may wait. Attack on the history:
    two runs writing one issue at once. The waiting run must touch neither the branch, the
    history nor the lease, call no model, and say that its event was not handled. A planning
    session's reply waits like any other event (sessions used to run before the lease)."""
    jobs = short_lease
    held = hold_lease(jobs.fake, jobs.number, "run-elsewhere", time.time() + 50)
    payload = jobs.labelled()
    if event == "interactive":
        payload = interactive_label(jobs, payload)

    finished = jobs.run(payload, [])

    assert finished.returncode == 1, finished.stdout
    [comment] = jobs.tracking()
    assert "This event was not handled: run run-elsewhere still works on this issue" in (
        comment.body
    )
    assert "Comment again to continue" in comment.body
    assert not jobs.fake.branch_exists(f"planner/issue-{jobs.number}")
    assert git(jobs.fake.bare, "rev-parse", f"refs/planner/issues/{jobs.number}") == held
    assert not jobs.history()


def test_the_lease_of_a_run_that_died_is_taken_over_and_said(short_lease: CiJobs) -> None:
    jobs = short_lease
    hold_lease(jobs.fake, jobs.number, "run-that-died", time.time() - 5)

    finished = jobs.run(jobs.labelled(), PLAN)

    assert finished.returncode == 0, finished.stdout
    [comment] = jobs.tracking()
    assert "The previous run (run-that-died) stopped without finishing" in comment.body
    assert file_on(jobs.fake.bare, f"planner/issue-{jobs.number}", "TWO.md") == "TWO.md"
    assert lease_state(jobs.fake, jobs.number) == "free"


def interactive_label(jobs: CiJobs, payload: dict[str, Any]) -> dict[str, Any]:
    """The same labelled event with the label that starts a planning session."""
    jobs.fake.issues[jobs.number].labels.append("planner:interactive")
    if jobs.platform == "github":
        payload["label"]["name"] = "planner:interactive"
        return payload
    payload["changes"]["labels"]["current"] = [{"title": "planner:interactive"}]
    payload["changes"]["labels"]["previous"] = []
    return payload


def test_a_planning_session_continues_on_a_runner_without_cache_from_the_lease(
    short_lease: CiJobs,
) -> None:
    """The session's journal travels in the issue's history, and the lease carries that: a
    reply handled by a runner that restored nothing continues the session (design, not a new
    discovery)."""
    jobs = short_lease
    started = jobs.run(interactive_label(jobs, jobs.labelled()), [discovery_step()])
    assert started.returncode == 0, started.stdout

    answers = jobs.comment("/planner q-1: staff only\nq-2: 2\nq-3: speed of delivery")
    replied = jobs.run(answers, [design_step()], cache=False)

    assert replied.returncode == 0, replied.stdout
    assert jobs.kinds == ["interactive_design"]


def test_a_forge_that_refuses_the_lease_ref_still_gets_its_work_done(short_lease: CiJobs) -> None:
    """Some forge (or a server-side hook) may refuse refs outside refs/heads and refs/tags.
    The lease is a safeguard, not a requirement: the run goes on without it and says so,
    instead of failing every event on the repository."""
    jobs = short_lease
    hook = jobs.fake.bare / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\n"
        "while read old new ref; do\n"
        '  case "$ref" in refs/planner/*) echo "custom refs are not allowed" >&2; exit 1;; esac\n'
        "done\n",
        encoding="utf-8",
    )
    hook.chmod(0o755)

    finished = jobs.run(jobs.labelled(), PLAN)

    assert finished.returncode == 0, finished.stdout
    assert file_on(jobs.fake.bare, f"planner/issue-{jobs.number}", "TWO.md") == "TWO.md"
    [comment] = jobs.tracking()
    assert f"The issue's lease (`refs/planner/issues/{jobs.number}`) could not be used" in (
        comment.body
    )
    assert "custom refs are not allowed" in comment.body


def test_a_job_cancelled_while_it_waits_for_the_lease_ends_at_once_and_says_so(
    short_lease: CiJobs,
) -> None:
    """The runner cancels a job that waits for a living run's lease (a person pressed
    Cancel, a newer event superseded it). The wait must obey SIGTERM within seconds, touch
    nothing and say that the event was not handled, instead of sleeping out its wait."""
    jobs = short_lease
    commit_config(jobs.fake, "forge:\n  lease_seconds: 60\n")  # waits up to ~31 minutes
    held = hold_lease(jobs.fake, jobs.number, "run-elsewhere", time.time() + 50)
    signalled: list[float] = []

    def cancel_while_waiting(process: subprocess.Popen[bytes]) -> None:
        fetches = observe_lease_fetches(jobs.fake, jobs.number)

        def cancel() -> None:
            for _ in range(2):  # it found the lease held, and polled once more
                fetches.acquire(timeout=60)
            signalled.append(time.monotonic())
            process.send_signal(signal.SIGTERM)

        threading.Thread(target=cancel, daemon=True).start()

    finished = jobs.run(jobs.labelled(), [], started=cancel_while_waiting)
    ended = time.monotonic()

    assert signalled and ended - signalled[0] < 15, finished.stdout
    assert finished.returncode != -signal.SIGTERM  # handled, not killed by the signal
    [comment] = jobs.tracking()
    assert (
        "This event was not handled: run run-elsewhere still works on this issue and this "
        "run was cancelled (SIGTERM) while it waited for it." in comment.body
    )
    assert git(jobs.fake.bare, "rev-parse", f"refs/planner/issues/{jobs.number}") == held
    assert not jobs.fake.branch_exists(f"planner/issue-{jobs.number}")
    assert not jobs.history()


def test_the_runs_deadline_starts_once_it_has_the_lease_not_before_the_wait(
    tmp_path: Path,
) -> None:
    """A run that waited most of its wall-clock budget for a living run must still get its
    whole budget for its own pass (the deadline used to start before the wait, so such a run
    stopped at its first step)."""
    fake, number = issue_on("github", tmp_path, "Two files", "Add ONE.md and TWO.md.")
    try:
        commit_config(
            fake,
            "budget:\n  max_wall_seconds: 30\n  finish_reserve_seconds: 5\n"
            "forge:\n  lease_seconds: 30\n",
        )
        jobs = CiJobs("github", fake, tmp_path, number)
        hold_lease(fake, number, "run-slow", time.time() + 24)  # 24 of the 25 s the pass gets

        finished = jobs.run(jobs.labelled(), PLAN)

        assert finished.returncode == 0, finished.stdout
        assert "waiting for run run-slow" in finished.stdout + finished.stderr
        [comment] = jobs.tracking()
        assert "✅ Done" in comment.body, comment.body
        for name in ("ONE.md", "TWO.md"):
            assert file_on(fake.bare, f"planner/issue-{number}", name) == name
    finally:
        fake.stop()
