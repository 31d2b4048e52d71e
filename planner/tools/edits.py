"""edit_file's core: exact old -> new replacements, applied all-or-nothing."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from planner.tools.arguments import BadArguments


class EditFailed(Exception):
    """An edit could not be applied; nothing was written."""


@dataclass(frozen=True)
class Edit:
    old_text: str
    new_text: str

    @classmethod
    def parse(cls, index: int, raw: dict[str, Any]) -> Edit:
        old, new = raw.get("oldText"), raw.get("newText")
        if not isinstance(old, str) or not isinstance(new, str):
            raise BadArguments(f"edits[{index}] needs string fields 'oldText' and 'newText'")
        if not old:
            raise BadArguments(f"edits[{index}].oldText is empty; use write_file to create files")
        return cls(old, new)


def apply_edits(text: str, edits: list[Edit]) -> str:
    """Apply every edit in order to `text`; each old text must occur exactly once when applied."""
    for index, edit in enumerate(edits):
        count = text.count(edit.old_text)
        if count != 1:
            raise EditFailed(_not_unique(index, edit, count))
        text = text.replace(edit.old_text, edit.new_text, 1)
    return text


def unified_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _not_unique(index: int, edit: Edit, count: int) -> str:
    where = "is not in the file" if count == 0 else f"occurs {count} times (it must be unique)"
    excerpt = edit.old_text if len(edit.old_text) <= 80 else edit.old_text[:77] + "..."
    return (
        f"edits[{index}].oldText {excerpt!r} {where}; no edit was applied "
        "(earlier edits in the same call count: they are applied in order)"
    )
