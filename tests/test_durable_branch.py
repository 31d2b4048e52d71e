"""Work reaches the branch before the history says it is done; foreign pushes are merged.

Every test runs the real entry point in a subprocess against the fake GitHub and GitLab
(tests/support/durable.py). The pass has six model requests (plan, write + finish per task,
completion), so killing the job when request k arrives stops it exactly at a phase boundary.
"""

from __future__ import annotations

import gzip
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fake_forge.core import git
from tests.fake_forge.scenario import branch_log, file_on
from tests.support.durable import (
    CiJobs,
    commit_config,
    completion_step,
    issue_on,
    kill,
    task_steps,
    two_file_plan,
)

FILES = ("ONE.md", "TWO.md")
PLAN = two_file_plan(*FILES)
SHORT_LEASE = "forge:\n  lease_seconds: 3\n"
"""A living job renews its lease every second; a killed job's lease expires at most 3 s after
its last renewal, so a rerun waits little or not at all before it takes the lease over."""
RERUN_FROM = {0: 0, 1: 1, 2: 1, 3: 3, 4: 3, 5: 5}
"""Killed when request k arrived, the rerun's script starts at this step: the task that was
running is done again, every task that had finished (and was pushed) is not."""


@pytest.fixture(params=["github", "gitlab"])
def jobs(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    fake, number = issue_on(request.param, tmp_path, "Two files", "Add ONE.md and TWO.md.")
    commit_config(fake, SHORT_LEASE)
    try:
        yield CiJobs(request.param, fake, tmp_path, number)
    finally:
        fake.stop()


def branch(jobs: CiJobs) -> str:
    return f"planner/issue-{jobs.number}"


def assert_both_files_on_the_branch(jobs: CiJobs) -> None:
    for name in FILES:
        assert file_on(jobs.fake.bare, branch(jobs), name) == name


@pytest.mark.parametrize("k", sorted(RERUN_FROM))
def test_sigkill_at_each_phase_boundary_then_a_rerun_ends_with_every_task_on_the_branch(
    jobs: CiJobs, k: int
) -> None:
    killed = jobs.run(jobs.labelled(), PLAN[: k + 1], hooks={k: kill})
    assert killed.returncode == -9

    rerun = jobs.run(jobs.comment("/planner"), PLAN[RERUN_FROM[k] :])

    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert_both_files_on_the_branch(jobs)
    [comment] = jobs.tracking()
    assert "✅ Done" in comment.body
    # The killed job never freed its lease on the issue: the rerun took it over once expired.
    assert "its lease on this issue expired" in comment.body
    checkpoints = [e for e in jobs.history() if e["type"] == "checkpoint"]
    heads = git(jobs.fake.bare, "rev-list", branch(jobs)).split()
    assert checkpoints and all(entry["commit"] in heads for entry in checkpoints)
    assert checkpoints[-1]["tasks"] == ["task_1", "task_2"]


def test_after_a_kill_with_the_default_lease_the_next_event_resumes_within_two_minutes(
    tmp_path: Path,
) -> None:
    """The runner is lost in the middle of task_2 (SIGKILL: nothing is freed). With the
    default configuration the next event must not wait out the dead run's wall-clock budget
    (about 31 minutes): the lease a living run renews lasts 90 s, so the event proceeds within
    two minutes and does only the work that was not on the branch yet."""
    fake, number = issue_on("github", tmp_path, "Two files", "Add ONE.md and TWO.md.")
    try:
        jobs = CiJobs("github", fake, tmp_path, number)
        killed = jobs.run(jobs.labelled(), PLAN[:4], hooks={3: kill})
        assert killed.returncode == -9
        started = time.monotonic()

        rerun = jobs.run(jobs.comment("/planner"), PLAN[3:], timeout=170)

        assert time.monotonic() - started < 120, rerun.stdout
        assert rerun.returncode == 0, rerun.stdout + rerun.stderr
        assert "waiting for run" in rerun.stdout + rerun.stderr  # the holder looked alive
        assert_both_files_on_the_branch(jobs)
        [comment] = jobs.tracking()
        assert "its lease on this issue expired" in comment.body and "✅ Done" in comment.body
    finally:
        fake.stop()


def push_kill(jobs: CiJobs, process: dict[str, subprocess.Popen[bytes]]) -> Callable[[], None]:
    """Kill the job when its first push to the issue branch reaches the forge, before the push
    is stored. Pushes of the lease ref (the heartbeat renews it every second) pass: one of them
    arriving first must not be the push that kills. Once killed, no branch push is stored: the
    dead job's `git push` child may still be sending. The returned call restores the forge
    for the next job."""
    original = jobs.fake._git
    target = f"refs/heads/{branch(jobs)}".encode()
    killed: list[bool] = []

    def intercept(method: str, found: Any, query: str, headers: Any, body: bytes) -> Any:
        sent = gzip.decompress(body) if headers.get("Content-Encoding") == "gzip" else body
        to_branch = method == "POST" and found["rest"] == "git-receive-pack" and target in sent
        if to_branch and "p" in process:
            killed.append(True)
            kill(process.pop("p"))
        if to_branch and killed:
            return 500, {}, b"killed\n"
        return original(method, found, query, headers, body)

    def disarm() -> None:
        jobs.fake._git = original

    jobs.fake._git = intercept
    return disarm


def test_a_job_killed_after_a_task_finished_but_before_its_push_redoes_that_task(
    jobs: CiJobs,
) -> None:
    """The issue's first story: the history says task_1 is done, its file never reached the
    branch. The rerun re-opens task_1, says so, and the file ends on the branch."""
    held: dict[str, subprocess.Popen[bytes]] = {}

    def arm(process: subprocess.Popen[bytes]) -> None:
        held["p"] = process

    disarm = push_kill(jobs, held)
    killed = jobs.run(jobs.labelled(), PLAN[:3], hooks={2: arm})
    disarm()
    assert killed.returncode == -9
    done = [e for e in jobs.history() if e["type"] == "task" and e["status"] == "completed"]
    assert [e["task_id"] for e in done] == ["task_1"]  # the history says done ...
    assert not jobs.fake.branch_exists(branch(jobs))  # ... the branch never got it

    rerun = jobs.run(jobs.comment("/planner"), [*task_steps("task_1", FILES[0]), *PLAN[3:]])

    assert rerun.returncode == 0, rerun.stdout
    assert_both_files_on_the_branch(jobs)
    [comment] = jobs.tracking()
    assert "Re-opened task_1: the commit that carried it is not on" in comment.body
    reopened = [e for e in jobs.history() if e["type"] == "reconciled" and e["reopened"]]
    assert [e["reopened"] for e in reopened] == [["task_1"]]


def test_a_branch_deleted_between_runs_re_opens_its_tasks_and_says_so(jobs: CiJobs) -> None:
    first = jobs.run(jobs.labelled(), PLAN[:3], max_model_calls="3")
    assert first.returncode == 0, first.stdout
    assert file_on(jobs.fake.bare, branch(jobs), FILES[0]) == FILES[0]
    git(jobs.fake.bare, "branch", "-D", branch(jobs))  # a person deleted the branch

    rerun = jobs.run(jobs.comment("/planner"), [*task_steps("task_1", FILES[0]), *PLAN[3:]])

    assert rerun.returncode == 0, rerun.stdout
    assert_both_files_on_the_branch(jobs)
    [comment] = jobs.tracking()
    assert "Re-opened task_1" in comment.body and "the branch was deleted" in comment.body


# -- foreign pushes ---------------------------------------------------------------------------


def person_pushes(jobs: CiJobs, path: str, content: str) -> Any:
    def hook(process: subprocess.Popen[bytes]) -> None:
        seed = jobs.fake.root / "seed"
        git(seed, "fetch", "-q", str(jobs.fake.bare), f"{branch(jobs)}:{branch(jobs)}-theirs")
        git(seed, "checkout", "-q", f"{branch(jobs)}-theirs")
        (seed / path).write_text(content, encoding="utf-8")
        git(seed, "add", ".")
        identity = {"GIT_AUTHOR_NAME": "Mona", "GIT_AUTHOR_EMAIL": "mona@example.com"}
        identity |= {"GIT_COMMITTER_NAME": "Mona", "GIT_COMMITTER_EMAIL": "mona@example.com"}
        git(seed, "commit", "-q", "-m", "A person's commit", env=identity)
        git(seed, "push", "-q", str(jobs.fake.bare), f"HEAD:refs/heads/{branch(jobs)}")
        jobs.theirs = git(seed, "rev-parse", "HEAD")  # type: ignore[attr-defined]
        git(seed, "checkout", "-q", "main")

    return hook


def test_a_fast_forwardable_foreign_commit_mid_pass_is_kept_under_planners_commits(
    jobs: CiJobs,
) -> None:
    # After task_1 was pushed, a person pushes NOTES.md to the branch while task_2 runs.
    finished = jobs.run(jobs.labelled(), PLAN, hooks={3: person_pushes(jobs, "NOTES.md", "x\n")})

    assert finished.returncode == 0, finished.stdout
    assert_both_files_on_the_branch(jobs)
    assert file_on(jobs.fake.bare, branch(jobs), "NOTES.md") == "x"
    theirs = jobs.theirs  # type: ignore[attr-defined]
    ancestry = subprocess.run(
        ["git", "merge-base", "--is-ancestor", theirs, branch(jobs)], cwd=jobs.fake.bare
    )
    assert ancestry.returncode == 0  # the person's commit is an ancestor of the new head
    assert "A person's commit" in branch_log(jobs.fake.bare, branch(jobs))
    [comment] = jobs.tracking()
    assert "✅ Done" in comment.body


def test_a_conflicting_foreign_commit_leaves_planners_work_on_a_side_branch(
    jobs: CiJobs,
) -> None:
    # A person writes TWO.md differently while planner is about to write it.
    script = PLAN[:5]
    finished = jobs.run(
        jobs.labelled(), script, hooks={3: person_pushes(jobs, "TWO.md", "theirs\n")}
    )

    assert finished.returncode == 0, finished.stdout
    assert file_on(jobs.fake.bare, branch(jobs), "TWO.md") == "theirs"  # never overwritten
    sides = [b for b in jobs.fake.branches() if b.startswith(f"{branch(jobs)}-conflict-")]
    assert len(sides) == 1
    assert file_on(jobs.fake.bare, sides[0], "TWO.md") == "TWO.md"  # planner's work kept
    assert file_on(jobs.fake.bare, sides[0], "ONE.md") == "ONE.md"
    [comment] = jobs.tracking()
    assert f"`{sides[0]}`" in comment.body and "conflict" in comment.body
    assert "planner:needs-input" in jobs.fake.issues[jobs.number].labels


def test_the_rerun_after_a_kill_does_not_repeat_completion_of_pushed_work(jobs: CiJobs) -> None:
    """Killed at the completion request: both tasks pushed; the rerun only completes."""
    killed = jobs.run(jobs.labelled(), PLAN, hooks={5: kill})
    assert killed.returncode == -9
    rerun = jobs.run(jobs.comment("/planner"), [completion_step()])
    assert rerun.returncode == 0, rerun.stdout
    assert jobs.kinds == ["completion"]
    assert_both_files_on_the_branch(jobs)


# -- a pull request closed by a person --------------------------------------------------------


def close_the_pull_request(jobs: CiJobs, by: str) -> int:
    if jobs.platform == "github":
        [number] = jobs.fake.pulls
        jobs.fake.close_pull(number, by)
        return int(number)
    [iid] = jobs.fake.merge_requests
    jobs.fake.close_mr(iid, by)
    return int(iid)


def pull_states(jobs: CiJobs) -> list[str]:
    pulls = jobs.fake.pulls if jobs.platform == "github" else jobs.fake.merge_requests
    return [pull.state for _, pull in sorted(pulls.items())]


def test_a_pull_request_closed_by_a_person_is_never_reopened_and_no_work_is_lost(
    jobs: CiJobs,
) -> None:
    """A maintainer closed planner's pull request without merging. The next `/planner` keeps
    working on the branch (nothing recorded is lost) but neither reopens that pull request nor
    opens another behind the person's back; the tracking comment says what to do. Deleting the
    branch is the way to a fresh start: the run after that opens a new pull request."""
    first = jobs.run(jobs.labelled(), PLAN[:3], max_model_calls="3")
    assert first.returncode == 0, first.stdout
    closed = close_the_pull_request(jobs, "mona")

    rerun = jobs.run(jobs.comment("/planner"), PLAN[3:])

    assert rerun.returncode == 0, rerun.stdout
    assert_both_files_on_the_branch(jobs)
    assert pull_states(jobs) == ["closed"]  # not reopened, and no second one
    [comment] = jobs.tracking()
    reference = f"#{closed}" if jobs.platform == "github" else f"!{closed}"
    said = comment.body.replace("\u200b", "")  # mentions are made inert, not removed
    assert f"{reference} was closed by @mona without merging" in said
    assert f"Reopen {reference} to review them" in said

    git(jobs.fake.bare, "branch", "-D", branch(jobs))  # the person starts it over
    again = jobs.run(jobs.comment("/planner"), [*PLAN[1:5], completion_step()])

    assert again.returncode == 0, again.stdout
    assert_both_files_on_the_branch(jobs)
    assert sorted(pull_states(jobs)) == [
        "closed",
        "open" if jobs.platform == "github" else "opened",
    ]


def test_after_a_merge_the_next_runs_changes_go_to_a_new_pull_request(jobs: CiJobs) -> None:
    first = jobs.run(jobs.labelled(), PLAN[:3], max_model_calls="3")
    assert first.returncode == 0, first.stdout
    if jobs.platform == "github":
        [number] = jobs.fake.pulls
        jobs.fake.close_pull(number, "mona", merged=True)
        reference = f"#{number}"
    else:
        [number] = jobs.fake.merge_requests
        jobs.fake.close_mr(number, "mona", merged=True)
        reference = f"!{number}"

    rerun = jobs.run(jobs.comment("/planner"), PLAN[3:])

    assert rerun.returncode == 0, rerun.stdout
    assert len(pull_states(jobs)) == 2  # the merged one, and a new one for the new commits
    [comment] = jobs.tracking()
    assert f"{reference} was merged; this run's changes go to a new one." in comment.body
