"""GitLab: the history in the job's `cache:`, topped up from the planner jobs' newest artifacts.

The component's job keeps the history directory in `cache:` (fast, but per runner unless a
distributed cache is set up) and in `artifacts:` (durable, `expire_in`). On a new runner the
cache is empty, and on a runner that has not run the planner for a while it is stale, so restore()
also fetches the archives of the newest finished jobs of the same name:

    GET /projects/:id/jobs?per_page=100&page=N   newest first; success or failed, unexpired archive
    GET /projects/:id/jobs/:job_id/artifacts     the zip, or 302 to object storage

and merges them file by file: history files are append-only, so of several copies the one with
the most readable entries is the newest. Not just the newest archive: every pipeline uploads
one, including those of events the planner skipped (since GitLab 16.11 each edit of a comment
fires a Comments webhook, so editing the tracking comment starts a pipeline), and a skipped job on
a runner with a stale cache uploads that stale history as the newest archive. Up to
MAX_ARCHIVES archives that hold history are merged, newest first.

Not `/jobs/artifacts/:ref/download?job=`: that looks only at the latest successful pipeline, and
the pipeline of an event the planner skipped has a job without artifacts. The redirect to object
storage is followed by hand, without the token. save() is the job's: its `cache:`
and `artifacts:` both have `when: always`.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import requests

from planner.core.errors import ApiError
from planner.storage.archive import DEFAULT_MAX_BYTES, atomic_write, extract_archive
from planner.storage.download import ArchiveDownloader, ArtifactBackend, api_message
from planner.storage.files import Weight, history_files, history_weight

log = logging.getLogger(__name__)

FINISHED = ("success", "failed")
MAX_PAGES = 10
MAX_ARCHIVES = 5
"""Archives holding history merged per restore: enough to outlast a few skipped pipelines on
runners with stale caches, few enough to keep the restore quick."""
TOKEN_HINT = "GITLAB_TOKEN needs the api (or read_api) scope to read job artifacts"


@dataclass(frozen=True)
class PlannerJobs:
    """The planner jobs whose artifacts archives may hold the history."""

    api_url: str
    project: str
    """The project's id (or its path)."""
    token: str = field(repr=False)
    job_name: str
    """Only jobs of this name are read (CI_JOB_NAME)."""
    project_dir: Path
    """CI_PROJECT_DIR: the paths in an artifacts archive are relative to it."""
    current_job: str = ""
    """This job's id (CI_JOB_ID): its own archive is never read."""


@dataclass(frozen=True)
class Job:
    """A finished job whose artifacts archive may hold the history."""

    id: int


