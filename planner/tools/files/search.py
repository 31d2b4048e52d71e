"""search_files: a regex over the workspace's files, honouring .gitignore.

In a git repository the candidate files are `git ls-files --cached --others --exclude-standard`
(tracked plus untracked-but-not-ignored, so files the agent just wrote are found); elsewhere a
walk that skips .git. Every candidate goes through the path policy (no symlinks out, nothing
under .git or planner's state). The scan itself runs in a child process with a timeout.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from planner.config import ToolsConfig
from planner.core.interfaces import ToolResult, ToolSpec
from planner.tools import arguments as args
from planner.tools.arguments import BadArguments
from planner.tools.files.paths import PathPolicy, PathRefused
from planner.tools.output import cap_text
from planner.tools.sandbox.safe_env import git_run

SCANNER = Path(__file__).with_name("_scan.py")
LS_FILES = ("ls-files", "-z", "--cached", "--others", "--exclude-standard", "--")


class SearchFailed(Exception):
    """The search could not finish; the message says why."""


class FileSearch:
    def __init__(self, policy: PathPolicy, config: ToolsConfig) -> None:
        self.policy = policy
        self.config = config
        self.spec = ToolSpec(
            name="search_files",
            description=(
                "Search file contents with a Python regular expression; .gitignore is honoured. "
                f"Lists up to {config.max_search_results} matching lines as path:line: text."
            ),
            parameters=SEARCH_PARAMETERS,
        )

    def run(self, arguments: dict[str, Any]) -> ToolResult:
        pattern = args.text(arguments, "pattern")
        _check_pattern(pattern)
        base = args.text(arguments, "path", ".")
        files = self._candidates(self.policy.resolve(base), arguments.get("glob"))
        found = self._scan(pattern, files, args.flag(arguments, "ignore_case"))
        return ToolResult(ok=True, content=self._report(pattern, found, len(files)))

    def python_files(self) -> list[str]:
        """The repository's Python files, as search_files would search them."""
        return self._candidates(self.policy.root, "*.py")

    def scan(self, pattern: str, files: list[str]) -> dict[str, Any]:
        """A pattern planner built (not the model's), matched case-sensitively."""
        return self._scan(pattern, files, ignore_case=False)

    def _candidates(self, base: Path, glob: Any) -> list[str]:
        if glob is not None and not isinstance(glob, str):
            raise BadArguments("argument 'glob' must be a string")
        names = _git_files(self.policy.root, base)
        if names is None:
            names = _walk(base, self.policy)
        return [name for name in names if self._searchable(name, glob)]

    def _searchable(self, name: str, glob: str | None) -> bool:
        if glob and not (fnmatch.fnmatch(name, glob) or fnmatch.fnmatch(Path(name).name, glob)):
            return False
        try:
            return self.policy.resolve(name).is_file()
        except PathRefused:
            return False

    def _scan(self, pattern: str, files: list[str], ignore_case: bool) -> dict[str, Any]:
        request = {
            "pattern": pattern,
            "ignore_case": ignore_case,
            "root": str(self.policy.root),
            "files": files,
            "max_results": self.config.max_search_results,
        }
        timeout = self.config.search_timeout_seconds
        try:
            completed = subprocess.run(
                [sys.executable, "-I", "-S", str(SCANNER)],
                input=json.dumps(request),
                capture_output=True,
                text=True,
                timeout=timeout,
                env={},
            )
        except subprocess.TimeoutExpired:
            raise SearchFailed(
                f"search_files stopped after {timeout:g}s (rule 'search-timeout'); "
                "use a simpler pattern or a narrower path"
            ) from None
        if completed.returncode != 0:
            raise SearchFailed(f"search_files failed: {completed.stderr.strip()[-500:]}")
        found: dict[str, Any] = json.loads(completed.stdout)
        return found

    def _report(self, pattern: str, found: dict[str, Any], searched: int) -> str:
        if not found["total"]:
            return f"no match for {pattern!r} in {searched} files"
        lines = [f"{path}:{number}: {text}" for path, number, text in found["matches"]]
        shown = len(found["matches"])
        summary = f"[{found['total']} matching lines in {found['files']} of {searched} files"
        summary += f"; showing the first {shown}]" if shown < found["total"] else "]"
        body = cap_text("\n".join(lines), self.config.max_output_bytes, "matches")
        return f"{body}\n{summary}"


def _check_pattern(pattern: str) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise BadArguments(f"pattern is not a valid regular expression: {exc}") from None


def _git_files(root: Path, base: Path) -> list[str] | None:
    """Files git would consider (tracked, or untracked and not ignored); None outside git."""
    try:
        listed = git_run(root, *LS_FILES, str(base), timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if listed.returncode != 0:
        return None
    names = listed.stdout.decode("utf-8", errors="surrogateescape").split("\0")
    return sorted({name for name in names if name})


def _walk(base: Path, policy: PathPolicy) -> list[str]:
    if base.is_file():
        return [base.relative_to(policy.root).as_posix()]
    found: list[str] = []
    for directory, subdirectories, files in os.walk(base):
        here = Path(directory)
        subdirectories[:] = sorted(d for d in subdirectories if not policy.hidden(here / d))
        found += [(here / f).relative_to(policy.root).as_posix() for f in sorted(files)]
    return found


SEARCH_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "Python regular expression, per line"},
        "path": {"type": "string", "description": "Directory or file to search; default '.'"},
        "glob": {"type": "string", "description": "Only files matching this, e.g. '*.py'"},
        "ignore_case": {"type": "boolean"},
    },
    "required": ["pattern"],
}
