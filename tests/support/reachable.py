"""A Python runtime another user can run planner with, wherever the checkout lives.

Tests that start planner or an MCP server as an unprivileged user need that user to reach the
interpreter, planner's package and its dependencies. A checkout under a mode-700 directory (a
fresh clone in a private temporary folder) is out of that user's reach, so the runtime is then
mirrored into a directory the test made reachable: planner's package and entry point copied,
site-packages hard-linked (copied across file systems), and an interpreter of the same version
the user can execute. A checkout the user reaches is used as it is.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pydantic

from planner.tools.sandbox.isolation import reachable_by_others, unreachable_interpreter

ROOT = Path(__file__).resolve().parents[2]
SITE_PACKAGES = Path(pydantic.__file__).resolve().parents[1]
VERSION = f"python{sys.version_info.major}.{sys.version_info.minor}"


@dataclass(frozen=True)
class Runtime:
    python: str
    root: Path
    """Where planner's package and entrypoint.py are."""
    path: tuple[str, ...] = ()
    """Directories the interpreter must put first on sys.path (PYTHONPATH)."""

    @property
    def entrypoint(self) -> Path:
        return self.root / "entrypoint.py"

    def environment(self) -> dict[str, str]:
        return {"PYTHONPATH": os.pathsep.join(self.path)} if self.path else {}


def reachable_runtime(base: Path) -> Runtime:
    """The checkout's runtime when other users reach it, else a mirror under `base` (which
    other users must reach)."""
    reached = all(reachable_by_others(p) for p in (ROOT, SITE_PACKAGES))
    if reached and not unreachable_interpreter(Path(sys.executable)):
        return Runtime(sys.executable, ROOT)
    mirror = base / "runtime"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "planner", mirror / "checkout" / "planner", ignore=ignore)
    shutil.copy2(ROOT / "entrypoint.py", mirror / "checkout" / "entrypoint.py")
    _link_tree(SITE_PACKAGES, mirror / "site-packages")
    path = (str(mirror / "checkout"), str(mirror / "site-packages"))
    return Runtime(_reachable_interpreter(), mirror / "checkout", path)


def _link_tree(source: Path, target: Path) -> None:
    linked = subprocess.run(["cp", "-al", str(source), str(target)], capture_output=True)
    if linked.returncode != 0:  # another file system: copy
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target, symlinks=True)


@functools.cache
def _reachable_interpreter() -> str:
    """An interpreter of this version that other users can execute: the real one found
    (links and a venv's `home` resolved), as a venv in an unreachable checkout, or an
    installation under a mode-700 home (pyenv under /root), is not one."""
    candidates = [
        sys.executable,
        os.path.realpath(getattr(sys, "_base_executable", sys.executable)),
        shutil.which(VERSION, path="/usr/local/bin:/usr/bin:/bin") or "",
    ]
    for candidate in candidates:
        if candidate and not unreachable_interpreter(Path(candidate)):
            return candidate
    raise AssertionError(interpreter_note() or f"no {VERSION} that other users can run")


def interpreter_note() -> str:
    """One line for the test session's header when the sandbox user cannot run this
    interpreter ('' when it can): what the user-switching tests run instead, or the fix."""
    problem = unreachable_interpreter(Path(sys.executable))
    if not problem:
        return ""
    found = shutil.which(VERSION, path="/usr/local/bin:/usr/bin:/bin")
    if found and not unreachable_interpreter(Path(found)):
        return f"sandbox-user tests run {found} with a copy of the runtime: {problem}"
    return f"sandbox-user tests cannot run: {problem}"
