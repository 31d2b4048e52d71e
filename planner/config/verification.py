"""verification — the repository's tests: baseline, runs after changes, repair attempts."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from planner.config.base import Section, command_words

TEST_PATHS = (
    "test_*.py", "*_test.py", "tests/*", "test/*", "*/tests/*", "*/test/*",
    "*.test.*", "*.spec.*", "*_test.go", "__tests__/*", "*/__tests__/*",
)  # fmt: skip
"""The default verification.test_paths."""


class VerificationConfig(Section):
    """verification — the repository's tests, run before the model acts (the baseline) and
    after each task that changed files; new failures go back to the model (issue 23). Not a
    seed key. See docs/verification.md."""

    enabled: Literal["auto", "on", "off"] = "auto"
    """auto: run `command`, or the test command detected from the repository's files (pytest
    or unittest, `npm test`, `go test ./...`, `cargo test`, `make test`), and say plainly when
    none was found; on: the same, but a repository without a test command is a configuration
    error; off: never run tests (the pass result says the tests were not run)."""
    command: str | None = None
    """The test command, written as a command line (`python -m pytest -q`); split like a
    shell would, never run by one. None: detected."""
    setup: str | None = None
    """Installs what the tests need (`pip install -e .[test]`, `npm ci`), once per issue before
    the baseline, with the runner's network and without any token in its environment. None:
    detected (requirements*.txt, pyproject.toml extras named test or dev, package-lock.json).
    Python packages go into a virtual environment of the verification's own, never planner's."""
    detect_setup: bool = True
    """Detect a setup command when `setup` is not set; false runs none."""
    timeout_seconds: float = Field(default=600.0, gt=0)
    """The test command is killed, with everything it started, after this many seconds; the
    run is recorded as timed out and the pass goes on."""
    setup_timeout_seconds: float = Field(default=900.0, gt=0)
    """The same for the setup command."""
    max_output_bytes: int = Field(default=200_000, ge=1_000)
    """Output kept per stream of one run (cut in the middle beyond this); what the model is
    shown of it is cut further to max_feedback_chars."""
    max_feedback_chars: int = Field(default=3_000, ge=200)
    """The tail of a failing run's output shown to the model with the failing test names."""
    max_repair_attempts: int = Field(default=2, ge=0)
    """Repair tasks planner adds when the work leaves tests failing that passed at the
    baseline (or that it added); when they are spent the next attempt starts (attempts), or
    the pass ends needs_human with a draft pull request. The small_model profile sets 1."""
    issue_test: bool = True
    """In a Python repository (pytest, unittest or no tests at all): before the change, the
    model writes a pytest test of what the issue states (one model call per issue). Used only
    when it fails on the code before the change; it runs with the tests, its failures go back
    to the model like theirs, and it is added to the pull request once it passes. A pass whose
    issue test still fails ends needs_human with a draft pull request."""
    test_paths: list[str] = Field(default_factory=lambda: list(TEST_PATHS))
    """fnmatch patterns of test files; the pull request lists those the model changed."""
    attempts: int = Field(default=1, ge=1, le=10)
    """Attempts at the issue in one pass. When an attempt ends with the issue's test failing or
    tests failing that passed before (its repair tasks spent), the working tree goes back to
    the code before the change and the model tries again from the start, told what the
    earlier attempts failed on and sampling differently (at temperature 0.5 at least). The
    first attempt whose tests pass wins; the pull request says which and what the others
    failed on. Attempts share the pass's budgets. The small_model profile sets 3."""
    candidates: int = Field(default=0, ge=0, le=20)
    """Candidate fixes asked for at most before the first task, once per issue, where the
    issue's test fails on the code before the change: each is one model call that writes back
    one of the definitions the issue points to (a few of them in turn; after the first round,
    sampling warmer, and shown what the definition's previous candidate changed and failed
    on), tried with the issue's test and the tests of the changed file, and taken back. They
    stop early when the pass's time (max_wall_seconds less the finish reserve) leaves less
    than another candidate as long as the longest so far. The first whose tests pass becomes
    the task's work (written like any change); when none does, the task runs as usual, unless
    the candidates spent the pass's time: then the pass ends in progress. 0: none. The
    small_model profile sets 12."""
    mutants: int = Field(default=0, ge=0, le=500)
    """Mechanical candidate fixes tried at most, before the model's candidates: the exception
    the issue's test fails with added to an `except` clause it reached that catches others,
    then one token changed in a line of the located definitions that the issue's test ran
    (`<` to `<=`, `1` to `-1`, `and` to `or`, a `not` taken away, …), then a call changed to
    its dual (`iter` to `reversed`, `min` to `max`, …) or two operands swapped (`a - b` to
    `b - a`); each judged like a candidate by the issue's test and the tests of the changed
    file, and the first whose tests all pass becomes the task's work. No model call. 0:
    none. The small_model profile sets 60."""
    index_url: str | None = None
    """The package index pip uses in the verification's environment (pip's --index-url), for
    the setup and for what planner installs when pytest is missing. None: pip's own default."""
    find_links: list[str] = Field(default_factory=list)
    """Folders or pages of packages pip looks in first (pip's --find-links), in the same
    environment. Set without index_url, pip uses these alone (no index): a runner without
    network installs pytest from a folder of wheels."""

    @field_validator("command", "setup")
    @classmethod
    def _splits(cls, line: str | None) -> str | None:
        if line is None:
            return None
        if not command_words(line):
            raise ValueError("empty; leave it unset to detect the command")
        return line
