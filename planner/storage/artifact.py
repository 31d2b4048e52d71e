"""`artifact` backend: the newest unexpired `planner-history-<issue>` artifact, via GitHub REST.

    GET /repos/{owner}/{repo}/actions/artifacts?name=planner-history-7   newest usable one
    GET /repos/{owner}/{repo}/actions/artifacts/{id}/zip                   302 to blob storage
    GET <Location>                                                         without Authorization

The Location is a pre-signed URL on another host: it must not receive the token (and does not
need it), so the redirect is followed by hand with a session that has no Authorization header.
Artifacts from a workflow run of a fork are skipped: a fork's pull request can upload an artifact
with any name into this repository, and history is fed to the model.

Uploading needs the runner's internal artifact service, so `save()` leaves that to the
workflow's actions/upload-artifact step (`if: always()`).
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import requests

from planner.core.errors import ApiError
from planner.storage.archive import DEFAULT_MAX_BYTES, ExtractReport, extract_archive
from planner.storage.download import ArchiveDownloader, ArtifactBackend, api_message
from planner.storage.files import history_files

log = logging.getLogger(__name__)

ARTIFACT_PREFIX = "planner-history-"
API_VERSION = "2022-11-28"
PERMISSION_HINT = "the workflow needs `permissions: actions: read` to read artifacts"


def artifact_name(issue: str) -> str:
    return f"{ARTIFACT_PREFIX}{issue}"


@dataclass(frozen=True)
class Artifact:
    """The fields of one listed artifact that choosing and checking it needs."""

    id: int
    created_at: str
    digest: str | None

    @classmethod
    def from_api(cls, item: dict[str, Any]) -> Artifact:
        return cls(int(item["id"]), str(item.get("created_at") or ""), item.get("digest"))


class ArtifactHistoryBackend(ArtifactBackend):
    """Restores the history directory from the newest usable artifact of the issue."""

    def __init__(
        self,
        api_url: str,
        repository: str,
        token: str,
        *,
        timeout: float = 60.0,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "Authorization": f"Bearer {token}",
        }
        super().__init__(
            ArchiveDownloader(
                "github", headers, timeout=timeout, max_bytes=max_bytes, error_for=api_error
            )
        )
        self.base = f"{api_url.rstrip('/')}/repos/{repository}/actions/artifacts"

    # -- HistoryBackend

    def restore(self, directory: Path, issue: str) -> bool:
        """Extract the newest usable artifact (an older one if nothing in it can be read).

        False when no history could be restored.
        """
        name = artifact_name(issue)
        for artifact in self.candidates(name):
            data = self.download(artifact)
            if data is not None:
                self.extract(artifact, data, directory)
                if history_files(directory):
                    return True
        if self.problems:
            log.warning("no history: nothing readable in the %s artifacts", name)
        else:
            log.info("no history: first run or expired artifact (no usable %s)", name)
        return False

    def save(self, directory: Path, issue: str) -> None:
        log.info(
            "history of issue %s stays in %s for the upload-artifact step (artifact %s)",
            issue,
            directory,
            artifact_name(issue),
        )

    # -- steps

    def candidates(self, name: str) -> list[Artifact]:
        """Usable artifacts called `name`, newest first."""
        listed = self.get_json(self.base, {"name": name, "per_page": 100})
        items = [item for item in listed.get("artifacts", []) if item.get("name") == name]
        usable = [item for item in items if usable_artifact(item)]
        forks = [item for item in usable if from_fork(item)]
        if forks:
            self.report(f"ignored {len(forks)} {name} artifact(s) uploaded by a fork's workflow")
        chosen = [Artifact.from_api(item) for item in usable if item not in forks]
        return sorted(chosen, key=lambda artifact: (artifact.created_at, artifact.id), reverse=True)

    def download(self, artifact: Artifact) -> bytes | None:
        return self.http.archive(
            f"{self.base}/{artifact.id}/zip",
            gone_status=410,
            gone_message=f"artifact {artifact.id} expired before it could be downloaded",
        )

    def extract(self, artifact: Artifact, data: bytes, directory: Path) -> None:
        expected = (artifact.digest or "").removeprefix("sha256:")
        if expected and hashlib.sha256(data).hexdigest() != expected:
            self.report(f"artifact {artifact.id} does not match its recorded digest (corrupt)")
        result: ExtractReport = extract_archive(data, directory, max_bytes=self.max_bytes)
        for problem in result.problems:
            self.report(f"artifact {artifact.id}: {problem}")
        if result.kept_local:
            log.info("kept the local copy of %s", ", ".join(result.kept_local))
        log.info("restored %d file(s) from artifact %d", len(result.written), artifact.id)

    # -- HTTP

    def get_json(self, url: str, params: dict[str, Any]) -> dict[str, Any]:
        response = self.http.get(url, params=params)
        if response.status_code != 200:
            raise api_error("GET", url, response)
        try:
            body = response.json()
        except ValueError:
            raise ApiError(f"GitHub API GET {url} did not answer JSON", service="github") from None
        return body if isinstance(body, dict) else {}


def usable_artifact(item: dict[str, Any]) -> bool:
    """Not expired, by the flag and by the clock (the flag can lag behind)."""
    if item.get("expired"):
        return False
    try:
        expires = datetime.fromisoformat(str(item.get("expires_at")).replace("Z", "+00:00"))
    except ValueError:
        return True
    return expires > datetime.now(UTC)


def from_fork(item: dict[str, Any]) -> bool:
    run = item.get("workflow_run") or {}
    head, base = run.get("head_repository_id"), run.get("repository_id")
    return head is not None and base is not None and head != base


def api_error(method: str, url: str, response: requests.Response) -> ApiError:
    status = response.status_code
    message = api_message(response)
    hint = f"; {PERMISSION_HINT}" if status in (401, 403, 404) else ""
    retry_after = response.headers.get("Retry-After")
    return ApiError(
        f"GitHub API {method} {url} answered {status}: {message}{hint}",
        status=status,
        retry_after=float(retry_after) if retry_after and retry_after.isdigit() else None,
        service="github",
    )
