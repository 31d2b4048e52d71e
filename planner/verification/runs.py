"""The tests of a pass: the setup and the baseline at its start, then what runs at each stage
(the tests of the changed files first, the whole command when they pass, the issue's test with
them), each run recorded in the history as a `verification` entry as it finishes.

The verification phase (planner.verification.phase) decides when to run and what a result
means for the pass; this is how a run is made and recorded, for it and the candidate fixes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from planner.core.interfaces import ToolCall, TreeCheck
from planner.engine.context import PassContext
from planner.outcome.evidence import (
    CHECKS,
    ISSUE_TEST,
    REPRODUCTION,
    VERIFICATION,
    Stage,
    TestRun,
    baseline_of,
    current_runs,
    is_test_file,
    recorded_runs,
)
from planner.verification.fixes.attempts import Start, relative_folders, snapshot, start_of
from planner.verification.fixes.trace import Trace, read_trace, traced_argv
from planner.verification.fixes.undo import own_change, put_back
from planner.verification.reproduction.existing import (
    MAX_CHECKED,
    Exercising,
    bounded_tail,
    exercising,
    reproduces,
)
from planner.verification.reproduction.issue_test import IssueTest, as_unittest, placed
from planner.verification.reproduction.records import (
    active_test,
    failing_before,
    kept_test,
    reproducing_tests,
    reproduction,
    reproduction_before,
    stated,
)
from planner.verification.suite.changes import (
    added_tests,
    changed_files,
    changed_test_files,
    files_using,
    fingerprint,
    head_commit,
    removed_names,
)
from planner.verification.suite.checks import check_changed, with_checks
from planner.verification.suite.detect import NO_TESTS, PYTHON, Verification
from planner.verification.suite.runner import TestRunner, merged
from planner.verification.suite.selection import (
    MAX_SELECTED,
    exercising_tests,
    pytest_on,
    tracked_tests,
)

SETUP = "verification_setup"
SOURCE = "verification"
AGAIN_ALONE = ["--show-capture=no"]
"""A failing test run again alone shows its failure, not what it printed: the output's end,
which prompts show, is where pytest says why."""
WHOLE_TOO_SLOW = (
    "only the tests of the changed files ran: the whole suite took longer than "
    "verification.timeout_seconds before the change, so it runs whole only at the end"
)


class PassTests:
    """The repository's tests (and the issue's test) as one pass runs and records them."""

    def __init__(
        self, runner: TestRunner, tree: TreeCheck | None = None, excluded: tuple[Path, ...] = ()
    ) -> None:
        self.workspace = runner.workspace
        self.settings = runner.config.verification
        self.runner = runner
        self.tree = tree
        """The approval gate's judged tree: a reset to the start is planner's own change."""
        self.excluded = relative_folders(runner.workspace, excluded)
        self.found = Verification()
        self.usable = False
        """A command was found and its program is installed: the tests can run this pass."""
        self.pytest = False
        """pytest runs here (installed, or provisioned): the issue's test can run."""
        self.checked = ""
        """Fingerprint of the working tree the latest run saw."""

    # -- pass start: setup and baseline ------------------------------------------------------

    def record_skip(self, run: PassContext, reason: str) -> None:
        """Say once why no test runs (again only when something else was said since)."""
        runs = recorded_runs(run.store.entries())
        if runs and runs[-1].status == "not_run" and runs[-1].reason == reason:
            return
        run.store.append(VERIFICATION, stage="baseline", status="not_run", reason=reason)

    def set_up(self, run: PassContext) -> str:
        """Run the setup commands, then install pytest where the tests or the issue's test
        need it and it is missing; '' when they succeeded, else what failed."""
        results = self.runner.set_up(self.found) if self.found.setup else []
        if self._needs_pytest():
            provisioned = self.runner.provision(self.found)
            results += provisioned
            self.pytest = not provisioned or self.runner.imports("pytest")
        layout = self.runner.use_source_layout(self.found)
        results += [layout] if layout is not None else []
        if not results:
            return ""
        problems = [f"{r.command}: {r.detail}" for r in results if not r.ok]
        run.store.append(
            SETUP, commands=[r.command for r in results], ok=not problems, problems=problems
        )
        return "; ".join(problems)

    def _needs_pytest(self) -> bool:
        """The repository's tests run with pytest, or the issue's test will (any Python
        repository, verification.issue_test)."""
        issue_test = self.found.python and self.settings.issue_test
        return self.found.runner == "pytest" or issue_test

    def take_baseline(self, run: PassContext, setup_problem: str) -> None:
        """The whole command on the tree before any change, once per issue."""
        earlier = self.baseline(run)
        if earlier is not None and earlier.ran and earlier.command == self.found.display:
            self.usable = True  # one baseline per issue: it describes the tree before any change
            return
        head = self.head()
        # Test files already changed or new before planner acts (a local run on a checkout
        # with work in progress): their tests are the maintainer's, never "added by the change".
        dirty = changed_test_files(self.workspace, head, self.settings.test_paths)
        start = Start(head, {}, self.excluded)
        result = self.record(
            run,
            "baseline",
            "",
            base_commit=head,
            dirty_tests=dirty,
            dirty=snapshot(self.workspace, start),
        )
        if setup_problem and result.status != "passed":
            run.store.append(SETUP, ok=False, problems=[f"the tests ran after: {setup_problem}"])
        self.usable = result.ran

    def find_reproduction(self, run: PassContext) -> None:
        """Once per issue, after the baseline on the code before the change: its failing
        tests that reach what the issue names, run again alone (at most MAX_CHECKED), and of
        those the ones that fail the way the issue says are the issue's reproduction
        (planner.verification.reproduction.existing); the others stay failing before, not
        ours. The decision, test by test, is recorded."""
        baseline = self.baseline(run)
        if (
            baseline is None
            or not baseline.failing
            or not self.usable
            or self.found.runner != "pytest"
            or reproduction(run.store.entries()) is not None
            or self.work_begun(run)
        ):
            return
        text = stated(run.issue)
        found, others = exercising(self.workspace, baseline.failing, text)
        checked = [self._reproduces(test, text) for test in found[:MAX_CHECKED]]
        used = [item["test"] for item in checked if item["used"]]
        run.store.append(
            REPRODUCTION,
            status="found" if used else "none",
            tests=used,
            checked=checked,
            not_reaching=len(others),
        )
        if used:
            run.progress(f"reproduced by tests failing before the change: {', '.join(used)}")

    def _reproduces(self, test: Exercising, issue_text: str) -> dict[str, Any]:
        """`test` run again alone, judged by what its failure shows."""
        argv = [*pytest_on(self.found.command, [test.test], self.workspace), *AGAIN_ALONE]
        result = self.runner.run_argv(argv, "a test failing before the change")
        item: dict[str, Any] = {"test": test.test, "reaches": list(test.names)}
        if result.status != "failed" or test.test not in result.failing:
            why = result.reason or f"run again alone, it {result.status.replace('_', ' ')}"
            return {**item, "used": False, "why": why}
        used, why = reproduces(result.tail, issue_text, self.workspace)
        if not used:
            return {**item, "used": False, "why": why}
        return {
            **item,
            "used": True,
            "why": why,
            "source": test.source,
            "tail": bounded_tail(result.tail),
        }

    def record_start(self, run: PassContext) -> None:
        """No test to run before the change: the baseline records only where the change
        starts from (the commit and the work in progress), once per issue."""
        if baseline_entry(run.store.entries()).get("base_commit"):
            return
        head = self.head()
        run.store.append(
            VERIFICATION,
            stage="baseline",
            status="not_run",
            reason=NO_TESTS,
            base_commit=head,
            dirty_tests=[],
            dirty=snapshot(self.workspace, Start(head, {}, self.excluded)),
            fingerprint=fingerprint(self.workspace),
        )

    def head(self) -> str:
        return head_commit(self.workspace)

    # -- runs --------------------------------------------------------------------------------

    def record(self, run: PassContext, stage: Stage, task_id: str, **extra: Any) -> TestRun:
        """Run the tests due at `stage` and record the run; a passing issue's test is kept."""
        test = active_test(run.store.entries()) if stage != "baseline" else None
        result = self._tests(run, stage, test)
        result = result.model_copy(
            update={
                "stage": stage,
                "task_id": task_id,
                "changed_tests": self._changed_tests(run),
                "issue_test": test.path if test is not None and result.ran else "",
                "added": self._added(run, stage, result.failing),
            }
        )
        result = result.model_copy(update={"unfixed": self._unfixed(run, result)})
        tree = fingerprint(self.workspace)  # as the run left it (caches it wrote included)
        run.store.append(VERIFICATION, **result.model_dump(), fingerprint=tree, **extra)
        self.checked = tree
        run.progress(f"tests ({stage}): {result.counts()}")
        if test is not None and stage != "issue" and passes(result):
            self._keep_issue_test(run, test, task_id)
        return result

    def _tests(self, run: PassContext, stage: Stage, test: IssueTest | None) -> TestRun:
        """What runs at `stage`: the baseline and the final run use the whole command; after a
        task (or for run_tests) the tests of the changed files run first, and the whole
        command only when they pass (never when it timed out at the baseline); the issue's
        test runs with them."""
        if stage == "baseline":
            return self.runner.run_tests(self.found)
        if stage == "issue":
            return self._issue_run(test)
        if not self.usable:
            return self._without_tests(run, test)
        selected = self._selection(run) if stage in ("task", "tool") else []
        if selected:
            first = self._selected_run(selected, test)
            if first.status != "passed" or self._whole_too_slow(run):
                return first
        elif stage in ("task", "tool") and self._whole_too_slow(run):
            if test is None:
                return TestRun(status="not_run", reason=WHOLE_TOO_SLOW)
            return self._issue_run(test).model_copy(update={"reason": WHOLE_TOO_SLOW})
        whole = self.runner.run_tests(self.found)
        return merged(whole, self._issue_run(test) if test is not None else None)

    def issue_run(self, test: IssueTest) -> TestRun:
        """The issue's test alone, run now (documents.py: the command the issue shows)."""
        return self._issue_run(test)

    def _issue_run(
        self, test: IssueTest | None, kept: str = "", reproducing: Sequence[str] = ()
    ) -> TestRun:
        """The issue's test alone, placed in the tree for the run; without a repository's
        tests, once it is kept, the file it was written to; with `reproducing`, the
        repository's tests that reproduce the issue too (or alone, without a test of
        planner's)."""
        kept = kept if kept and (self.workspace / kept).is_file() else ""
        if test is None and not kept and not reproducing:
            return TestRun(reason="no test of the issue to run")
        path = [test.path] if test is not None else [kept] if kept else []
        argv = pytest_on(self.found.command, [*path, *reproducing], self.workspace)
        return self.runner.run_argv(argv, "the issue's test", partial(placed, self.workspace, test))

    def _without_tests(self, run: PassContext, test: IssueTest | None) -> TestRun:
        """No runner runs the repository's tests: the issue's test (once kept, its file) and
        the check that the changed Python files compile and import."""
        kept = kept_test(run.store.entries())
        issue = self._issue_run(test, kept) if self.pytest and (test or kept) else None
        checks = None
        if self.found.python:
            checks = check_changed(self.workspace, self.changed_code(run), self._program)
        if issue is None or not issue.ran:
            baseline = self.baseline(run) or TestRun()
            return checks or issue or baseline.model_copy(update={"stage": "task"})
        return with_checks(issue, checks)

    def _program(self, argv: list[str]) -> tuple[str, str]:
        return self.runner.run_program(argv, "the import of the changed modules")

    def checks_apply(self) -> bool:
        """The repository's tests cannot run, but a change to its Python files can be checked."""
        return self.found.python and not self.usable and self.settings.enabled != "off"

    def checks_due(self, run: PassContext) -> bool:
        """The check applies, and Python files changed since the start (or were checked)."""
        if not self.checks_apply():
            return False
        runs = current_runs(run.store.entries())
        checked = bool(runs) and runs[-1].command == CHECKS
        return checked or any(path.endswith(".py") for path in self.changed_code(run))

    def can_run(self, entries: list[dict[str, Any]]) -> bool:
        """The repository's tests run here, or (without them) the issue's test does."""
        if self.usable:
            return True
        return self.pytest and (active_test(entries) is not None or bool(kept_test(entries)))

    def _selected_run(self, selected: list[str], test: IssueTest | None) -> TestRun:
        files = [*selected, *([test.path] if test is not None else [])]
        argv = pytest_on(self.found.command, files, self.workspace)
        around = partial(placed, self.workspace, test)
        result = self.runner.run_argv(argv, self.found.source, around)
        return result.model_copy(update={"command": self.found.display, "selected": selected})

    def _selection(self, run: PassContext) -> list[str]:
        """The repository's test files that exercise what changed since the baseline, when
        its tests run with pytest ([] otherwise, or when there are too many)."""
        if self.found.runner != "pytest":
            return []
        patterns = self.settings.test_paths
        changed = changed_files(self.workspace, self.base(run), lambda path: True)
        test_files = tracked_tests(self.workspace, patterns)
        chosen = exercising_tests(
            self.workspace, changed, test_files, lambda p: is_test_file(p, patterns)
        )
        return chosen if len(chosen) <= MAX_SELECTED else []

    def _whole_too_slow(self, run: PassContext) -> bool:
        baseline = self.baseline(run)
        return baseline is not None and baseline.status == "timed_out"

    # -- for the candidate fixes -------------------------------------------------------------

    def trial(self, run: PassContext, path: str, text: str, original: str) -> list[TestRun]:
        """`path` written as `text` for the issue's test and, when that passes, the tests of
        what changed (selected first, as after a task); then `original` again. The runs, in
        order; nothing is recorded: the caller says what they meant."""
        test = active_test(run.store.entries())
        reproducing = reproducing_tests(run.store.entries())
        target = self.workspace / path
        if target.is_symlink() or not target.is_file():
            return [TestRun(reason=f"{path} is not a plain file")]  # a link is never written
        executable = os.access(target, os.X_OK)
        with own_change(self.tree):
            put_back(self.workspace, path, text.encode(), executable)
        try:
            runs = [self._issue_run(test, reproducing=reproducing)]
            # a candidate whose issue run did not pass is judged already (_judged in
            # candidate_phase): the changed file's tests, slower, run only after one that passed
            if runs[0].status == "passed" and (self.usable or self.checks_apply()):
                runs.append(self._tests(run, "task", test))
            return runs
        finally:
            with own_change(self.tree):
                put_back(self.workspace, path, original.encode(), executable)
            self.checked = ""

    def baseline(self, run: PassContext) -> TestRun | None:
        """The run of the tests before the change."""
        return baseline_of(recorded_runs(run.store.entries()))

    def issue_failure(self, run: PassContext) -> tuple[str, str] | None:
        """Before any change was tested: the active issue test's content and the output of its
        failing run on the code as it is (None: no such test, or it did not fail)."""
        failing = failing_before(run.store.entries())
        return (failing[0].content, str(failing[1].get("tail") or "")) if failing else None

    def reproduction_failure(self, run: PassContext) -> tuple[str, str] | None:
        """Before any change was tested: the source of the repository's tests that reproduce
        the issue and their failing output (None: none do, or a change was tested)."""
        return reproduction_before(run.store.entries())

    def issue_trace(self, run: PassContext) -> Trace | None:
        """What the active issue test (with the repository's tests that reproduce the issue,
        or those alone) runs on the code as it is, and what it returns there
        (planner.verification.fixes.trace); None when it cannot be profiled."""
        test = active_test(run.store.entries())
        files = [
            *([test.path] if test is not None else []),
            *reproducing_tests(run.store.entries()),
        ]
        if not files:
            return None
        argv = traced_argv(pytest_on(self.found.command, files, self.workspace), PYTHON)
        if argv is None:
            return None
        around = partial(placed, self.workspace, test)
        output, problem = self.runner.run_program(argv, "the issue's test, profiled", around)
        return None if problem else read_trace(output)

    def work_begun(self, run: PassContext) -> bool:
        """An action was taken, or files differ from where the change started (a later
        pass of the issue)."""
        if any(entry.get("type") == "action" for entry in run.store.entries()):
            return True
        start = self.start(run)
        changed = start.changed(self.workspace) if start.base else []
        return any(path not in start.dirty for path in changed)

    # -- the issue's test into the change ----------------------------------------------------

    def _keep_issue_test(self, run: PassContext, test: IssueTest, task_id: str) -> None:
        """It passes: it goes into the pull request as the issue's regression test, written
        like any file (the approval gate and the path rules judge it; the action is recorded).
        Where unittest runs the repository's tests it is written as a TestCase, so their own
        command runs it."""
        content = test.content
        if self.found.runner == "unittest":
            name = "TestIssue" + "".join(c for c in str(run.issue.number) if c.isalnum())
            content = as_unittest(content, name) or content
        arguments = {"path": test.path, "content": content}
        call = ToolCall(id=f"{ISSUE_TEST}_{test.path}", name="write_file", arguments=arguments)
        result = run.act(task_id or SOURCE, call)
        status = "kept" if result.ok else "not_kept"
        run.store.append(ISSUE_TEST, status=status, path=test.path, reason=result.error or "")
        if content == test.content:
            self.checked = fingerprint(self.workspace)  # written as it ran: nothing to run again

    # -- what changed since the baseline -----------------------------------------------------

    def _unfixed(self, run: PassContext, result: TestRun) -> list[str]:
        """Tests that failed at the baseline and still fail, in test files that import what
        the change touched (pytest's `file::name` ids; the issue's own test aside)."""
        if result.stage in ("baseline", "issue"):
            return []
        baseline = self.baseline(run)
        before = set(baseline.failing) if baseline is not None else set()
        issue = set(result.issue_failures)
        still = [n for n in result.failing if n in before and n not in issue and "::" in n]
        if not still:
            return []
        files = sorted({name.split("::")[0] for name in still})
        patterns = self.settings.test_paths
        changed = exercising_tests(
            self.workspace, self.changed_code(run), files, lambda p: is_test_file(p, patterns)
        )
        # a test that reproduces the issue is unfixed while it fails, whatever it imports
        reproducing = set(reproducing_tests(run.store.entries()))
        return [n for n in still if n.split("::")[0] in changed or n in reproducing]

    def _changed_tests(self, run: PassContext) -> list[str]:
        return changed_test_files(self.workspace, self.base(run), self.settings.test_paths)

    def changed_code(self, run: PassContext) -> list[str]:
        """Files other than tests changed since the baseline: what broke the tests."""
        patterns, base = self.settings.test_paths, self.base(run)
        return changed_files(self.workspace, base, lambda p: not is_test_file(p, patterns))

    def still_used(self, run: PassContext, changed: list[str]) -> dict[str, list[str]]:
        """Functions and classes the change removed, each with the files that still use it."""
        return files_using(self.workspace, removed_names(self.workspace, self.base(run), changed))

    def _added(self, run: PassContext, stage: Stage, failing: list[str]) -> list[str]:
        """Of the failing tests, those the change added (none at the baseline: no change)."""
        if stage == "baseline":
            return []
        baseline = baseline_entry(run.store.entries())
        dirty = set(baseline.get("dirty_tests") or [])
        added = added_tests(self.workspace, str(baseline.get("base_commit") or ""), failing)
        return [name for name in added if name.split("::")[0] not in dirty]

    def tree_changed(self, run: PassContext) -> bool:
        """The working tree differs from what the latest run saw."""
        if not self.checked:
            latest = [e for e in run.store.entries() if e.get("type") == VERIFICATION]
            self.checked = str(latest[-1].get("fingerprint") or "") if latest else ""
        return fingerprint(self.workspace) != self.checked

    def start(self, run: PassContext) -> Start:
        """Where the change (and every attempt) starts from."""
        return start_of(baseline_entry(run.store.entries()), self.excluded)

    def base(self, run: PassContext) -> str:
        """The commit the baseline ran on ("" before a baseline)."""
        return str(baseline_entry(run.store.entries()).get("base_commit") or "")


def passes(result: TestRun) -> bool:
    """The issue's test ran with it and none of its tests failed."""
    if result.status == "passed":
        return True
    return result.status == "failed" and bool(result.failing) and not result.issue_failures


def partial_run(entries: list[dict[str, Any]]) -> bool:
    """The latest run was not the whole command (the tests of the changed files only)."""
    runs = current_runs(entries)
    latest = runs[-1] if runs else None
    return latest is not None and (bool(latest.selected) or latest.reason == WHOLE_TOO_SLOW)


def baseline_entry(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The latest baseline's history entry ({} before a baseline)."""
    return next(
        (
            entry
            for entry in reversed(entries)
            if entry.get("type") == VERIFICATION and entry.get("stage") == "baseline"
        ),
        {},
    )
