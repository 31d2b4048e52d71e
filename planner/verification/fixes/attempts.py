"""Another attempt from the start when the fix is not proven (verification.attempts).

An attempt that ends with the issue's test failing, or with tests failing that passed before
(its repair tasks spent), is recorded — the tests it left failing, the end of their output,
its change as a diff and as git blobs — and the working tree goes back to what it was when
the baseline ran: files the change wrote get their content back, files it created go. The
next attempt starts from a fresh plan (or a fresh conversation without planning), samples
with another seed, and is told what the attempts before it failed on. Agentless and
OpenHands sample several candidate fixes and keep the one the tests accept; here the
candidates come one after another, and the first one whose tests pass ends the tries.

Everything is read and written with git plumbing that runs nothing the repository configured
(`ls-tree`, `cat-file`, `hash-object --no-filters`), and a file is put back without following
a link put in its place (planner.verification.fixes.undo.put_back).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from planner.outcome.evidence import ATTEMPT, VerificationNote
from planner.text.prompts import render
from planner.tools.sandbox.safe_env import git_argv, git_environment
from planner.verification.fixes.undo import put_back
from planner.verification.suite.changes import changed_files, diff_since

HINT_LINES = 40
"""Lines of a failed attempt's diff the next attempt is shown."""
HINT_TAIL = 1_200
"""Characters of a failed attempt's test output the next attempt is shown."""
NAMES_SHOWN = 20
"""Failing tests named in a prompt, at most."""
EXECUTABLE = "100755"


@dataclass(frozen=True)
class Start:
    """The tree an attempt starts from: commit `base` with the baseline's uncommitted files."""

    base: str
    dirty: dict[str, str | None]
    """Files that differed from `base` when the baseline ran: path → blob (None: deleted)."""
    excluded: tuple[str, ...] = ()
    """Folders (relative, with a trailing /) that are planner's, never the change's."""

    def changed(self, workspace: Path) -> list[str]:
        """The files of the working tree that differ from `base`, planner's own left out."""
        return changed_files(workspace, self.base, self.owned)

    def owned(self, path: str) -> bool:
        return not any(path.startswith(folder) for folder in self.excluded)


def snapshot(workspace: Path, start: Start) -> dict[str, str | None]:
    """The files that differ from the start's commit now, each stored as a blob (None:
    deleted): work in progress a later reset must give back, never throw away."""
    changed = start.changed(workspace)
    stored = _store(workspace, _plain_files(workspace, changed))
    return {path: stored.get(path) for path in changed}


def reset(workspace: Path, start: Start) -> list[str]:
    """Put every file that differs from the start back as it was then; the paths put back.
    Raises ResetImpossible when the start's commit cannot be read (a shallow clone)."""
    tree = _tree(workspace, start.base)
    if not tree:
        raise ResetImpossible(f"the commit {start.base[:12] or '(none)'} cannot be read")
    paths = sorted(set(start.changed(workspace)) | set(start.dirty))
    restored = []
    for path in paths:
        if path in start.dirty:
            blob, mode = start.dirty[path], ""
        else:
            blob, mode = tree.get(path, (None, ""))
        content = _blob(workspace, blob) if blob else None
        if blob and content is None:
            continue  # a blob git no longer has: left as it is rather than lost
        if put_back(workspace, path, content, executable=mode == EXECUTABLE):
            restored.append(path)
    return restored


class ResetImpossible(Exception):
    """The working tree cannot be put back to the start: no new attempt."""


def rank(entry: dict[str, Any]) -> tuple[int, int, int]:
    """How close an attempt came (lower is closer): tests it broke, then the issue's tests
    still failing, then the size of its change. An attempt whose change no test judged, or
    that changed nothing, comes last."""
    if not entry.get("tested") or not entry.get("files"):
        return (10**6, 10**6, 10**6)
    broken = len(entry.get("new_failures") or [])
    unproven = len(entry.get("issue_failures") or [])
    return (broken, unproven, int(entry.get("diff_lines") or 0))


def take_up(workspace: Path, start: Start, entry: dict[str, Any]) -> list[str] | None:
    """The working tree as attempt `entry` left it: put back to the start, then its files
    written from the blobs it stored. None, with the tree untouched, when git no longer has
    one of them."""
    files = entry.get("files") or {}
    contents: dict[str, bytes | None] = {}
    for path, blob in files.items():
        content = _blob(workspace, str(blob)) if blob else None
        if blob and content is None:
            return None
        contents[str(path)] = content
    restored = reset(workspace, start)
    modes = _tree(workspace, start.base)
    for path, content in contents.items():
        executable = modes.get(path, (None, ""))[1] == EXECUTABLE
        if put_back(workspace, path, content, executable) and path not in restored:
            restored.append(path)
    return sorted(restored)


def attempt_record(
    workspace: Path, start: Start, number: int, note: VerificationNote
) -> dict[str, Any]:
    """The history entry of attempt `number` that failed: what failed, the end of the output,
    its change (a diff for the next attempt's prompt, blobs to take it up again)."""
    changed = [path for path in start.changed(workspace) if path not in start.dirty]
    stored = _store(workspace, _plain_files(workspace, changed))
    diff = diff_since(workspace, start.base, changed, HINT_LINES)
    latest = note.latest
    return {
        "attempt": number,
        "status": "failed",
        "failing": [*note.new_failures, *note.issue_failures],
        "new_failures": note.new_failures,
        "issue_failures": note.issue_failures,
        "tested": latest is not None and latest.ran and latest.stage not in ("baseline", "issue"),
        "tail": latest.tail[-HINT_TAIL:] if latest is not None else "",
        "diff": diff,
        "diff_lines": sum(1 for line in diff.splitlines() if line[:1] in "+-"),
        "files": {path: stored.get(path) for path in changed},
    }


