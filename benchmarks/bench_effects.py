"""What the effect check of a command costs (planner.tools.commands.effects.TreeWatcher) on a
repository of many files: the first snapshot of a pass (every file hashed once), the snapshot before
each later command (stat only: nothing changed), the comparison after a command that changed one
file, and the rollback of a deletion. `git status` on the same tree is printed for scale.

    python benchmarks/bench_effects.py [--files 20000] [--file-bytes 2000]

Prints figures; it is not a test.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing planner

from planner.tools.commands.effects import TreeWatcher  # noqa: E402

IDENTITY = ["-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]


def make_repository(root: Path, files: int, size: int) -> None:
    """`files` committed files of `size` bytes, 100 to a folder."""
    for index in range(files):
        folder = root / f"pkg{index // 100:04d}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{index % 100:02d}.py").write_bytes(os.urandom(size // 2).hex().encode())
    for argv in (["init", "-q"], ["add", "-A"], [*IDENTITY, "commit", "-q", "-m", "seed"]):
        subprocess.run(["git", *argv], cwd=root, check=True)


def repository_options(description: str, files: int) -> argparse.ArgumentParser:
    """A command line with the size of the repository a benchmark makes (`--files` of
    `--file-bytes`); `files` is the default count."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--files", type=int, default=files)
    parser.add_argument("--file-bytes", type=int, default=2_000)
    return parser


@contextlib.contextmanager
def repository(files: int, size: int) -> Iterator[Path]:
    """make_repository's repository in a temporary folder, removed afterwards."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        make_repository(root, files, size)
        yield root


def timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def main(argv: list[str] | None = None) -> int:
    args = repository_options(__doc__.splitlines()[0], 20_000).parse_args(argv)
    with repository(args.files, args.file_bytes) as root:
        watcher = TreeWatcher(root)
        first = timed(watcher.snapshot)
        before = watcher.snapshot()
        again = timed(watcher.snapshot)
        victim = root / "pkg0000" / "mod00.py"
        victim.unlink()
        changes: list[object] = []
        compare = timed(lambda: changes.extend(watcher.compare(before)))
        rollback = timed(lambda: watcher.rollback(watcher.compare(before)))
        status = timed(lambda: subprocess.run(["git", "status", "-s"], cwd=root, check=True))
        watcher.close()
    total_mb = args.files * args.file_bytes / 1e6
    print(f"repository: {args.files} files, {total_mb:.0f} MB")
    print(f"first snapshot (hash every file): {first:8.0f} ms")
    print(f"snapshot, nothing changed:        {again:8.0f} ms")
    print(f"compare after one deletion:       {compare:8.0f} ms ({len(changes)} change)")
    print(f"rollback of that deletion:        {rollback:8.0f} ms")
    print(f"git status, for scale:            {status:8.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
