"""Test evidence of a pass, read back from the history (issue 23, docs/verification.md).

The verification phase (planner.verification) runs the repository's tests and records every
run as a `verification` entry; this module is the engine's side of that record, so every
other part of a pass — reflection, replanning, the quality judge, the pass result — reads the
same evidence without importing the phase:

    {"type": "verification", "stage": "baseline" | "task" | "tool" | "final",
     "command": "python3 -m pytest", "status": "passed" | "failed" | "timed_out" | "not_run",
     "exit_code": 1, "passed": 14, "failed": 1, "failing": ["tests/test_a.py::test_x"],
     "tail": "...", "reason": "...", "task_id": "task_1", "changed_tests": ["tests/test_a.py"],
     "issue_test": "tests/test_planner_issue_1.py"}

Only failures that the baseline did not have count against the pass (`new_failures`). The
issue's own test (planner.verification.reproduction.issue_test), written after the baseline,
is counted apart: its failures say the issue is not resolved yet, not that the change broke
something.
An attempt that failed (`verification_attempt`, planner.verification.fixes.attempts) takes its runs
with it: what the result says is the current attempt's. Without a runner for the tests, a run
may be the check that the changed Python files compile and import (command CHECKS).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field

VERIFICATION = "verification"
"""History entry of one test run."""
CHECKS = "the changed Python files, compiled and imported"
"""The `command` of a run that checked the change without tests
(planner.verification.suite.checks)."""
ISSUE_TEST = "issue_test"
"""History entry of the issue's own test (planner.verification.reproduction.issue_test)."""
REPRODUCTION = "issue_reproduction"
"""History entry: which tests of the repository that failed before the change reproduce the
issue, and why each failing test that reaches what the issue names does or does not
(planner.verification.reproduction.existing)."""
UNPROVEN = "verification_unproven"
"""History entry: the tests pass, but no test of the issue proves the fix."""
ATTEMPT = "verification_attempt"
"""History entry: an attempt at the issue ended (`failed`: the tree went back to the code
before the change for the next one; `won`: its tests pass; `restored`: none passed, and this
one, the closest, is the change again)."""
CANDIDATE = "candidate"
"""History entry: one candidate fix, what it was and what the tests said."""
CANDIDATES = "candidates"
"""History entry: where candidates are asked for (status located), then that they are over
(which one won, if any)."""
RunStatus = Literal["passed", "failed", "timed_out", "not_run"]
Stage = Literal["baseline", "issue", "task", "tool", "final"]
EntryModel = TypeVar("EntryModel", bound=BaseModel)


class TestRun(BaseModel):
    """One run of the verification command, as recorded."""

    __test__ = False  # not a pytest test class, whatever its name

    stage: Stage = "task"
    command: str = ""
    status: RunStatus = "not_run"
    exit_code: int | None = None
    passed: int | None = None
    failed: int | None = None
    failing: list[str] = Field(default_factory=list)
    """Names of failing tests, as parsed from the output ([] when none could be parsed)."""
    tail: str = ""
    """The end of the output (bounded): what the model is shown of a failing run."""
    reason: str = ""
    """Why the tests did not run, or what ended them (timeout)."""
    task_id: str = ""
    changed_tests: list[str] = Field(default_factory=list)
    """Test files that differ from the baseline commit when this run was made."""
    issue_test: str = ""
    """The issue's own test file, when it took part in this run."""
    added: list[str] = Field(default_factory=list)
    """Failing tests the change added: the baseline commit has no test of that name."""
    selected: list[str] = Field(default_factory=list)
    """The test files this run was limited to (those exercising the changed files); []: the
    whole command ran."""
    note: str = ""
    """What the output says about the run besides the tests (tests that need a service)."""
    unfixed: list[str] = Field(default_factory=list)
    """Tests that failed at the baseline and still fail, in test files that exercise the files
    the change touched: tests of the changed code the change did not make pass."""

    @property
    def issue_failures(self) -> list[str]:
        """Failing tests of the issue's own test file."""
        path = self.issue_test
        return [name for name in self.failing if path and name.split("::")[0] == path]

    @property
    def ran(self) -> bool:
        return self.status != "not_run"

    def counts(self) -> str:
        """`14 passed, 1 failed` (what is known of it)."""
        if self.passed is None and self.failed is None:
            return {"passed": "passed", "failed": "failed", "timed_out": "timed out"}.get(
                self.status, "not run"
            )
        return f"{self.passed or 0} passed, {self.failed or 0} failed"


