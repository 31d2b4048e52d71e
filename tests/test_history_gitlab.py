"""GitLab history backend: the job's cache topped up from the newest planner job's artifacts.

Runs the real backend over real sockets against the fake GitLab's jobs and artifacts endpoints
(tests/fake_forge/gitlab.py), with real zips of history files laid out as GitLab's artifacts
archive lays them out (paths relative to the project directory).
"""

from __future__ import annotations

import io
import logging
import zipfile
from pathlib import Path
from typing import Any

import pytest

from planner.core.errors import ApiError, ConfigError
from planner.storage import CacheHistoryBackend, GitLabArtifactBackend, gitlab_history_backend
from planner.storage.gitlab import MAX_ARCHIVES, PlannerJobs
from tests.fake_forge import FakeGitLab
from tests.fake_forge.gitlab import GlJob

UUID = "0c8e1a5e-2f7e-5b8e-9d1c-000000000012"


def archive(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name, data in files.items():
            zipped.writestr(name, data)
    return buffer.getvalue()


def lines(count: int) -> bytes:
    return b"".join(b'{"type":"action","n":%d}\n' % n for n in range(count))


def backend(fake: FakeGitLab, project_dir: Path, token: str | None = None) -> GitLabArtifactBackend:
    jobs = PlannerJobs(
        fake.api_url,
        str(fake.project_id),
        token or fake.token,
        job_name="planner",
        project_dir=project_dir,
        current_job="999",
    )
    return GitLabArtifactBackend(jobs)


def planner_job(
    fake: FakeGitLab, history: bytes, name: str = f"{UUID}.jsonl", **fields: Any
) -> GlJob:
    """A planner job whose artifacts archive holds `history` as planning_history/`name`."""
    return fake.add_job("planner", archive=archive({f"planning_history/{name}": history}), **fields)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    directory = tmp_path / "builds" / "acme" / "widgets"
    directory.mkdir(parents=True)
    return directory


def test_a_stale_cache_copy_is_replaced_by_the_longer_artifact_copy(
    fake_gitlab: FakeGitLab, project: Path
) -> None:
    history = project / "planning_history"
    history.mkdir()
    (history / f"{UUID}.jsonl").write_bytes(lines(2))  # this runner's cache, two runs behind
    (history / "other.jsonl").write_bytes(lines(9))  # newer here than in the archive
    fake_gitlab.add_job(
        "planner",
        archive=archive(
            {
                f"planning_history/{UUID}.jsonl": lines(5),
                "planning_history/other.jsonl": lines(3),
                "planning_history/new-issue.jsonl": lines(1),
            }
        ),
    )

    restored = backend(fake_gitlab, project).restore(history, "12")

    assert restored
    assert (history / f"{UUID}.jsonl").read_bytes() == lines(5)
    assert (history / "other.jsonl").read_bytes() == lines(9)
    assert (history / "new-issue.jsonl").read_bytes() == lines(1)


def test_usable_jobs_are_merged_and_unusable_ones_are_passed_over(
    fake_gitlab: FakeGitLab, project: Path
) -> None:
    older = planner_job(fake_gitlab, lines(1))
    newest = planner_job(fake_gitlab, lines(4), status="failed")
    planner_job(fake_gitlab, b"x\n", "x.jsonl", status="canceled")
    fake_gitlab.add_job("planner", archive=b"expired", expire_at="2021-05-05T00:00:00.000Z")
    fake_gitlab.add_job("lint", archive=archive({"planning_history/lint.jsonl": b"x\n"}))
    fake_gitlab.add_job("planner")  # skipped an event: no artifacts at all

    history = project / "planning_history"
    assert backend(fake_gitlab, project).restore(history, "12")

    assert sorted(p.name for p in history.iterdir()) == [f"{UUID}.jsonl"]
    assert (history / f"{UUID}.jsonl").read_bytes() == lines(4)
    downloads = [r.path for r in fake_gitlab.api_requests() if r.path.endswith("/artifacts")]
    assert downloads == [f"/api/v4/projects/42/jobs/{job.id}/artifacts" for job in (newest, older)]
    assert older.id < newest.id


def test_a_stale_newest_archive_does_not_hide_the_longer_history_of_an_older_one(
    fake_gitlab: FakeGitLab, project: Path
) -> None:
    """A skipped pipeline (a comment edit) on a runner with an old cache uploaded old history."""
    history = project / "planning_history"
    history.mkdir()
    (history / f"{UUID}.jsonl").write_bytes(lines(1))  # this runner's cache, older still
    planner_job(fake_gitlab, lines(6))
    planner_job(fake_gitlab, lines(2))

    assert backend(fake_gitlab, project).restore(history, "12")

    assert (history / f"{UUID}.jsonl").read_bytes() == lines(6)


def test_a_damaged_copy_never_beats_a_longer_readable_one(
    fake_gitlab: FakeGitLab, project: Path
) -> None:
    damaged = lines(3) + b"\x00garbage that is no entry at all" * 40 + b"\n" + b"{not json\n" * 20
    planner_job(fake_gitlab, lines(5))
    planner_job(fake_gitlab, damaged)
    history = project / "planning_history"
    history.mkdir()
    (history / "cached.jsonl").write_bytes(lines(4))
    longer_but_worse = lines(2) + b'{"type": "action", "cut off' * 30 + b"\n"
    planner_job(fake_gitlab, longer_but_worse, "cached.jsonl")
    assert len(damaged) > len(lines(5)) and len(longer_but_worse) > len(lines(4))

    assert backend(fake_gitlab, project).restore(history, "12")

    assert (history / f"{UUID}.jsonl").read_bytes() == lines(5)
    assert (history / "cached.jsonl").read_bytes() == lines(4)


def test_at_most_max_archives_with_history_are_merged(
    fake_gitlab: FakeGitLab, project: Path
) -> None:
    oldest = planner_job(fake_gitlab, lines(9))
    for count in (2, 4, 3):
        planner_job(fake_gitlab, lines(count))
    fake_gitlab.add_job("planner", archive=archive({"README.md": b"no history: does not count"}))
    store = backend(fake_gitlab, project)
    store.max_archives = 3
    history = project / "planning_history"

    assert store.restore(history, "12")

    assert (history / f"{UUID}.jsonl").read_bytes() == lines(4)
    downloads = [r.path for r in fake_gitlab.api_requests() if r.path.endswith("/artifacts")]
    assert len(downloads) == 4 and f"/jobs/{oldest.id}/" not in " ".join(downloads)
    assert GitLabArtifactBackend.max_archives == MAX_ARCHIVES == 5


def test_artifacts_deleted_meanwhile_or_unreadable_fall_back_to_an_older_job(
    fake_gitlab: FakeGitLab, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    good = planner_job(fake_gitlab, lines(3))
    fake_gitlab.add_job("planner", archive=archive({"README.md": b"no history here"}))
    broken = fake_gitlab.add_job("planner", archive=b"PK\x03\x04 this is no zip")
    fake_gitlab.add_job("planner", archive=b"whatever", deleted=True)
    history = project / "planning_history"

    store = backend(fake_gitlab, project)
    assert store.restore(history, "12")

    assert (history / f"{UUID}.jsonl").read_bytes() == lines(3)
    assert any(f"artifacts of job {broken.id}" in problem for problem in store.problems)
    assert f"artifacts of job {good.id}: restored 1 history file(s)" in caplog.text
    assert "expired before they could be downloaded" in caplog.text


def test_no_history_anywhere_is_said_once(
    fake_gitlab: FakeGitLab, project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    fake_gitlab.add_job("planner", archive=b"old", expire_at="2021-05-05T00:00:00Z")

    assert not backend(fake_gitlab, project).restore(project / "planning_history", "12")
    assert caplog.text.count("no history") == 1
    assert [r.path for r in fake_gitlab.api_requests() if r.path.endswith("/artifacts")] == []


def test_the_jobs_are_searched_page_by_page_until_a_planner_job_turns_up(
    fake_gitlab: FakeGitLab, project: Path
) -> None:
    planner_job(fake_gitlab, lines(2))
    for _ in range(5):
        fake_gitlab.add_job("test")

    assert backend(fake_gitlab, project).restore(project / "planning_history", "12")
    pages = [r.query.get("page") for r in fake_gitlab.api_requests() if r.path.endswith("/jobs")]
    assert pages == ["1", "2", "3"]  # the fake's page size is 2


def test_the_redirect_to_object_storage_carries_no_token(
    fake_gitlab: FakeGitLab, project: Path
) -> None:
    planner_job(fake_gitlab, lines(2), redirect=True)
    assert backend(fake_gitlab, project).restore(project / "planning_history", "12")
    [blob] = fake_gitlab.blob_requests()
    assert blob.status == 200 and blob.authorization == []
    api = [r for r in fake_gitlab.api_requests()]
    assert api and all(r.status == 200 or r.status == 302 for r in api)


def test_a_redirect_of_an_api_call_to_another_host_loses_the_token(
    fake_gitlab: FakeGitLab, project: Path
) -> None:
    # The jobs listing answered with a redirect (a proxy, a moved instance): requests keeps
    # every header but Authorization when it follows one to another host.
    elsewhere = fake_gitlab.publish_blob(b"[]").replace("127.0.0.1", "localhost", 1)
    fake_gitlab.fail("GET", r"/jobs$", 302, headers={"Location": elsewhere})
    assert not backend(fake_gitlab, project).restore(project / "planning_history", "12")
    [blob] = fake_gitlab.blob_requests()
    assert blob.status == 200 and blob.authorization == []
    [listing] = [r for r in fake_gitlab.api_requests() if r.path.endswith("/jobs")]
    assert listing.status == 302 and listing.authorization == [f"Bearer {fake_gitlab.token}"]


def test_a_history_directory_outside_the_project_is_reported(
    fake_gitlab: FakeGitLab, project: Path, tmp_path: Path
) -> None:
    store = backend(fake_gitlab, project)
    assert not store.restore(tmp_path / "elsewhere", "12")
    assert "outside CI_PROJECT_DIR" in store.problems[0]
    assert fake_gitlab.log == []


def test_a_token_without_access_is_an_error_that_says_what_is_needed(
    fake_gitlab: FakeGitLab, project: Path
) -> None:
    with pytest.raises(ApiError) as raised:
        backend(fake_gitlab, project, token="glpat-wrongToken0123456789").restore(
            project / "planning_history", "12"
        )
    assert raised.value.status == 401 and "api (or read_api) scope" in str(raised.value)
    assert "glpat-wrongToken" not in str(raised.value)


def test_the_factory_knows_both_names(project: Path) -> None:
    jobs = PlannerJobs(api_url="x", project="1", token="t", job_name="planner", project_dir=project)
    assert isinstance(gitlab_history_backend("cache", jobs), CacheHistoryBackend)
    assert isinstance(gitlab_history_backend("artifact", jobs), GitLabArtifactBackend)
    with pytest.raises(ConfigError, match="must be cache or artifact"):
        gitlab_history_backend("s3", jobs)
