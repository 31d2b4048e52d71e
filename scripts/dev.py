#!/usr/bin/env python3
"""One entry point for every developer task; the Makefile and CI call this too.

    python3 scripts/dev.py demo        # run the demo pass (scripted model unless OPENAI_API_KEY)
    python3 scripts/dev.py test        # the whole test suite
    python3 scripts/dev.py lint        # ruff + mypy + import-linter (layer contracts)
    python3 scripts/dev.py lint-ci     # hadolint, zizmor, action-validator, GitLab component
    python3 scripts/dev.py bench       # benchmarks
    python3 scripts/dev.py docs        # regenerate docs/configuration.md, the schema, docs/cli.md,
                                       # docs/messages.md
    python3 scripts/dev.py eval [--local-model 0.5b|1.5b] [planner eval options]

Each command creates .venv (if missing; from PLANNER_PYTHON when set) and installs what it needs
first. Standard library only.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("PLANNER_VENV", ROOT / ".venv"))
BIN = VENV / "bin"
NODE_DIR = ROOT / "tests" / "node"


def run(*command: str | Path, cwd: Path = ROOT, env: dict[str, str] | None = None) -> None:
    print("+", " ".join(str(part) for part in command), flush=True)
    completed = subprocess.run([str(part) for part in command], cwd=cwd, env=env)
    if completed.returncode != 0:
        sys.exit(completed.returncode)


def ensure_venv(extras: str) -> None:
    """Create the venv and install the project, redoing it only when pyproject.toml changes."""
    if not (BIN / "python").exists():
        create_venv()
    stamp = VENV / f".installed-{extras or 'runtime'}"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == digest:
        return
    spec = f".[{extras}]" if extras else "."
    run(
        BIN / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-e", spec
    )
    stamp.write_text(digest)


def create_venv() -> None:
    """The venv, from PLANNER_PYTHON when set, else from this interpreter; said once when the
    interpreter it runs is out of the reach of the user the tests switch to."""
    chosen = os.environ.get("PLANNER_PYTHON", "")
    if chosen:
        run(chosen, "-m", "venv", VENV)
    else:
        venv.EnvBuilder(with_pip=True).create(VENV)
    note = closed_interpreter_note(chosen or sys.executable)
    if note:
        print(note, flush=True)


def closed_interpreter_note(python: str) -> str:
    """Run as root, the tests that switch to the sandbox user run Python as another user: the
    real interpreter (links resolved, and a venv's `home`) must be in that user's reach."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or sys.platform != "linux":
        return ""
    probe = "import os, sys; print(os.path.realpath(sys._base_executable)); print(sys.base_prefix)"
    found = subprocess.run([python, "-c", probe], capture_output=True, text=True)
    for path in found.stdout.split("\n"):
        closed = _closed_directory(Path(path)) if path else None
        if closed is not None:
            return (
                f"note: {path} lies under {closed}, which other users cannot enter, so the tests "
                "that run Python as the sandbox user use another interpreter of this version if "
                "one is in reach (/usr/local/bin, /usr/bin), else fail. To build .venv from a "
                "Python every user can run: rm -rf .venv && "
                f"PLANNER_PYTHON=/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
                " python3 scripts/dev.py test (or `chmod o+x` that directory)."
            )
    return ""


def _closed_directory(path: Path) -> Path | None:
    """The first directory on the way to `path` (links resolved) that others cannot enter."""
    real = path.resolve()
    for directory in reversed((real, *real.parents)):
        try:
            if not directory.stat().st_mode & 0o001:
                return directory
        except OSError:
            return directory
    return None


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
    # A temporary folder of the run's own: pytest, run by a test on a fixture repository,
    # deletes the old numbered tmp_path roots it finds when it exits, and a CI test spent its
    # whole timeout deleting those earlier runs had left in the machine's shared one. Its mode
    # is /tmp's: the user-switching tests hand folders under it to the sandbox user.
    with tempfile.TemporaryDirectory(prefix="planner-tests-", ignore_cleanup_errors=True) as tmp:
        os.chmod(tmp, 0o1777)
        run(
            BIN / "python",
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            *workers(args),
            *args,
            env={**os.environ, "TMPDIR": tmp},
        )


def workers(args: list[str]) -> list[str]:
    """pytest-xdist options for a run of the suite (or of a -k/-m selection of it); a run that
    names test files, sets -n or turns xdist off is left as asked (one file: serial).

    At least 4 workers: on 2 cores 4 ran no slower than 2 (the end-to-end tests also wait on
    their subprocesses and servers), 8 overloaded the machine (CONTRIBUTING.md, "Development")."""
    if any(_names_tests(arg) or arg.startswith(("-n", "--numprocesses")) for arg in args):
        return []
    if any(arg.endswith("no:xdist") for arg in args):
        return []
    return ["-n", str(max(4, os.cpu_count() or 1)), "--dist", "worksteal"]


def _names_tests(arg: str) -> bool:
    return not arg.startswith("-") and ("::" in arg or (ROOT / arg).exists() or Path(arg).exists())


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
    run(BIN / "lint-imports")  # the layer contracts in pyproject.toml ([tool.importlinter])


def lint_ci(args: list[str]) -> None:
    ensure_venv("dev")
    ensure_node()
    run(BIN / "python", ROOT / "scripts" / "lint_ci.py", *args)


def evaluate(args: list[str]) -> None:
    """`eval [--local-model 0.5b|1.5b] [planner eval options]`: the suite against the local
    model (started by scripts/local_model.py; its name makes profile auto pick small_model),
    else the scripted reference model."""
    ensure_venv("dev")
    model, rest = _local_model_choice(args)
    if model is None:
        scripted = [] if "--scripted" in rest else ["--scripted", "reference"]
        run(BIN / "planner", "eval", *scripted, *rest)
        return
    started = subprocess.run(
        [sys.executable, ROOT / "scripts" / "local_model.py", "start", "--model", model],
        stdout=subprocess.PIPE,
        text=True,
    )
    if started.returncode != 0:
        sys.exit(started.returncode)
    url = started.stdout.strip().splitlines()[-1]
    # The model's name gives its size, so the default profile picks small_model, as it does
    # for users; PLANNER_PROFILE or --config can still set another.
    local = ["--base-url", url, "--model", f"qwen2.5-coder-{model}-instruct"]
    os.environ.setdefault("OPENAI_API_KEY", "local")
    run(BIN / "planner", "eval", *local, *rest)


def _local_model_choice(args: list[str]) -> tuple[str | None, list[str]]:
    if "--local-model" not in args:
        return None, args
    at = args.index("--local-model")
    following = args[at + 1 : at + 2]
    named = bool(following) and not following[0].startswith("-")
    model = following[0] if named else "1.5b"
    return model, args[:at] + args[at + (2 if named else 1) :]


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


def docs(args: list[str]) -> None:
    """The generated pages: configuration reference, JSON Schema, CLI, the action's inputs table."""
    ensure_venv("dev")
    mode = args or ["--write"]
    run(BIN / "python", ROOT / "scripts" / "gen_docs.py", *mode)
    run(BIN / "python", ROOT / "scripts" / "action_docs.py", *mode)


def local_model(args: list[str]) -> None:
    run(sys.executable, ROOT / "scripts" / "local_model.py", *args)


COMMANDS = {
    "demo": demo,
    "test": test,
    "lint": lint,
    "lint-ci": lint_ci,
    "eval": evaluate,
    "format": fmt,
    "bench": bench,
    "local-model": local_model,
    "docs": docs,
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(f"usage: {sys.argv[0]} {{{'|'.join(COMMANDS)}}} [args...]")
    COMMANDS[sys.argv[1]](sys.argv[2:])