class GitLabArtifactBackend(ArtifactBackend):
    """Restores the history directory from the cache and the newest planner jobs' artifacts."""

    max_archives: int = MAX_ARCHIVES

    def __init__(
        self, jobs: PlannerJobs, *, timeout: float = 60.0, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> None:
        # Authorization, not PRIVATE-TOKEN: requests drops it on a redirect to another host.
        headers = {"Authorization": f"Bearer {jobs.token}"}
        super().__init__(
            ArchiveDownloader(
                "gitlab", headers, timeout=timeout, max_bytes=max_bytes, error_for=api_error
            )
        )
        self.base = f"{jobs.api_url.rstrip('/')}/projects/{quote(jobs.project, safe='')}/jobs"
        self.job_name = jobs.job_name
        self.project_dir = jobs.project_dir
        self.current_job = jobs.current_job

    # -- HistoryBackend

    def restore(self, directory: Path, issue: str) -> bool:
        cached = len(history_files(directory))
        log.info("the job's cache brought %d history file(s) in %s", cached, directory)
        inside = self.archive_path(directory)
        if inside is not None:
            self.top_up(directory, inside)
        if history_files(directory):
            return True
        log.info("no history: first run, or the cache and the %s artifacts expired", self.job_name)
        return False

    def save(self, directory: Path, issue: str) -> None:
        log.info(
            "history of issue %s stays in %s for the job's cache and artifacts", issue, directory
        )

    # -- steps

    def archive_path(self, directory: Path) -> Path | None:
        """Where `directory` sits in an artifacts archive (paths are relative to the project)."""
        try:
            return directory.resolve().relative_to(self.project_dir.resolve())
        except ValueError:
            self.report(
                f"the history directory {directory} is outside CI_PROJECT_DIR, "
                "so the job's artifacts cannot carry it"
            )
            return None

    def top_up(self, directory: Path, inside: Path) -> None:
        """Merge in the newest `max_archives` archives that hold history (unreadable ones and
        those without history do not count)."""
        weights: dict[Path, Weight] = {}
        merged = 0
        for job in self.candidates():
            data = self.download(job)
            if data is not None and self.take(job, data, directory, inside, weights):
                merged += 1
                if merged >= self.max_archives:
                    return

    def take(
        self, job: Job, data: bytes, directory: Path, inside: Path, weights: dict[Path, Weight]
    ) -> bool:
        with tempfile.TemporaryDirectory(prefix="planner-artifacts-") as scratch:
            self.unpack(job, data, Path(scratch))
            source = Path(scratch) / inside
            if not history_files(source):
                log.info("the artifacts of job %d hold no history under %s/", job.id, inside)
                return False
            self.merge(source, directory, job, weights)
            return True

    def candidates(self) -> Iterator[Job]:
        """Finished jobs of this name with an unexpired archive, newest first, page by page."""
        for page in range(1, MAX_PAGES + 1):
            items, more = self.list_jobs(page)
            usable = [Job(int(item["id"])) for item in items if self.usable(item)]
            yield from sorted(usable, key=lambda job: job.id, reverse=True)
            if not more:
                return

    def usable(self, item: dict[str, Any]) -> bool:
        return (
            item.get("name") == self.job_name
            and item.get("status") in FINISHED
            and str(item.get("id")) != self.current_job
            and has_archive(item)
            and not expired(item.get("artifacts_expire_at"))
        )

    def list_jobs(self, page: int) -> tuple[list[dict[str, Any]], bool]:
        response = self.http.get(self.base, params={"per_page": 100, "page": page})
        if response.status_code != 200:
            raise api_error("GET", self.base, response)
        try:
            items = response.json()
        except ValueError:
            raise ApiError(
                f"GitLab API GET {self.base} did not answer JSON", service="gitlab"
            ) from None
        listed = (
            [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []
        )
        return listed, bool(response.headers.get("x-next-page"))

    def download(self, job: Job) -> bytes | None:
        url = f"{self.base}/{job.id}/artifacts"
        gone = f"the artifacts of job {job.id} expired before they could be downloaded"
        return self.http.archive(url, gone_status=404, gone_message=gone)

    def unpack(self, job: Job, data: bytes, scratch: Path) -> None:
        result = extract_archive(data, scratch, max_bytes=self.max_bytes)
        for problem in result.problems:
            self.report(f"artifacts of job {job.id}: {problem}")

    def merge(self, source: Path, directory: Path, job: Job, weights: dict[Path, Weight]) -> None:
        """Each history file from the archive replaces a lighter (older) local copy.

        `weights` remembers the local copies' weights across the archives of one restore.
        """
        taken, kept = 0, 0
        for path in history_files(source):
            target = directory / path.relative_to(source)
            if target not in weights and target.is_file():
                weights[target] = history_weight(target)
            weight = history_weight(path)
            if target in weights and weights[target] >= weight:
                kept += 1
                continue
            atomic_write(target, path.read_bytes())
            weights[target] = weight
            taken += 1
        log.info(
            "artifacts of job %d: restored %d history file(s), kept %d newer local one(s)",
            job.id,
            taken,
            kept,
        )


def has_archive(item: dict[str, Any]) -> bool:
    files = item.get("artifacts") or []
    archive = any(isinstance(f, dict) and f.get("file_type") == "archive" for f in files)
    return archive or bool(item.get("artifacts_file"))


def expired(expires_at: Any) -> bool:
    """Past its `artifacts_expire_at` (None: kept until deleted)."""
    if not expires_at:
        return False
    try:
        stamp = datetime.fromisoformat(str(expires_at).replace("Z", "+00:00"))
    except ValueError:
        return False
    return stamp <= datetime.now(UTC)


def api_error(method: str, url: str, response: requests.Response) -> ApiError:
    status = response.status_code
    message = api_message(response)
    hint = f"; {TOKEN_HINT}" if status in (401, 403) else ""
    return ApiError(
        f"GitLab API {method} {url} answered {status}: {message}{hint}",
        status=status,
        service="gitlab",
    )
