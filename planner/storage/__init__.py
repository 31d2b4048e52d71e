"""History backends: how the JSONL history directory travels from one CI run to the next.

- `cache`: the workflow restores and saves the directory (actions/cache, GitLab `cache:`);
  the backend only reports what it finds.
- `artifact`: the backend downloads the newest unexpired `planner-history-<issue>` artifact
  through GitHub's REST API; the workflow uploads the directory with actions/upload-artifact.
  On GitLab it tops the job's cache up from the newest planner jobs' artifacts archives.
"""

from __future__ import annotations

from planner.core.errors import ConfigError
from planner.core.interfaces import HistoryBackend
from planner.storage.artifact import ArtifactHistoryBackend, artifact_name
from planner.storage.cache import CacheHistoryBackend
from planner.storage.gitlab import GitLabArtifactBackend, PlannerJobs

BACKEND_NAMES = ("cache", "artifact")

__all__ = [
    "BACKEND_NAMES",
    "ArtifactHistoryBackend",
    "CacheHistoryBackend",
    "GitLabArtifactBackend",
    "PlannerJobs",
    "artifact_name",
    "gitlab_history_backend",
    "history_backend",
]


def history_backend(name: str, *, api_url: str, repository: str, token: str) -> HistoryBackend:
    """The backend called `name` (the action's `history_backend` input)."""
    if name == "cache":  # the artifact is the durable copy behind the cache
        fallback = ArtifactHistoryBackend(api_url, repository, token)
        return CacheHistoryBackend(fallback, repository)
    if name == "artifact":
        return ArtifactHistoryBackend(api_url, repository, token)
    allowed = " or ".join(BACKEND_NAMES)
    raise ConfigError(f"history_backend = {name!r}: must be {allowed}")


def gitlab_history_backend(name: str, jobs: PlannerJobs) -> HistoryBackend:
    """The backend called `name` in a GitLab job (the component uses `artifact`); `jobs` are
    the planner jobs whose artifacts `artifact` reads."""
    if name == "cache":
        return CacheHistoryBackend()
    if name == "artifact":
        return GitLabArtifactBackend(jobs)
    allowed = " or ".join(BACKEND_NAMES)
    raise ConfigError(f"history_backend = {name!r}: must be {allowed}")