def recorded_runs(entries: Iterable[dict[str, Any]]) -> list[TestRun]:
    """Every recorded run, oldest first; a damaged entry is skipped."""
    runs = (_read(TestRun, entry) for entry in entries if entry.get("type") == VERIFICATION)
    return [run for run in runs if run is not None]


def _read(model: type[EntryModel], entry: dict[str, Any]) -> EntryModel | None:
    """The fields of `model` the entry holds, read as one (the history's own keys, such as
    type and timestamp, are left out); None for a damaged entry."""
    try:
        return model.model_validate(
            {key: value for key, value in entry.items() if key in model.model_fields}
        )
    except ValueError:
        return None


def current_runs(entries: Iterable[dict[str, Any]]) -> list[TestRun]:
    """The runs of the current attempt at the issue, after the baseline (an attempt that
    failed took its changes, and so its runs, with it; the runs of the code before any change,
    the issue's test's first run included, still hold)."""
    kept: list[dict[str, Any]] = []
    ended: dict[Any, list[dict[str, Any]]] = {}
    for entry in entries:
        if entry.get("type") == ATTEMPT and entry.get("status") == "failed":
            ended[entry.get("attempt")] = kept
            kept = [e for e in kept if e.get("stage") in ("baseline", "issue")]
        elif entry.get("type") == ATTEMPT and entry.get("status") == "restored":
            kept = ended.get(entry.get("attempt"), kept)  # its tree is back: so are its runs
        elif entry.get("type") == VERIFICATION:
            kept.append(entry)
    return recorded_runs(kept)


def baseline_of(runs: Sequence[TestRun]) -> TestRun | None:
    """The latest baseline run (one per issue; a later one replaces a lost or damaged one)."""
    return next((run for run in reversed(runs) if run.stage == "baseline"), None)


def new_failures(baseline: TestRun | None, latest: TestRun) -> list[str]:
    """What fails in `latest` that did not fail at `baseline`; [] when nothing new fails."""
    if latest.status in ("passed", "not_run"):
        return []
    if latest.status == "timed_out":
        timed_out = baseline is not None and baseline.status == "timed_out"
        return [] if timed_out else ["(the test command timed out)"]
    before = set(baseline.failing) if baseline is not None else set()
    named = baseline is None or baseline.failing or baseline.status in ("passed", "not_run")
    if latest.failing and named:
        return sorted(set(latest.failing) - before - set(latest.issue_failures))
    return _unnamed_new_failures(baseline, latest)


def _unnamed_new_failures(baseline: TestRun | None, latest: TestRun) -> list[str]:
    """No names to compare: compare the outcome and the counts."""
    if baseline is None or baseline.status in ("passed", "not_run"):
        return [f"(the test command failed with exit code {latest.exit_code})"]
    more = (latest.failed or 0) - (baseline.failed or 0)
    return [f"({more} more failing tests than before the change)"] if more > 0 else []


class AttemptNote(BaseModel):
    """One attempt at the issue that ended: undone because its tests failed, won, or taken up
    again as the closest when none passed."""

    attempt: int
    status: Literal["failed", "won", "restored"]
    failing: list[str] = Field(default_factory=list)
    """The tests it left failing (those that passed before, and the issue's)."""


def attempt_notes(entries: Iterable[dict[str, Any]]) -> list[AttemptNote]:
    """The ended attempts since a person's last instruction; a damaged entry is skipped."""
    notes: list[AttemptNote] = []
    for entry in entries:
        if entry.get("type") == "human_input":
            notes = []
        elif entry.get("type") == ATTEMPT and (note := _read(AttemptNote, entry)) is not None:
            notes.append(note)
    return notes


