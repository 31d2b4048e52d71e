#!/usr/bin/env python3
"""One entry point for every developer task; the Makefile and CI call this too.

    python3 scripts/dev.py demo        # run the demo pass (scripted model unless OPENAI_API_KEY)
    python3 scripts/dev.py test        # the whole test suite
    python3 scripts/dev.py lint        # ruff + mypy
    python3 scripts/dev.py lint-ci     # hadolint, zizmor, action-validator, GitLab component
    python3 scripts/dev.py bench       # benchmarks

Each command creates .venv (if missing) and installs what it needs first. Standard library only.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("PLANNER_VENV", ROOT / ".venv"))
BIN = VENV / "bin"
NODE_DIR = ROOT / "tests" / "node"


def run(*command: str | Path, cwd: Path = ROOT) -> None:
    print("+", " ".join(str(part) for part in command), flush=True)
    completed = subprocess.run([str(part) for part in command], cwd=cwd)
    if completed.returncode != 0:
        sys.exit(completed.returncode)


def ensure_venv(extras: str) -> None:
    """Create the venv and install the project, redoing it only when pyproject.toml changes."""
    if not (BIN / "python").exists():
        venv.EnvBuilder(with_pip=True).create(VENV)
    stamp = VENV / f".installed-{extras or 'runtime'}"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == digest:
        return
    spec = f".[{extras}]" if extras else "."
    run(
        BIN / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-e", spec
    )
    stamp.write_text(digest)


def ensure_node() -> None:
    """npm packages the tests use (real MCP servers, GitHub artifacts, validators)."""
    lock = NODE_DIR / "package-lock.json"
    if not lock.exists():
        return
    marker = NODE_DIR / "node_modules" / ".package-lock.json"
    if marker.exists() and marker.stat().st_mtime >= lock.stat().st_mtime:
        return
    run("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error", cwd=NODE_DIR)


def demo(args: list[str]) -> None:
    ensure_venv("")
    run(BIN / "planner", "demo", *args)


def test(args: list[str]) -> None:
    ensure_venv("dev")
    ensure_node()
    run(BIN / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", *args)


def lint(args: list[str]) -> None:
    ensure_venv("dev")
    run(BIN / "ruff", "check", "planner", "tests", "scripts", "benchmarks", "entrypoint.py")
    run(
        BIN / "ruff",
        "format",
        "--check",
        "planner",
        "tests",
        "scripts",
        "benchmarks",
        "entrypoint.py",
    )
    run(BIN / "mypy", "planner")


def lint_ci(args: list[str]) -> None:
    ensure_venv("dev")
    ensure_node()
    run(BIN / "python", ROOT / "scripts" / "lint_ci.py", *args)


def fmt(args: list[str]) -> None:
    ensure_venv("dev")
    run(BIN / "ruff", "format", "planner", "tests", "scripts", "benchmarks", "entrypoint.py")
    run(
        BIN / "ruff", "check", "--fix", "planner", "tests", "scripts", "benchmarks", "entrypoint.py"
    )


def bench(args: list[str]) -> None:
    ensure_venv("dev")
    for script in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        run(BIN / "python", script, *args)


def local_model(args: list[str]) -> None:
    run(sys.executable, ROOT / "scripts" / "local_model.py", *args)


COMMANDS = {
    "demo": demo,
    "test": test,
    "lint": lint,
    "lint-ci": lint_ci,
    "format": fmt,
    "bench": bench,
    "local-model": local_model,
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(f"usage: {sys.argv[0]} {{{'|'.join(COMMANDS)}}} [args...]")
    COMMANDS[sys.argv[1]](sys.argv[2:])
