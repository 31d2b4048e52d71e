"""Build and cache outputs: what tests, builds and package managers leave behind.

They never reach a commit, whatever the repository's `.gitignore` says
(planner.ci.branch.commit_policy), and the effect check of a command
(planner.tools.commands.effects) does not count them as its effects.
"""

from __future__ import annotations

from collections.abc import Sequence

BUILD_OUTPUT_DIRECTORIES = frozenset(
    {"__pycache__", ".pytest_cache", "node_modules", ".mypy_cache", ".ruff_cache", ".tox", ".nox"}
)
"""Folders that only a tool writes: caches of Python, test runners, linters, npm."""
BUILD_OUTPUT_SUFFIXES = (".pyc", ".pyo")


def is_build_output(parts: Sequence[str]) -> bool:
    """Whether a path (its segments, relative to the workspace) is a build or cache output."""
    if any(part.casefold() in BUILD_OUTPUT_DIRECTORIES for part in parts):
        return True
    return bool(parts) and parts[-1].casefold().endswith(BUILD_OUTPUT_SUFFIXES)