class VerificationNote(BaseModel):
    """What the pass result says about the tests (PR body, tracking comment, job summary)."""

    command: str = ""
    baseline: TestRun | None = None
    latest: TestRun | None = None
    new_failures: list[str] = Field(default_factory=list)
    changed_tests: list[str] = Field(default_factory=list)
    issue_failures: list[str] = Field(default_factory=list)
    """Failing tests of the issue's own test: the issue is not resolved yet."""
    attempts: list[AttemptNote] = Field(default_factory=list)
    """How each attempt at the issue ended, when there was more than one."""
    unproven: str = ""
    """Why no test proves the fix although the tests pass (the issue's test was dropped)."""
    candidate: str = ""
    """The candidate fix this change began as (planner.verification.candidate_phase), in
    words: `candidate fix 4 of 6, for `path:Name`, after 3 taken back`."""
    unfixed: list[str] = Field(default_factory=list)
    """Tests of the changed code that failed before the change and still fail. A change that
    fixed two of cachetools' three failing LRU tests passed the issue's test and every test
    that passed before, and ended `completed` with the bug still there."""
    reproducing: list[str] = Field(default_factory=list)
    """The repository's tests that failed before the change the way the issue reports
    (planner.verification.reproduction.existing): the issue's reproduction besides, or
    instead of, planner's own test."""

    @property
    def reproduced(self) -> bool:
        """The tests that reproduced the issue ran after the change and none of them fails:
        they prove the fix as the issue's own test would."""
        latest = self.latest
        if not self.reproducing or latest is None or latest.stage in ("baseline", "issue"):
            return False
        if latest.status not in ("passed", "failed") or latest.reason or latest.command == CHECKS:
            return False
        files = {name.split("::")[0] for name in self.reproducing}
        if latest.selected and not files <= set(latest.selected):
            return False  # only the tests of the changed files ran, and not theirs
        if latest.status == "failed" and not latest.failing:
            return False  # no names to tell which failed
        return not set(self.reproducing) & set(latest.failing)

    @property
    def regressed(self) -> bool:
        """Tests that did not fail at the baseline fail now: the work is not finished."""
        return bool(self.new_failures)

    @property
    def added_failures(self) -> list[str]:
        """The new failures that are tests the change added."""
        added = set(self.latest.added) if self.latest is not None else set()
        return [name for name in self.new_failures if name in added]

    @property
    def broken(self) -> list[str]:
        """The new failures that are tests the baseline had: they passed before the change."""
        added = set(self.added_failures)
        return [name for name in self.new_failures if name not in added]

    def still_failing(self, tried: str = "") -> list[str]:
        """The new failures in words, for a stop reason: those that passed before the change,
        those it added; `tried` says what was done about them (`after 2 repair attempt(s)`)."""
        after = f" {tried}" if tried else ""
        parts = []
        if self.broken:
            parts.append(
                f"tests that passed before the change still fail{after}: " + listed(self.broken)
            )
        if self.added_failures:
            parts.append(f"tests the change added fail{after}: {listed(self.added_failures)}")
        return parts

    @property
    def unfinished(self) -> bool:
        """Tests that passed before fail, the issue's own test still fails, or tests of the
        changed code that failed before still fail."""
        return self.regressed or bool(self.issue_failures) or bool(self.unfixed)

    def line(self) -> str:
        """`Tests (`python3 -m pytest`): 14 passed, 0 failed — 1 failing before`."""
        latest = self.latest
        if latest is None or not latest.ran:
            reason = (latest.reason if latest else "") or "no test command was found"
            return f"Tests: not run — {_one_line(reason)}"
        if latest.command == CHECKS:
            return self._checks_line(latest)
        head = f"Tests (`{self.command}`): {latest.counts()}"
        before = self.baseline
        if before is not None and before is not latest and before.ran:
            head += f" — {_failing_before(before)}"
        if before is not None and not before.ran and latest.issue_test:
            head += " — the repository had no tests it could run before"
        if latest.stage == "baseline":
            head += " — before any change"
        if latest.selected:
            head += f" — only the tests of the changed files ({len(latest.selected)} files)"
        if latest.status == "timed_out":
            head += f" — {_one_line(latest.reason)}"
        notes = dict.fromkeys(run.note for run in (before, latest) if run is not None and run.note)
        return head + "".join(f" — {_one_line(note)}" for note in notes)

    def _checks_line(self, latest: TestRun) -> str:
        """No test ran: what was checked instead."""
        why = self.baseline.reason if self.baseline is not None else ""
        head = f"Tests: not run — {_one_line(why)}" if why else "Tests: not run"
        total = (latest.passed or 0) + (latest.failed or 0)
        if latest.failed:
            checked = f"{latest.failed} of {total} changed Python files fail to compile or import"
        elif total == 1:
            checked = "the changed Python file compiles and imports"
        else:
            checked = f"the {total} changed Python files compile and import"
        note = f" ({_one_line(latest.note)})" if latest.note else ""
        return f"{head} — checked instead: {checked}{note}"

    def details(self) -> list[str]:
        """Lines under the summary line: new failures and the test files the model changed."""
        lines = []
        if self.broken:
            lines.append(f"⚠️ Failing now but not before the change: {_names(self.broken)}")
        if self.added_failures:
            lines.append(f"⚠️ Tests the change added that fail: {_names(self.added_failures)}")
        if self.unfixed:
            lines.append(
                "❌ Tests of the changed code that failed before the change still fail: "
                f"{_names(self.unfixed)}"
            )
        lines += self._issue_test_lines()
        if self.reproduced:
            lines.append(
                "✅ Tests of the repository that failed before the change the way the issue "
                f"reports (its reproduction) pass now: {_names(self.reproducing)}."
            )
        if self.candidate:
            lines.append(f"This change began as {self.candidate}.")
        lines += self._attempt_lines()
        if self.changed_tests:
            shown = ", ".join(f"`{name}`" for name in self.changed_tests[:20])
            lines.append(f"Test files changed by planner (review them): {shown}")
        return lines

    def _issue_test_lines(self) -> list[str]:
        latest = self.latest
        if latest is None or not latest.issue_test or latest.status == "timed_out":
            return []
        if latest.stage == "issue" and not self.issue_failures:
            return []  # it passed on the old code: dropped, it tests nothing
        what = f"The issue's test (`{latest.issue_test}`, written from the issue before the change)"
        if not self.issue_failures:
            return [f"✅ {what} passes."]
        shown = ", ".join(f"`{name}`" for name in self.issue_failures[:10])
        return [f"❌ {what} fails: {shown}; it is not part of the pull request."]

    def _attempt_lines(self) -> list[str]:
        """Which attempt this change is, and what each attempt before it failed on."""
        failed = [note for note in self.attempts if note.status == "failed"]
        if not failed:
            return []
        restored = next((note for note in self.attempts if note.status == "restored"), None)
        if restored is not None:
            others = [note for note in failed if note.attempt != restored.attempt]
            return [
                f"No attempt passed its tests; this change is attempt {restored.attempt}, the "
                "closest. The others were undone: "
                + "; ".join(
                    f"attempt {note.attempt} failed {_names(note.failing) or 'its tests'}"
                    for note in others
                )
                + "."
            ]
        won = next((note for note in self.attempts if note.status == "won"), None)
        current = won.attempt if won else max(note.attempt for note in failed) + 1
        head = (
            f"Attempt {current} passed the tests and is this change"
            if won
            else f"This change is attempt {current}; its tests do not all pass"
        )
        earlier = "; ".join(
            f"attempt {note.attempt} failed {_names(note.failing) or 'its tests'}"
            for note in failed
        )
        return [f"{head}. Earlier attempts were undone: {earlier}."]

    def evidence(self) -> list[str]:
        """The line and details for a model's prompt, with a warning on changed tests."""
        latest = self.latest
        if latest is None or not latest.ran:
            # The reason (and how to fix it) is for people; the model only needs the fact.
            return ["Tests: none run."]
        lines = [self.line().replace("`", ""), *self.details()]
        if self.changed_tests:
            lines.append(
                "The work changed test files: check that it did not weaken or delete tests to "
                "make them pass."
            )
        return lines


def _names(names: list[str]) -> str:
    return listed([f"`{name}`" for name in names], shown=10)


def listed(names: list[str], shown: int = 5) -> str:
    """`a, b, c and 2 more`: names in a sentence, at most `shown` of them."""
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def _failing_before(baseline: TestRun) -> str:
    if baseline.status == "passed":
        return "all passed before the change"
    count = baseline.failed if baseline.failed is not None else len(baseline.failing)
    return f"{count} failing before" if count else "failing before the change"


def verification_note(entries: Iterable[dict[str, Any]]) -> VerificationNote | None:
    """The pass result's test line, from the history; None when verification never ran."""
    entries = list(entries)
    runs = current_runs(entries)
    if runs and runs[-1].stage == "issue" and _issue_test_dropped(entries):
        runs = runs[:-1]  # the code before the change, with a test that was then dropped
    if not runs:
        return None
    latest = runs[-1]
    baseline = baseline_of(runs)
    return VerificationNote(
        command=latest.command or (baseline.command if baseline else ""),
        baseline=baseline,
        latest=latest,
        new_failures=new_failures(baseline, latest) if latest.stage != "baseline" else [],
        changed_tests=latest.changed_tests,
        issue_failures=latest.issue_failures,
        attempts=attempt_notes(entries),
        candidate=_candidate(entries),
        unproven=_unproven(entries),
        unfixed=latest.unfixed if latest.stage != "baseline" else [],
        reproducing=_reproducing(entries),
    )


def _reproducing(entries: list[dict[str, Any]]) -> list[str]:
    """The tests the latest `issue_reproduction` entry found reproducing the issue."""
    latest = next((e for e in reversed(entries) if e.get("type") == REPRODUCTION), None)
    if (
        latest is None
        or latest.get("status") != "found"
        or not isinstance(latest.get("tests"), list)
    ):
        return []
    return [test for test in latest["tests"] if isinstance(test, str) and "::" in test]


def _candidate(entries: list[dict[str, Any]]) -> str:
    """The candidate fix that won since a person's last instruction, in words ("" when
    none did)."""
    tried: dict[int, dict[str, Any]] = {}
    won = ""
    for entry in entries:
        kind = entry.get("type")
        if kind == "human_input":
            tried, won = {}, ""
        elif kind == CANDIDATE and isinstance(entry.get("number"), int):
            tried.setdefault(entry["number"], entry)
        elif kind == CANDIDATES and entry.get("status") == "won":
            number = entry.get("won")
            if isinstance(number, int) and number in tried:
                won = _candidate_words(number, tried)
    return won


def _candidate_words(number: int, tried: dict[int, dict[str, Any]]) -> str:
    """`candidate fix 7 (a mechanical change: line 12: `<` → `<=`), for `m.py:f`, after 6
    taken back`."""
    entry = tried[number]
    spot = str(entry.get("spot") or "").replace("`", "")
    change = str(entry.get("change") or "")
    kind = f" (a mechanical change: {change})" if change else ""
    before = sum(1 for other in tried if other < number)
    taken_back = f", after {before} taken back" if before else ""
    return f"candidate fix {number}{kind}, for `{spot}`{taken_back}"


def _unproven(entries: list[dict[str, Any]]) -> str:
    """The reason of a `verification_unproven` entry that no later run or instruction
    answered ("" when there is none)."""
    reason = ""
    for entry in entries:
        if entry.get("type") == UNPROVEN:
            reason = str(entry.get("reason") or "")
        elif entry.get("type") in (VERIFICATION, "human_input"):
            reason = ""
    return reason


def _issue_test_dropped(entries: list[dict[str, Any]]) -> bool:
    """The issue's test was dropped after its run on the code before the change: that run's
    failures tested nothing (planner.verification.reproduction.issue_test)."""
    latest = next((e for e in reversed(entries) if e.get("type") == ISSUE_TEST), None)
    return latest is not None and latest.get("status") == "dropped"


def evidence_text(entries: Iterable[dict[str, Any]], tail_chars: int = 1_500) -> str:
    """The test evidence for a prompt (reflection, replanning, the quality judge): the
    command, the result against the baseline, the new failures, the test files the work
    changed, and the end of a failing run's output. "" when no test ever ran."""
    note = verification_note(entries)
    if note is None:
        return ""
    lines = note.evidence()
    latest = note.latest
    if latest is not None and latest.status in ("failed", "timed_out") and latest.tail:
        lines += ["End of the test output:", latest.tail[-tail_chars:]]
    return "\n".join(lines)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def is_test_file(path: str, patterns: Sequence[str]) -> bool:
    """`path` is a test file by verification.test_paths (fnmatch on the path or its name)."""
    name = path.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(path, p) or fnmatch.fnmatch(name, p) for p in patterns)
