"""The changes a pass made, as a diff for the quality judge's final judgement.

The engine has no git: the runner hands the pass a callable (planner.refinement.port.WorkDiff)
that diffs the working tree against the commit the branch started from, untracked files
included. Read-only, and safe against what the pass may have planted in the repository: every
filter driver and textconv is off (a pass can define them in `.git/config` through an allowed
command), git runs with planner's scrubbed environment and safety options, and untracked
symlinks are named, never followed.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from planner.tools.files.paths import read_in_tree, shown_in_tree
from planner.tools.sandbox.safe_env import git_text

DIFF_CHARS = 60_000
"""More than the judge reads (it cuts again); stops a huge diff from being produced in full."""
UNTRACKED_FILE_BYTES = 20_000
FILTER_KEYS = ("clean", "smudge", "process")
DIFF_ARGS = ("diff", "--no-ext-diff", "--no-textconv", "--no-color")


def workspace_diff(workspace: Path, base: str | None = None) -> Callable[[], str]:
    """A callable returning the diff of `workspace` against `base` (default: HEAD now, i.e.
    when the pass starts). Returns "" when the workspace is not a git repository."""
    start = base or _git(workspace, "rev-parse", "--verify", "-q", "HEAD").strip()

    def diff() -> str:
        if not start:
            return ""
        off = tuple((key, "") for key in _filter_keys(workspace))
        tracked = _git(workspace, *DIFF_ARGS, start, "--", config=off)
        return _capped(tracked + _untracked(workspace))

    return diff


def _filter_keys(workspace: Path) -> list[str]:
    """`filter.<driver>.clean|smudge|process` for every driver configured anywhere."""
    listed = _git(workspace, "config", "--name-only", "--get-regexp", r"^filter\.")
    drivers = {line.rsplit(".", 1)[0] for line in listed.splitlines() if line.count(".") >= 2}
    return [f"{driver}.{key}" for driver in sorted(drivers) for key in FILTER_KEYS]


def _untracked(workspace: Path) -> str:
    listed = _git(workspace, "ls-files", "--others", "--exclude-standard", "-z")
    return "".join(_new_file(workspace, name) for name in listed.split("\0") if name)


def _new_file(workspace: Path, name: str) -> str:
    header = f"diff --git a/{name} b/{name}\nnew file (untracked)\n"
    data = read_in_tree(workspace, name, UNTRACKED_FILE_BYTES)
    if data is None:
        target = shown_in_tree(workspace, name)
        if target is not None:
            return header + f"(symbolic link to {os.fsdecode(target)})\n"
        data = b""
    if b"\0" in data:
        return header + "(binary file)\n"
    lines = data.decode("utf-8", errors="replace").splitlines()
    return header + f"+++ b/{name}\n" + "".join(f"+{line}\n" for line in lines)


def _capped(text: str) -> str:
    if len(text) <= DIFF_CHARS:
        return text
    return text[:DIFF_CHARS] + f"\n[diff cut here; it was {len(text)} characters]\n"


def _git(workspace: Path, *args: str, config: tuple[tuple[str, str], ...] = ()) -> str:
    """stdout of a git command; "" when git fails (no repository, unknown base)."""
    try:
        done = git_text(workspace, *args, config=config, errors="replace", check=True)
    except (OSError, subprocess.CalledProcessError):
        return ""
    return done.stdout
