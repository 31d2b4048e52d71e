"""Give what the container created in the workspace back to the workspace's owner.

A Docker action runs as root, while the runner mounts the workspace owned by its own user (uid
1001 on GitHub's hosted runners). Files left owned by root break later steps of the job and the
runner's clean-up, so at the end everything this run created or changed there (owned by root,
changed since the run started) is handed to the owner of the workspace directory.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger(__name__)


def give_back(workspace: Path, since: float) -> int:
    """chown what root created or changed since `since` (a time.time()); the count changed."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return 0  # not root: everything created already belongs to the user running the job
    try:
        owner = workspace.stat()
    except OSError:
        return 0
    if owner.st_uid == 0:
        return 0
    changed = 0
    for path in created_by(workspace, 0, since):
        try:
            os.lchown(path, owner.st_uid, owner.st_gid)
            changed += 1
        except OSError as exc:
            log.warning("could not give %s back to uid %d: %s", path, owner.st_uid, exc)
    log.info("gave %d file(s) back to the workspace owner (uid %d)", changed, owner.st_uid)
    return changed


def created_by(root: Path, uid: int, since: float) -> Iterator[str]:
    """Entries under `root` (links not followed) owned by `uid` and changed at or after `since`."""
    for directory, subdirectories, files in os.walk(root):
        for name in (*subdirectories, *files):
            path = os.path.join(directory, name)
            try:
                status = os.lstat(path)
            except OSError:
                continue
            if status.st_uid == uid and status.st_ctime >= since:
                yield path
