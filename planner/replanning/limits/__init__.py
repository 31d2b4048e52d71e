"""The system's side of a replan decision: the levels, the counts derived from the history, the
limits, confidence bands and loop detection, the statistics."""
