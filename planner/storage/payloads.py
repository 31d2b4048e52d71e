"""Long texts of an issue's history, stored once by their SHA-256.

    <history dir>/payloads/<issue's history file name>/<sha256>.jsonl

A change waiting for approval may carry a whole file (write_file's content). Its plan is saved
again at every step (plans/<id>/plan.json and an `approval_plan` history entry each time), so
the text is kept here once and the saved copies hold its hash. Each file is one JSON line,
{"type": "payload", "sha256": …, "content": …}: its `.jsonl` name lets every history backend
carry it (they take every `*.jsonl` under the history directory), and the issue's lease carries
the issue's folder (planner.ci.branch.lease). Read back, a text that does not hash to its name is
refused: whatever changed the file, the change it describes is not run.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from pathlib import Path

from planner.storage.archive import atomic_write

log = logging.getLogger(__name__)

PAYLOADS_DIR = "payloads"
MIN_CHARS = 2_000
"""Texts at least this long are stored here; shorter ones stay where they are."""
DIGEST = re.compile(r"[0-9a-f]{64}")
OWNER = re.compile(r"[0-9A-Za-z][0-9A-Za-z._-]{0,99}")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def payload_folder(history: Path) -> Path:
    """The folder of an issue's payloads, beside its history file."""
    return history.parent / PAYLOADS_DIR / history.stem


class PayloadStore:
    """The payloads of one issue (or of the terminal's plans: owner "local")."""

    def __init__(self, history_directory: Path, owner: str) -> None:
        if not OWNER.fullmatch(owner) or owner.strip(".") == "":
            raise ValueError(f"not a payload folder name: {owner!r}")
        self.root = Path(history_directory) / PAYLOADS_DIR / owner
        self._known: dict[str, str] = {}
        """Texts this store wrote or verified: a plan is loaded many times in one pass."""

    def path(self, sha256: str) -> Path:
        if not DIGEST.fullmatch(sha256):
            raise ValueError(f"not a SHA-256: {sha256!r}")
        return self.root / f"{sha256}.jsonl"

    def put(self, text: str) -> str:
        """Store `text` (once: an existing copy is kept) and return its hash."""
        sha256 = digest(text)
        target = self.path(sha256)
        if self.get(sha256) is None:
            line = {"type": "payload", "sha256": sha256, "content": text}
            atomic_write(target, (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8"))
            self._known[sha256] = text
        return sha256

    def get(self, sha256: str) -> str | None:
        """The text stored under `sha256`; None when it is missing, unreadable or not that text."""
        if sha256 in self._known:
            return self._known[sha256]
        try:
            path = self.path(sha256)
            if path.is_symlink() or not path.is_file():
                return None
            value = json.loads(path.read_bytes())
        except (OSError, ValueError, RecursionError):
            return None
        content = value.get("content") if isinstance(value, dict) else None
        if not isinstance(content, str) or digest(content) != sha256:
            log.warning("payload %s does not hold the text it names; it is not used", sha256)
            return None
        self._known[sha256] = content
        return content
