"""`cache` backend: the workflow moves the directory; this backend only looks at it.

On GitHub, actions/cache/restore runs before the action and actions/cache/save (`if: always()`)
after it; on GitLab the job's `cache:` does the same. A cache entry unused for 7 days is evicted,
which looks exactly like a first run.
"""

from __future__ import annotations

import logging
from pathlib import Path

from planner.core.interfaces import HistoryBackend
from planner.memory.history import task_uuid
from planner.storage.files import history_files

log = logging.getLogger(__name__)


class CacheHistoryBackend:
    """Reports whether the workflow's cache step brought the issue's history; saving is the
    workflow's. With a `fallback` (the artifact backend), a runner whose cache does not hold
    the issue's history (evicted, another runner, a comment on the pull request) restores the
    durable copy by itself instead of starting over."""

    def __init__(self, fallback: HistoryBackend | None = None, repository: str = "") -> None:
        self.fallback = fallback
        self.repository = repository

    @property
    def problems(self) -> list[str]:
        return list(getattr(self.fallback, "problems", []))

    def restore(self, directory: Path, issue: str) -> bool:
        found = history_files(directory)
        if self._has_issue(directory, issue, found):
            log.info("history restored by the cache step: %d file(s) in %s", len(found), directory)
            return True
        if self.fallback is not None:
            log.info("the cache holds no history of issue %s: trying its artifact", issue)
            return self.fallback.restore(directory, issue)
        log.info("no history: first run or evicted cache (nothing in %s)", directory)
        return False

    def _has_issue(self, directory: Path, issue: str, found: list[Path]) -> bool:
        if not self.repository:
            return bool(found)
        return (directory / f"{task_uuid(self.repository, issue)}.jsonl") in found

    def save(self, directory: Path, issue: str) -> None:
        log.info("history of issue %s stays in %s for the cache save step", issue, directory)
