"""Candidate fixes chosen by tests: candidates and mutants, the failing test's trace that
localises the wrong value (trace), repair attempts and tasks, and undoing a failed repair."""
