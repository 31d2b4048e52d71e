"""`cache` backend: the workflow moves the directory; this backend only looks at it.

On GitHub, actions/cache/restore runs before the action and actions/cache/save (`if: always()`)
after it; on GitLab the job's `cache:` does the same. A cache entry unused for 7 days is evicted,
which looks exactly like a first run.
"""

from __future__ import annotations

import logging
from pathlib import Path

from planner.storage.files import history_files

log = logging.getLogger(__name__)


class CacheHistoryBackend:
    """Reports whether the workflow's cache step brought history; saving is the workflow's."""

    def restore(self, directory: Path, issue: str) -> bool:
        found = history_files(directory)
        if not found:
            log.info("no history: first run or evicted cache (nothing in %s)", directory)
            return False
        log.info("history restored by the cache step: %d file(s) in %s", len(found), directory)
        return True

    def save(self, directory: Path, issue: str) -> None:
        log.info("history of issue %s stays in %s for the cache save step", issue, directory)
