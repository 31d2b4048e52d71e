"""History backends: how the JSONL history directory travels from one CI run to the next.

- `cache`: the workflow restores and saves the directory (actions/cache, GitLab `cache:`);
  the backend only reports what it finds.
- `artifact`: the backend downloads the newest unexpired `planner-history-<issue>` artifact
  through GitHub's REST API; the workflow uploads the directory with actions/upload-artifact.
"""

from __future__ import annotations

from planner.errors import ConfigError
from planner.interfaces import HistoryBackend
from planner.storage.artifact import ArtifactHistoryBackend, artifact_name
from planner.storage.cache import CacheHistoryBackend

BACKEND_NAMES = ("cache", "artifact")

__all__ = [
    "BACKEND_NAMES",
    "ArtifactHistoryBackend",
    "CacheHistoryBackend",
    "artifact_name",
    "history_backend",
]


def history_backend(name: str, *, api_url: str, repository: str, token: str) -> HistoryBackend:
    """The backend called `name` (the action's `history_backend` input)."""
    if name == "cache":
        return CacheHistoryBackend()
    if name == "artifact":
        return ArtifactHistoryBackend(api_url, repository, token)
    allowed = " or ".join(BACKEND_NAMES)
    raise ConfigError(f"history_backend = {name!r}: must be {allowed}")
