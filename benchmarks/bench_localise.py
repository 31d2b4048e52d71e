"""Localisation figures (issue 46): the symbol index on a 50,000-file repository.

    .venv/bin/python benchmarks/bench_localise.py [--files 50000]

A generated git repository of `--files` files (the repository-map benchmark's mix: 70% Python
modules, the rest JavaScript, Markdown, binary and large files), one of whose modules defines
the function the issue names. Measured: the task prompt's files for that issue (the symbol
index: every Python file read through the workspace's no-follow reader, only those naming the
issue's code names parsed), cold and again (parsed files kept), with the wall and CPU time and
the peak memory Python allocated (tracemalloc), the files parsed and where the function ranked.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_grounding import generate
from planner.config import load_config
from planner.grounding.files import list_files
from planner.grounding.task_files import TaskFiles

ISSUE = (
    "Totals are wrong\n`handle_31415_2(event, context)` returns the sum of the events; the "
    "handler must count them:\n```python\n>>> handle_31415_2([5, 5], None)\n10\n```\nExpected 2."
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=50_000)
    count = parser.parse_args().files
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="bench-localise-"))
    try:
        generate(root, count)
        target = next(root.rglob("module_31415.py"), None)
        files = TaskFiles(load_config(None, env={}, overrides={}), root)
        paths = list_files(root)
        for label in ("symbol index alone, cold", "symbol index alone, again"):
            tracemalloc.start()
            wall, cpu = time.perf_counter(), time.process_time()
            located = files.symbols.locate(paths, [ISSUE])
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            first = located[0].definition.qualname if located else "nothing"
            print(
                f"{label}: {wall * 1000:,.0f} ms wall / {cpu * 1000:,.0f} ms CPU, "
                f"peak {peak / 1e6:,.1f} MB, ranked first: {first}"
            )
        files.symbols.parsed.clear()
        for label in ("task prompt files (with the map's file index), cold", "again"):
            tracemalloc.start()
            wall, cpu = time.perf_counter(), time.process_time()
            shown = files.files_for([ISSUE])
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            print(
                f"{label}: {wall * 1000:,.0f} ms wall / {cpu * 1000:,.0f} ms CPU, "
                f"peak {peak / 1e6:,.1f} MB, {len(files.symbols.parsed)} files parsed"
            )
        found = "def handle_31415_2" in shown.text
        print(
            f"repository: {count} files; the issue's function "
            f"{'shown' if found else 'NOT shown'} ({target.relative_to(root) if target else '?'})"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
