"""Timing and tables shared by the benchmarks: printed figures, never assertions."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable, Sequence


def median_ms(action: Callable[[], object], runs: int) -> float:
    """The median wall time of `runs` calls of `action`, in milliseconds."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def print_table(columns: Sequence[tuple[str, str]], rows: Iterable[Sequence[object]]) -> None:
    """A table: the header of `columns` (title, format spec: alignment, width and `,` where
    thousands are grouped), underlined, then each row as soon as it is measured."""
    header = " ".join(f"{title:{spec.removesuffix(',')}}" for title, spec in columns)
    print(header)
    print("-" * len(header))
    for row in rows:
        print(" ".join(f"{value:{spec}}" for value, (_, spec) in zip(row, columns, strict=True)))
