"""Regex scan over a list of files; run by search_files in a child process (standard library only).

A child process, because Python's `re` cannot be interrupted: a pathological pattern from the
model must cost a timeout, not the pass. Reads a JSON request on stdin, writes JSON on stdout.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

MAX_FILE_BYTES = 5_000_000
MAX_LINE_SHOWN = 300


def scan(request: dict[str, Any]) -> dict[str, Any]:
    flags = re.IGNORECASE if request["ignore_case"] else 0
    regex = re.compile(request["pattern"], flags)
    root, limit = Path(request["root"]), request["max_results"]
    result: dict[str, Any] = {"matches": [], "total": 0, "files": 0, "skipped": 0}
    for name in request["files"]:
        lines = _text_lines(root / name)
        if lines is None:
            result["skipped"] += 1
            continue
        found = [(number, line) for number, line in enumerate(lines, 1) if regex.search(line)]
        result["total"] += len(found)
        result["files"] += bool(found)
        room = limit - len(result["matches"])
        result["matches"] += [[name, n, line[:MAX_LINE_SHOWN]] for n, line in found[:room]]
    return result


def _text_lines(path: Path) -> list[str] | None:
    """The file's lines, or None for binary, huge or unreadable files."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8000]:
        return None
    return data.decode("utf-8", errors="replace").splitlines()


if __name__ == "__main__":
    json.dump(scan(json.load(sys.stdin)), sys.stdout)
