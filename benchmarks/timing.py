"""Timing shared by the benchmarks: printed figures, never assertions."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_ms(action: Callable[[], object], runs: int) -> float:
    """The median wall time of `runs` calls of `action`, in milliseconds."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)