def attempt_count(entries: list[dict[str, Any]]) -> int:
    """Attempts that failed since a person's last instruction."""
    count = 0
    for entry in entries:
        if entry.get("type") == "human_input":
            count = 0
        elif entry.get("type") == ATTEMPT and entry.get("status") == "failed":
            count += 1
    return count


def failed_attempts(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The failed attempts' entries since a person's last instruction, oldest first."""
    found: list[dict[str, Any]] = []
    for entry in entries:
        if entry.get("type") == "human_input":
            found = []
        elif entry.get("type") == ATTEMPT and entry.get("status") == "failed":
            found.append(entry)
    return found


def start_of(baseline: dict[str, Any], excluded: tuple[str, ...]) -> Start:
    """Where every attempt starts: the commit the baseline ran on and its work in progress
    (`baseline`: the baseline's history entry)."""
    dirty = baseline.get("dirty")
    kept = {str(k): (str(v) if v else None) for k, v in dirty.items()} if dirty else {}
    return Start(str(baseline.get("base_commit") or ""), kept, excluded)


def relative_folders(workspace: Path, excluded: tuple[Path, ...]) -> tuple[str, ...]:
    """The folders of `excluded` inside the workspace, relative, with a trailing /."""
    folders = []
    for path in excluded:
        try:
            relative = path.resolve().relative_to(workspace.resolve())
        except (OSError, ValueError):
            continue
        folders.append(relative.as_posix().rstrip("/") + "/")
    return tuple(folders)


def attempt_failed(entry: dict[str, Any]) -> bool:
    return entry.get("type") == ATTEMPT and entry.get("status") == "failed"


def attempt_hint(entries: list[dict[str, Any]], compact: bool) -> str:
    """What the attempts before this one failed on ("" in the first attempt)."""
    attempts = failed_attempts(entries)
    if not attempts:
        return ""
    shown = [
        {
            "attempt": entry.get("attempt"),
            "failing": [str(name) for name in entry.get("failing") or []][:NAMES_SHOWN],
            "tail": str(entry.get("tail") or ""),
            "diff": str(entry.get("diff") or ""),
        }
        for entry in attempts
    ]
    return render("attempt_hint.md.j2", attempts=shown, compact=compact)


def closer_attempt(
    workspace: Path, start: Start, entries: list[dict[str, Any]], note: VerificationNote
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """No attempts left and none passed: the current attempt's record and an earlier attempt
    that came closer (fewer tests it broke, fewer of the issue's failing, a smaller change);
    None when there is none, or an attempt already won or was taken up."""
    earlier = failed_attempts(entries)
    latest = next((e for e in reversed(entries) if e.get("type") == ATTEMPT), None)
    ended = latest is not None and latest.get("status") in ("won", "restored")
    if not earlier or ended or not start.base:
        return None
    current = attempt_record(workspace, start, len(earlier) + 1, note)
    best = min(earlier, key=rank)
    return (current, best) if rank(best) < rank(current) else None


def won_record(workspace: Path, start: Start, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """After failed attempts, the entry of the one whose tests pass ({}: the first attempt,
    or the winner is recorded already)."""
    number = attempt_count(entries) + 1
    latest = next((e for e in reversed(entries) if e.get("type") == ATTEMPT), None)
    if number == 1 or (latest is not None and latest.get("status") == "won"):
        return {}
    changed = [path for path in start.changed(workspace) if path not in start.dirty]
    diff = diff_since(workspace, start.base, changed, 10_000)
    lines = sum(1 for line in diff.splitlines() if line[:1] in "+-")
    return {"attempt": number, "status": "won", "diff_lines": lines}


# -- git plumbing --------------------------------------------------------------------------------


def _plain_files(workspace: Path, paths: list[str]) -> list[str]:
    """The paths that are files, not links (a link's target is never read into git)."""
    return [p for p in paths if (workspace / p).is_file() and not (workspace / p).is_symlink()]


def _store(workspace: Path, paths: list[str]) -> dict[str, str]:
    """Each file of `paths` written into git's object store as it is: path → blob."""
    if not paths:
        return {}
    out = _git(workspace, "hash-object", "-w", "--no-filters", "--stdin-paths", stdin=paths)
    blobs = out.decode("ascii", "replace").split() if out is not None else []
    return dict(zip(paths, blobs, strict=False)) if len(blobs) == len(paths) else {}


def _tree(workspace: Path, commit: str) -> dict[str, tuple[str, str]]:
    """path → (blob, mode) of every file of `commit`; {} when it cannot be read."""
    if not commit:
        return {}
    out = _git(workspace, "ls-tree", "-r", "-z", commit)
    tree: dict[str, tuple[str, str]] = {}
    for line in (out or b"").decode("utf-8", "surrogateescape").split("\0"):
        meta, _, path = line.partition("\t")
        parts = meta.split()
        if path and len(parts) == 3 and parts[1] == "blob":
            tree[path] = (parts[2], parts[0])
    return tree


def _blob(workspace: Path, blob: str) -> bytes | None:
    return _git(workspace, "cat-file", "blob", blob)


def _git(workspace: Path, *args: str, stdin: list[str] | None = None) -> bytes | None:
    """stdout of a git command as bytes; None when git fails."""
    data = "".join(f"{line}\n" for line in stdin).encode() if stdin is not None else None
    try:
        done = subprocess.run(
            git_argv(*args),
            cwd=workspace,
            env=git_environment(os.environ),
            input=data,
            capture_output=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout
