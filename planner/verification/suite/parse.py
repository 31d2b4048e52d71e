"""Failing test names and counts from the output of the common test runners.

Each runner prints its own summary; every parser below reads one dialect and the results are
merged. Names are what the runner calls the test (`tests/test_calc.py::test_add`,
`test_add (test_calc.CalcTest.test_add)`, `TestAdd`, `tests::adds`): enough for the model to
find the test and for planner to compare with the baseline.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

MAX_NAMES = 200
"""Failing names kept from one run (a broken import can fail thousands)."""


@dataclass
class Parsed:
    passed: int | None = None
    failed: int | None = None
    failing: list[str] = field(default_factory=list)


PYTEST_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+?)(?: - .*)?$", re.MULTILINE)
PYTEST_SUMMARY = re.compile(
    r"^=* ?(\d+ (?:passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?)\b.*"
    r" in [\d.]+s\b.*?|no tests ran in [\d.]+s.*?) ?=*$",
    re.MULTILINE,
)
UNITTEST_FAILED = re.compile(r"^(?:FAIL|ERROR): (\S+ \([^)]*\))", re.MULTILINE)
UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in ", re.MULTILINE)
UNITTEST_FAILURES = re.compile(r"^FAILED \(([^)]*)\)", re.MULTILINE)
GO_FAILED = re.compile(r"^\s*--- FAIL: (\S+)", re.MULTILINE)
GO_PASSED = re.compile(r"^\s*--- PASS: (\S+)", re.MULTILINE)
CARGO_FAILED = re.compile(r"^test (\S+) \.\.\. FAILED$", re.MULTILINE)
CARGO_RESULT = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed", re.MULTILINE)
JEST_TOTALS = re.compile(r"^Tests:\s+(.*\btotal)$", re.MULTILINE)
JEST_FAILED = re.compile(r"^\s*● (.+?)\s*$", re.MULTILINE)
MOCHA_PASSING = re.compile(r"^\s*(\d+) passing\b", re.MULTILINE)
MOCHA_FAILING = re.compile(r"^\s*(\d+) failing\b", re.MULTILINE)
TAP_NOT_OK = re.compile(r"^\s*not ok \d+ - (.+?)\s*(?:#.*)?$", re.MULTILINE)
TAP_COUNT = re.compile(r"^# (pass|fail) (\d+)$", re.MULTILINE)
COUNT = re.compile(r"(\d+) (passed|failed|errors?)")


def _pytest(text: str) -> Parsed:
    summaries = PYTEST_SUMMARY.findall(text)
    if not summaries:
        return Parsed()
    counts = {word: int(n) for n, word in COUNT.findall(summaries[-1])}
    failed = counts.get("failed", 0) + counts.get("error", 0) + counts.get("errors", 0)
    return Parsed(counts.get("passed", 0), failed, PYTEST_FAILED.findall(text))


def _unittest(text: str) -> Parsed:
    ran = UNITTEST_RAN.findall(text)
    if not ran:
        return Parsed()
    summary = UNITTEST_FAILURES.findall(text)
    counts = dict(re.findall(r"(\w+)=(\d+)", summary[-1])) if summary else {}
    failed = int(counts.get("failures", 0)) + int(counts.get("errors", 0))
    skipped = int(counts.get("skipped", 0)) + int(counts.get("expected failures", 0))
    passed = max(int(ran[-1]) - failed - skipped, 0)
    return Parsed(passed, failed, UNITTEST_FAILED.findall(text))


def _go(text: str) -> Parsed:
    failing = GO_FAILED.findall(text)
    passing = GO_PASSED.findall(text)
    if not failing and not passing:
        return Parsed()
    return Parsed(len(passing) if passing else None, len(failing), failing)


def _cargo(text: str) -> Parsed:
    results = CARGO_RESULT.findall(text)
    if not results:
        return Parsed()
    passed = sum(int(p) for p, _ in results)
    failed = sum(int(f) for _, f in results)
    return Parsed(passed, failed, CARGO_FAILED.findall(text))


def _jest(text: str) -> Parsed:
    totals = JEST_TOTALS.findall(text)
    if not totals:
        return Parsed()
    counts = {word: int(n) for n, word in COUNT.findall(totals[-1])}
    names = [name for name in JEST_FAILED.findall(text) if "›" in name or " " in name]
    return Parsed(counts.get("passed", 0), counts.get("failed", 0), names)


def _mocha(text: str) -> Parsed:
    passing, failing = MOCHA_PASSING.findall(text), MOCHA_FAILING.findall(text)
    if not passing and not failing:
        return Parsed()
    return Parsed(int(passing[-1]) if passing else 0, int(failing[-1]) if failing else 0)


def _tap(text: str) -> Parsed:
    counts = dict(TAP_COUNT.findall(text))
    names = TAP_NOT_OK.findall(text)
    if not counts and not names:
        return Parsed()
    passed = int(counts["pass"]) if "pass" in counts else None
    failed = int(counts["fail"]) if "fail" in counts else len(names)
    return Parsed(passed, failed, names)


PARSERS: tuple[Callable[[str], Parsed], ...] = (
    _pytest,
    _unittest,
    _cargo,
    _jest,
    _go,
    _tap,
    _mocha,
)


def parse_output(text: str) -> Parsed:
    """Counts from the first runner whose summary is found; failing names from every runner
    that printed some (a Makefile may run two)."""
    merged = Parsed()
    for parser in PARSERS:
        found = parser(text)
        if merged.passed is None and merged.failed is None:
            merged.passed, merged.failed = found.passed, found.failed
        merged.failing += [name for name in found.failing if name not in merged.failing]
    merged.failing = merged.failing[:MAX_NAMES]
    return merged


SERVICE_ERRORS = re.compile(
    r"(ConnectionRefusedError[^\n]{0,80}|Connection refused|Name or service not known|"
    r"Temporary failure in name resolution|nodename nor servname provided|Network is "
    r"unreachable|No route to host|Failed to establish a new connection[^\n]{0,80}|getaddrinfo "
    r"failed|could not connect to server[^\n]{0,80}|Can't connect to \w+ server[^\n]{0,80})"
)


def service_problem(text: str) -> str:
    """What says that failing tests need a service or the network that is not there ("" when
    nothing does): a database, a server started elsewhere, a download. Their failures are the
    runner's, not the change's; the line says so."""
    found = SERVICE_ERRORS.search(text)
    if found is None:
        return ""
    return (
        "some tests need a service or the network, which the tests cannot reach here "
        f"(`{found.group(1).strip()[:120]}`)"
    )
