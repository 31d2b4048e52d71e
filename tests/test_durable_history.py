"""Memory that outlives a cache, and history entries as data: the real entry point.

- GitHub, default `cache` backend, a fresh runner whose cache is empty: the action restores the
  issue's newest artifact by itself and continues the plan (no new plan).
- An artifact uploaded by a fork's run and an artifact that is not a zip: each gets a line in
  the tracking comment, and the usable artifact is still restored.
- The history fuzz end to end: thousands of malformed variants of the real history's entries
  appended to it; the next run on GitHub and GitLab completes as if they were not there, and
  the file is only appended to.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from planner.memory.entries import entry_problem
from planner.memory.history import task_uuid
from tests.fake_forge import FakeGitHub
from tests.fake_forge.scenario import file_on
from tests.support.ci_job import zip_directory
from tests.support.durable import (
    HISTORY_DIR,
    CiJobs,
    jobs_fixture,
    one_task_plan,
    two_file_plan,
)
from tests.support.fake_artifacts import FORK_REPOSITORY_ID
from tests.test_history_fuzz import TEMPLATES, variants

PLAN = two_file_plan("ONE.md", "TWO.md")


@pytest.fixture
def github(tmp_path: Path) -> Any:
    fake = FakeGitHub(tmp_path / "fake").start()
    fake.add_issue(1, "Two files", "Add ONE.md and TWO.md.", labels=["planner"])
    fake.permissions["Codertocat"] = "write"
    try:
        yield CiJobs("github", fake, tmp_path, 1)
    finally:
        fake.stop()


def first_half(jobs: CiJobs) -> bytes:
    """A run that finished task_1 and paused; its history as upload-artifact zips it."""
    first = jobs.run(jobs.labelled(), PLAN[:3], max_model_calls="3")
    assert first.returncode == 0, first.stdout
    return zip_directory(jobs.workspace / HISTORY_DIR)


def forget_lease_copy(jobs: CiJobs) -> None:
    """Only the cache and the artifact carry history here (the lease ref is deleted)."""
    from tests.fake_forge.core import git

    git(jobs.fake.bare, "update-ref", "-d", f"refs/planner/issues/{jobs.number}")


def test_a_fresh_runner_without_cache_restores_the_issues_artifact_by_itself(
    github: CiJobs,
) -> None:
    uploaded = first_half(github)
    github.fake.add_artifact("planner-history-1", uploaded, "2026-01-01T00:00:00Z")
    forget_lease_copy(github)

    rerun = github.run(github.comment("/planner"), PLAN[3:], cache=False)

    assert rerun.returncode == 0, rerun.stdout
    assert github.kinds == ["execute", "execute", "completion"]  # continued: no new plan
    assert "the cache holds no history of issue 1: trying its artifact" in rerun.stdout
    for name in ("ONE.md", "TWO.md"):
        assert file_on(github.fake.bare, "planner/issue-1", name) == name
    [comment] = github.tracking()
    assert "✅ Done" in comment.body


def test_a_forks_artifact_and_an_unreadable_one_are_named_in_the_tracking_comment(
    github: CiJobs,
) -> None:
    uploaded = first_half(github)
    github.fake.add_artifact("planner-history-1", uploaded, "2026-01-01T00:00:00Z")
    github.fake.add_artifact("planner-history-1", b"not a zip", "2026-01-02T00:00:00Z")
    github.fake.add_artifact(
        "planner-history-1",
        uploaded,
        "2026-01-03T00:00:00Z",
        head_repository_id=FORK_REPOSITORY_ID,
    )
    forget_lease_copy(github)

    rerun = github.run(github.comment("/planner"), PLAN[3:], cache=False)

    assert rerun.returncode == 0, rerun.stdout
    assert github.kinds == ["execute", "execute", "completion"]  # the good one was restored
    [comment] = github.tracking()
    notes = [line for line in comment.body.splitlines() if "History:" in line]
    assert any("fork" in line for line in notes), comment.body
    assert any("artifact 2" in line for line in notes), comment.body


# -- the history fuzz, end to end --------------------------------------------------------------


def refused_variants() -> list[dict[str, Any]]:
    return [v for t in TEMPLATES for v in variants(t) if entry_problem(v) is not None]


jobs = jobs_fixture("Files", "Add files.")


def test_thousands_of_malformed_entries_appended_to_a_real_history_let_the_next_run_finish(
    jobs: CiJobs,
) -> None:
    first = jobs.run(jobs.labelled(), PLAN)
    assert first.returncode == 0, first.stdout
    path = jobs.cache / f"{task_uuid(jobs.fake.repository, str(jobs.number))}.jsonl"
    bad = refused_variants()
    assert len(bad) > 1_900
    with path.open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(entry) + "\n" for entry in bad)
    before = path.read_bytes()
    forget_lease_copy(jobs)

    rerun = jobs.run(jobs.comment("/planner also add THREE.md"), one_task_plan("THREE.md"))

    assert rerun.returncode == 0, rerun.stdout
    assert file_on(jobs.fake.bare, f"planner/issue-{jobs.number}", "THREE.md") == "THREE.md"
    [comment] = jobs.tracking()
    assert "✅ Done" in comment.body
    assert "more skipped history lines" in comment.body
    assert path.read_bytes().startswith(before)  # appended to, never rewritten
    shutil.rmtree(jobs.workspace, ignore_errors=True)
