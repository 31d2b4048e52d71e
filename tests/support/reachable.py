"""A Python runtime another user can run planner with, wherever the checkout lives.

Tests that start planner or an MCP server as an unprivileged user need that user to reach the
interpreter, planner's package and its dependencies. A checkout under a mode-700 directory (a
fresh clone in a private temporary folder) is out of that user's reach, so the runtime is then
mirrored into a directory the test made reachable: planner's package and entry point copied,
site-packages hard-linked (copied across file systems), and an interpreter of the same version
the user can execute. A checkout the user reaches is used as it is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pydantic

from planner.tools.isolation import reachable_by_others

ROOT = Path(__file__).resolve().parents[2]
SITE_PACKAGES = Path(pydantic.__file__).resolve().parents[1]


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
    if all(reachable_by_others(p) for p in (ROOT, SITE_PACKAGES, Path(sys.executable))):
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


def _reachable_interpreter() -> str:
    """An interpreter of this version that other users can execute (a venv's interpreter
    in an unreachable checkout is not one)."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    candidates = [
        sys.executable,
        os.path.realpath(getattr(sys, "_base_executable", sys.executable)),
        shutil.which(version, path="/usr/local/bin:/usr/bin:/bin") or "",
    ]
    for candidate in candidates:
        if candidate and reachable_by_others(Path(candidate)):
            return candidate
    raise AssertionError(f"no {version} that other users can run: {candidates}")
