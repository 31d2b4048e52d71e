"""What changed in the working tree: whether to run the tests again, and which test files the
work touched.

Read-only git plumbing that runs nothing the repository configured: `ls-files`, `ls-tree` and
`hash-object --no-filters` never start a filter driver or a hook, whatever a pass planted in
`.git/config`, and git gets planner's scrubbed environment and safety options.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from planner.outcome.evidence import is_test_file
from planner.tools.files.edits import unified_diff
from planner.tools.files.paths import shown_in_tree
from planner.tools.sandbox.safe_env import git_text


def head_commit(workspace: Path) -> str:
    return _git(workspace, "rev-parse", "--verify", "-q", "HEAD").strip()


def fingerprint(workspace: Path) -> str:
    """Changes whenever a file of the working tree (tracked or not ignored) is written,
    created or deleted: name, size and modification time of each."""
    digest = hashlib.sha256()
    for name in sorted(_working_files(workspace)):
        try:
            info = os.lstat(workspace / name)
            digest.update(f"{name}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
        except OSError:
            digest.update(f"{name}\0gone\n".encode())
    return digest.hexdigest()


def changed_test_files(workspace: Path, base: str, patterns: list[str]) -> list[str]:
    """Test files (by `patterns`) that differ from commit `base`: changed, added or deleted."""
    return changed_files(workspace, base, lambda path: is_test_file(path, patterns))


def changed_files(workspace: Path, base: str, wanted: Callable[[str], bool]) -> list[str]:
    """Files that `wanted` keeps and that differ from commit `base`: changed, added or
    deleted."""
    if not base:
        return []
    before = {path: blob for path, blob in _tree(workspace, base).items() if wanted(path)}
    now = [name for name in _working_files(workspace) if wanted(name)]
    hashes = {
        name: _blob_id(content)
        for name in now
        if (content := shown_in_tree(workspace, name)) is not None
    }
    present = list(hashes)
    changed = {name for name in present if hashes.get(name) != before.get(name)}
    changed |= {path for path in before if path not in hashes}
    return sorted(changed)


LINE_CHARS = 300
"""A diff line longer than this (minified code, data) is cut."""


def diff_since(workspace: Path, base: str, paths: list[str], max_lines: int) -> str:
    """The unified diff of `paths` from commit `base` to the working tree, cut at `max_lines`
    (computed here from the blobs: `git diff` would run a diff driver a pass planted)."""
    if not base:
        return ""
    tree = _tree(workspace, base)
    texts = [(path, _blob(workspace, tree.get(path)), _text(workspace, path)) for path in paths]
    parts = [
        unified_diff(path, before, after)
        for path, before, after in texts
        if "\0" not in before + after  # a binary file has no lines to show
    ]
    lines = "".join(parts).splitlines()
    cut = [line[:LINE_CHARS] for line in lines[:max_lines]]
    if len(lines) > max_lines:
        cut.append(f"[… {len(lines) - max_lines} more lines of the diff]")
    return "\n".join(cut)


def removed_names(workspace: Path, base: str, paths: list[str]) -> list[str]:
    """Top-level functions and classes of the Python files `paths` that commit `base` defined
    and the working tree no longer does (a rename's old name)."""
    if not base:
        return []
    tree = _tree(workspace, base)
    removed: set[str] = set()
    for path in paths:
        if path.endswith(".py") and path in tree:
            before = _defined(_blob(workspace, tree[path]))
            removed |= before - _defined(_text(workspace, path))
    return sorted(removed)


def added_tests(workspace: Path, base: str, names: list[str]) -> list[str]:
    """Of the tests `names` (`tests/test_a.py::test_x[1]`, `tests/test_a.py::TestA::test_x`),
    those the working tree added since commit `base`: commit `base` has neither their file
    nor a function of their name in it. Names without a file (`(the test command failed …)`,
    unittest's) are never taken for added."""
    if not base:
        return []
    tree = _tree(workspace, base)
    before = functools.cache(lambda path: _blob(workspace, tree.get(path)))
    added = []
    for name in names:
        path, _, rest = name.partition("::")
        function = rest.split("::")[-1].split("[")[0]
        if function and not re.search(rf"\bdef {re.escape(function)}\b", before(path)):
            added.append(name)
    return added


USERS_LISTED = 10
"""At most this many files are listed as still using a removed name."""


def files_using(workspace: Path, names: list[str]) -> dict[str, list[str]]:
    """For each of `names`, the Python files of the working tree (the first USERS_LISTED)
    that still name it as a word; each file is read once."""
    found: dict[str, list[str]] = {name: [] for name in names}
    if not names:
        return found
    word = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    for path in _working_files(workspace):
        if not path.endswith(".py"):
            continue
        for name in set(word.findall(_text(workspace, path))):
            if len(found[name]) < USERS_LISTED:
                found[name].append(path)
    return found


def _defined(text: str) -> set[str]:
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError):
        return set()
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {node.name for node in module.body if isinstance(node, kinds)}


def _blob(workspace: Path, blob: str | None) -> str:
    return _git(workspace, "cat-file", "blob", blob) if blob else ""


def _text(workspace: Path, path: str) -> str:
    """The file as git would store it (a link's target, never what it points to), read without
    following links; "" when it is gone (the diff shows it removed) or not a file."""
    content = shown_in_tree(workspace, path)
    return "" if content is None else content.decode("utf-8", errors="replace")


def _blob_id(content: bytes) -> str:
    """The id git gives `content` as a blob (what `git hash-object --no-filters` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def _working_files(workspace: Path) -> list[str]:
    listed = _git(workspace, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    return sorted({name for name in listed.split("\0") if name})


def _tree(workspace: Path, commit: str) -> dict[str, str]:
    listed = _git(workspace, "ls-tree", "-r", "-z", commit)
    tree = {}
    for line in listed.split("\0"):
        meta, _, path = line.partition("\t")
        parts = meta.split()
        if path and len(parts) == 3:
            tree[path] = parts[2]
    return tree


def _git(workspace: Path, *args: str, stdin: str | None = None) -> str:
    """stdout of a git command; '' when git fails (no repository, unknown commit)."""
    try:
        done = git_text(workspace, *args, stdin=stdin, errors="surrogateescape", check=True)
    except (OSError, subprocess.CalledProcessError):
        return ""
    return done.stdout


def working_files(workspace: Path) -> list[str]:
    """The working tree's files: tracked, or new and not ignored."""
    return _working_files(workspace)


def text_at(workspace: Path, commit: str, path: str) -> str:
    """`path` as commit `commit` has it ("" when it has no such file)."""
    return _blob(workspace, _tree(workspace, commit).get(path)) if commit else ""
