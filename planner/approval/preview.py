"""Preflight diffs: what a spec changes, as a short summary and a unified diff."""

from __future__ import annotations

import difflib
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from planner.approval.models import ActionSpecExt

BINARY_NOTE = "binary content"
PREVIEW_CHARS = 4_000
"""A preview (diff, command, MCP arguments) shown to a person holds at most this much; a longer
one says it was cut, how much is hidden and where the whole text is stored."""


def preview_body(spec: ActionSpecExt, before: bytes) -> str:
    """The text a person's preview shows of `spec`, whatever the tool: a file's diff against
    `before`, else the diff of a call's rolled-back effect, else the call's whole arguments."""
    if spec.path:
        return unified(spec, before)
    return spec.preflight.effect_diff or spec.content or ""


def is_cut(body: str) -> bool:
    """Whether a preview of `body` hides part of it (then no policy may approve it in bulk)."""
    return len(body) > PREVIEW_CHARS


def new_text(spec: ActionSpecExt) -> str:
    return spec.content or "" if spec.kind in {"create", "write"} else ""


def unified(spec: ActionSpecExt, before: bytes) -> str:
    """The spec's unified diff against `before` (empty for kinds that change no text)."""
    if spec.kind not in {"create", "write", "delete"}:
        return ""
    return _unified(spec.kind, spec.path, new_text(spec), before)


@lru_cache(maxsize=8)  # validation, preview and the saved .diff ask for the same diff
def _unified(kind: str, path: str, after: str, before: bytes) -> str:
    old = _text(before)
    if old is None:
        return f"({BINARY_NOTE}: {len(before)} bytes)\n"
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{path}" if before else "/dev/null",
        tofile="/dev/null" if kind == "delete" else f"b/{path}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def counts(diff: str) -> tuple[int, int]:
    """(added, removed) lines of a unified diff."""
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            continue
        added += line.startswith("+")
        removed += line.startswith("-")
    return added, removed


def diff_summary(spec: ActionSpecExt, before: bytes) -> str:
    """One line: what happens to the file, e.g. `overwrite: +3 -1 lines`."""
    if spec.kind == "mkdir":
        return "create directory"
    diff = unified(spec, before)
    if diff.startswith(f"({BINARY_NOTE}"):
        return f"{spec.kind}: replaces {BINARY_NOTE} ({len(before)} bytes)"
    added, removed = counts(diff)
    verb = {
        "create": "overwrite" if before else "create",
        "write": "overwrite" if before else "create",
    }
    return f"{verb.get(spec.kind, spec.kind)}: +{added} -{removed} lines"


def decoded(data: bytes) -> str | None:
    """`data` as text, or None for binary content."""
    return _text(data)


def _text(data: bytes) -> str | None:
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
