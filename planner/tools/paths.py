"""Path confinement: every path a tool touches resolves inside the workspace."""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from urllib.parse import unquote


class PathRefused(Exception):
    """A path was refused; the message names the rule."""


def resolve_in_workspace(
    root: Path, raw: str, *, protected: tuple[Path, ...] = (), for_write: bool = False
) -> Path:
    """Resolve `raw` against `root`, following symlinks, or raise PathRefused naming the rule."""
    decoded = unquote(raw)
    if "\0" in decoded:
        raise PathRefused(f"refused {raw!r}: rule 'no-nul-bytes'")
    relative = PurePosixPath(decoded.replace("\\", "/"))
    if relative.is_absolute():
        raise PathRefused(
            f"refused {raw!r}: rule 'no-absolute-paths' (use a path relative to the repository)"
        )
    if ".." in relative.parts:
        raise PathRefused(f"refused {raw!r}: rule 'no-parent-segments' ('..' is not allowed)")
    resolved = (root / relative).resolve()
    if resolved != root and root not in resolved.parents:
        raise PathRefused(f"refused {raw!r}: rule 'inside-workspace' (a symlink leads outside)")
    inside = resolved.relative_to(root)
    if inside.parts[:1] == (".git",):
        raise PathRefused(f"refused {raw!r}: rule 'no-git-dir' (.git is never touched)")
    for guarded in protected:
        if resolved == guarded or guarded in resolved.parents:
            raise PathRefused(f"refused {raw!r}: rule 'protected-path' (planner's own state)")
    return resolved
