"""Verification phase: the repository's tests are part of the pass (issue 23, docs/verification.md).

    pass start ─ start(): detect the command, run the setup (network, no tokens), install
                 pytest where it is missing, and the baseline once per issue (which tests fail
                 already), recorded in the history
    planning ─── addendum("planning"): the command, the `run_tests` tool, the baseline failures
                 after_plan(): the issue's own test, once per issue (issue_test.py)
    each task ── tools(): run_tests, answered in before_action() with the parsed result
                 after_task(): the tests of the changed files, then (when they pass) the whole
                 command and the issue's test
                 addendum("execute"): tests that passed at the baseline and fail now, with the
                 end of the output, are the next task's input
    no task left ─ before_completion(): a last whole run; tests failing that passed at the
                 baseline, or the issue's test failing, add a repair task (a saved plan
                 revision) up to verification.max_repair_attempts; then another attempt from
                 the start (attempts.py) up to verification.attempts; then the pass ends
                 needs_human

Every run is a `verification` entry (planner.outcome.evidence) recorded as it finishes, so
a later pass reuses the baseline and the pass result, reflection and the judges read the same
evidence. Only failures the baseline did not have count against the pass.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from planner.config import PlannerConfig
from planner.core.interfaces import ToolCall, ToolResult, ToolSpec, TreeCheck
from planner.core.tool_names import WRITE_TOOLS, path_argument
from planner.engine.context import PassContext
from planner.engine.phase import Phase, Request
from planner.model.conversation import user
from planner.outcome.evidence import (
    ATTEMPT,
    CHECKS,
    ISSUE_TEST,
    UNPROVEN,
    VERIFICATION,
    Stage,
    TestRun,
    VerificationNote,
    baseline_of,
    current_runs,
    evidence_text,
    is_test_file,
    new_failures,
    recorded_runs,
    verification_note,
)
from planner.outcome.flow import PlanChanged, StopPass
from planner.outcome.result import PassStatus
from planner.text.issue import IssueContext, prompt_view
from planner.text.prompts import render
from planner.tools.isolation import SandboxUser
from planner.verification.fixes.attempts import (
    ResetImpossible,
    Start,
    attempt_count,
    attempt_record,
    failed_attempts,
    rank,
    reset,
    snapshot,
    take_up,
)
from planner.verification.fixes.repair_task import (
    failing_names,
    repair_goal,
    repair_task,
    unresolved_reason,
    with_task,
)
from planner.verification.fixes.trace import Trace, read_trace, traced_argv
from planner.verification.fixes.undo import RepairUndo, put_back
from planner.verification.reproduction.contrary import without_contrary_checks
from planner.verification.reproduction.issue_test import (
    IssueTest,
    as_unittest,
    collection_problem,
    example_test,
    failing_only,
    issue_test_from_reply,
    issue_test_path,
    placed,
)
from planner.verification.reproduction.stated_calls import only_reported, with_stated_calls
from planner.verification.reproduction.transcript import transcript_test
from planner.verification.suite.changes import (
    added_tests,
    changed_files,
    changed_test_files,
    diff_since,
    files_using,
    fingerprint,
    head_commit,
    removed_names,
)
from planner.verification.suite.checks import check_changed
from planner.verification.suite.detect import NO_TESTS, PYTHON, Verification, resolve
from planner.verification.suite.runner import TestRunner, Watch, merged
from planner.verification.suite.selection import (
    MAX_SELECTED,
    exercising_tests,
    pytest_on,
    tracked_tests,
)

REPRODUCTION_LINES = 60
"""Lines of the issue's test shown in a task's prompt before the first change."""
REPRODUCTION_TAIL = 1_200
"""Characters of its failing output shown with it."""
RUN_TESTS = ToolSpec(
    name="run_tests",
    description=(
        "Run the repository's tests and get the result: passed and failed counts, the failing "
        "tests (those failing before any change are marked) and the end of the output."
    ),
    parameters={"type": "object", "properties": {}},
)
SETUP = "verification_setup"
REPAIR = "verification_repair"
UNRESOLVED = "verification_unresolved"
UNDONE = "verification_repair_undone"
ATTEMPT_NOT_MADE = "verification_attempt_not_made"
SOURCE = "verification"
NAMES_SHOWN = 20
CONTRARY = "its checks expected the result the issue reports as wrong"
ONLY_REPORTED = (
    "only its checks that a result the issue reports is gone fail on the code before the "
    "change: they do not show the right result"
)
CHANGE_LINES = 80
"""Lines of the change's diff shown with failing tests."""
ISSUE_TEST_IS_PLANNERS = (
    "is planner's test of the issue, written from it before the change, and stays as it is: "
    "change the code so that it passes"
)
FIX_UNPROVEN = "the fix is unproven"
WHOLE_TOO_SLOW = (
    "only the tests of the changed files ran: the whole suite took longer than "
    "verification.timeout_seconds before the change, so it runs whole only at the end"
)


class VerificationPhase(Phase):
    name = "verification"

    def __init__(
        self,
        workspace: Path,
        config: PlannerConfig,
        sandbox: SandboxUser | None = None,
        watch: Watch | None = None,
        tree: TreeCheck | None = None,
        excluded: tuple[Path, ...] = (),
    ) -> None:
        self.workspace = workspace
        self.settings = config.verification
        self.runner = TestRunner(workspace, config, sandbox, watch)
        self.tree = tree
        """The approval gate's judged tree: a reset to the start is planner's own change."""
        self.excluded = _relative_folders(workspace, excluded)
        self.found = Verification()
        self.usable = False
        """A command was found and its program is installed: the tests can run this pass."""
        self.pytest = False
        """pytest runs here (installed, or provisioned): the issue's test can run."""
        self.checked = ""
        """Fingerprint of the working tree the latest run saw."""
        self.repair = RepairUndo(workspace)

    # -- pass start: setup and baseline ------------------------------------------------------

    def start(self, run: PassContext) -> None:
        if self.settings.enabled == "off":
            self._record_skip(run, "verification.enabled is off")
            return
        self.found = resolve(self.workspace, self.settings)
        if not self.found.command:
            if self.settings.enabled == "on" or not self.found.python:
                self._record_skip(run, NO_TESTS)
            if self.settings.enabled == "on":
                raise StopPass("failed", f"verification.enabled is on, but: {NO_TESTS}")
            if not self.found.python:
                return
            # A Python project without tests: the issue's test, and checks of what changed
            self._record_start(run, head_commit(self.workspace))
        failed = attempt_count(run.store.entries())
        if failed:
            run.new_attempt(failed + 1)  # a later pass goes on sampling as its attempt does
        setup_problem = self._set_up(run)
        if self.found.command:
            self._baseline(run, setup_problem)
        if not run.config.planning.enabled:
            self._write_issue_test(run)  # no plan will come: the issue is all there is

    def _record_skip(self, run: PassContext, reason: str) -> None:
        """Say once why no test runs (again only when something else was said since)."""
        runs = recorded_runs(run.store.entries())
        if runs and runs[-1].status == "not_run" and runs[-1].reason == reason:
            return
        run.store.append(VERIFICATION, stage="baseline", status="not_run", reason=reason)

    def _set_up(self, run: PassContext) -> str:
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

    def _baseline(self, run: PassContext, setup_problem: str) -> None:
        earlier = baseline_of(recorded_runs(run.store.entries()))
        if earlier is not None and earlier.ran and earlier.command == self.found.display:
            self.usable = True  # one baseline per issue: it describes the tree before any change
            return
        head = head_commit(self.workspace)
        # Test files already changed or new before planner acts (a local run on a checkout
        # with work in progress): their tests are the maintainer's, never "added by the change".
        dirty = changed_test_files(self.workspace, head, self.settings.test_paths)
        start = Start(head, {}, self.excluded)
        result = self._run(
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

    def _record_start(self, run: PassContext, head: str) -> None:
        """No test to run before the change: the baseline records only where the change
        starts from (the commit and the work in progress), once per issue."""
        if _baseline_entry(run).get("base_commit"):
            return
        start = Start(head, {}, self.excluded)
        run.store.append(
            VERIFICATION,
            stage="baseline",
            status="not_run",
            reason=NO_TESTS,
            base_commit=head,
            dirty_tests=[],
            dirty=snapshot(self.workspace, start),
            fingerprint=fingerprint(self.workspace),
        )

    # -- runs --------------------------------------------------------------------------------

    def _run(self, run: PassContext, stage: Stage, task_id: str, **extra: Any) -> TestRun:
        test = _active_test(run.store.entries()) if stage != "baseline" else None
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
        if test is not None and stage != "issue" and _passes(result):
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
                return _not_rerun()
            return self._issue_run(test).model_copy(update={"reason": WHOLE_TOO_SLOW})
        whole = self.runner.run_tests(self.found)
        return merged(whole, self._issue_run(test) if test is not None else None)

    def _issue_run(self, test: IssueTest | None, kept: str = "") -> TestRun:
        """The issue's test alone, placed in the tree for the run; without a repository's
        tests, once it is kept, the file it was written to."""
        if test is None and not (kept and (self.workspace / kept).is_file()):
            return TestRun(reason="no test of the issue to run")
        path = test.path if test is not None else kept
        argv = pytest_on(self.found.command, [path], self.workspace)
        return self.runner.run_argv(argv, "the issue's test", partial(placed, self.workspace, test))

    def _without_tests(self, run: PassContext, test: IssueTest | None) -> TestRun:
        """No runner runs the repository's tests: the issue's test (once kept, its file) and
        the check that the changed Python files compile and import."""
        kept = _kept_test(run.store.entries())
        issue = self._issue_run(test, kept) if self.pytest and (test or kept) else None
        checks = None
        if self.found.python:
            checks = check_changed(self.workspace, self._changed_code(run), self._program)
        if issue is None or not issue.ran:
            baseline = baseline_of(recorded_runs(run.store.entries())) or TestRun()
            return checks or issue or baseline.model_copy(update={"stage": "task"})
        return _with_checks(issue, checks)

    def _program(self, argv: list[str]) -> tuple[str, str]:
        return self.runner.run_program(argv, "the import of the changed modules")

    def _checks_apply(self) -> bool:
        """The repository's tests cannot run, but a change to its Python files can be checked."""
        return self.found.python and not self.usable and self.settings.enabled != "off"

    def _checks_due(self, run: PassContext) -> bool:
        """The check applies, and Python files changed since the start (or were checked)."""
        if not self._checks_apply():
            return False
        runs = current_runs(run.store.entries())
        checked = bool(runs) and runs[-1].command == CHECKS
        return checked or any(path.endswith(".py") for path in self._changed_code(run))

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
        changed = changed_files(self.workspace, _base(run), lambda path: True)
        test_files = tracked_tests(self.workspace, patterns)
        chosen = exercising_tests(
            self.workspace, changed, test_files, lambda p: is_test_file(p, patterns)
        )
        return chosen if len(chosen) <= MAX_SELECTED else []

    def trial(self, run: PassContext, path: str, text: str, original: str) -> list[TestRun]:
        """`path` written as `text` for the issue's test and, when that passes, the tests of
        what changed (selected first, as after a task); then `original` again. The runs, in
        order; nothing is recorded: the caller says what they meant."""
        test = _active_test(run.store.entries())
        target = self.workspace / path
        if target.is_symlink() or not target.is_file():
            return [TestRun(reason=f"{path} is not a plain file")]  # a link is never written
        executable = os.access(target, os.X_OK)
        with self._own_change():
            put_back(self.workspace, path, text.encode(), executable)
        try:
            runs = [self._issue_run(test)]
            if _passes(runs[0]) and (self.usable or self._checks_apply()):
                runs.append(self._tests(run, "task", test))
            return runs
        finally:
            with self._own_change():
                put_back(self.workspace, path, original.encode(), executable)
            self.checked = ""

    def baseline(self, run: PassContext) -> TestRun | None:
        """The run of the tests before the change."""
        return baseline_of(recorded_runs(run.store.entries()))

    def issue_failure(self, run: PassContext) -> tuple[str, str] | None:
        """Before any change was tested: the active issue test's content and the output of its
        failing run on the code as it is (None: no such test, or it did not fail)."""
        failing = _failing_before(run.store.entries())
        return (failing[0].content, str(failing[1].get("tail") or "")) if failing else None

    def issue_trace(self, run: PassContext) -> Trace | None:
        """What the active issue test runs on the code as it is, and what it returns there
        (planner.verification.fixes.trace); None when it cannot be profiled."""
        test = _active_test(run.store.entries())
        if test is None:
            return None
        argv = traced_argv(pytest_on(self.found.command, [test.path], self.workspace), PYTHON)
        if argv is None:
            return None
        around = partial(placed, self.workspace, test)
        output, problem = self.runner.run_program(argv, "the issue's test, profiled", around)
        return None if problem else read_trace(output)

    def _whole_too_slow(self, run: PassContext) -> bool:
        baseline = baseline_of(recorded_runs(run.store.entries()))
        return baseline is not None and baseline.status == "timed_out"

    # -- the issue's own test ----------------------------------------------------------------

    def _write_issue_test(self, run: PassContext) -> None:
        """Once per issue, after the baseline: the model writes a test of what the issue
        asks; it is used only when it fails on the code before the change."""
        if not self._issue_test_applies(run):
            return
        if self.work_begun(run):
            reason = "the work had begun before a test of the issue could be written"
            run.store.append(ISSUE_TEST, status="dropped", reason=reason)
            return  # it must fail on the code before the change: that code is gone
        path = issue_test_path(self.workspace, run.issue.number, run.issue.title)
        if self._try_example_test(run, path):
            return
        messages, stated = self._issue_test_request(run, path)
        reply = run.chat("issue_test", messages, [])
        written = issue_test_from_reply(reply.content, stated)
        written, contrary = without_contrary_checks(written, run.issue.body, self.workspace)
        if contrary:
            run.store.append(ISSUE_TEST, status="trimmed", removed=contrary, reason=CONTRARY)
        content = with_stated_calls(written, run.issue.body, self.workspace)
        if content is None:
            reason = CONTRARY if contrary else "the reply held no test"
            run.store.append(ISSUE_TEST, status="dropped", reason=reason)
            return
        source = "model" if written is not None else "issue text"  # its stated calls alone
        self._try_issue_test(run, IssueTest(path=path, content=content), stated, source)

    def _try_example_test(self, run: PassContext, path: str) -> bool:
        """The issue's own `>>>` session with the value it expected, as the test (no model
        call, so no request is built); True when it fails on the code before the change and
        is kept."""
        content = transcript_test(run.issue.body, self.workspace)
        if content is None:
            return False
        test = IssueTest(path=path, content=content)
        return self._try_issue_test(run, test, _stated(run.issue), "issue example")

    def work_begun(self, run: PassContext) -> bool:
        """An action was taken, or files differ from where the change started (a later
        pass of the issue)."""
        if any(entry.get("type") == "action" for entry in run.store.entries()):
            return True
        start = self._start(run)
        changed = start.changed(self.workspace) if start.base else []
        return any(path not in start.dirty for path in changed)

    def _issue_test_applies(self, run: PassContext) -> bool:
        """Any Python repository where pytest runs (the repository's or the one planner
        installed), once per issue."""
        entries = run.store.entries()
        return (
            self.pytest
            and self.found.python
            and self.settings.issue_test
            and not any(entry.get("type") == ISSUE_TEST for entry in entries)
        )

    def _issue_test_request(self, run: PassContext, path: str) -> tuple[list[dict[str, Any]], str]:
        """The request, and the text whose values the test may use: the issue and the example
        test (its comments and the instruction of the run included)."""
        files = run.shown_files([f"{run.issue.title}\n{run.issue.body}"])
        modules = [Path(name).stem for name in files.whole if name.endswith(".py")]
        example_path, example = example_test(self.workspace, modules)
        request = render(
            "issue_test_request.md.j2",
            issue=prompt_view(run.issue),
            files=files.text,
            example_path=example_path,
            example=example,
            path=path,
            plain_functions=self.found.runner != "pytest",
        )
        return [run.system("issue_test"), user(request)], _stated(run.issue, example)

    def _try_issue_test(
        self, run: PassContext, test: IssueTest, stated: str, source: str = "model"
    ) -> bool:
        """Run it on the code before the change; keep only its tests that fail there, and
        none when the file fails before any check for a reason the issue does not give.
        `source` says who wrote it: the model, or planner from the issue's example. True
        when some of it is kept."""
        run.store.append(
            ISSUE_TEST, status="active", path=test.path, content=test.content, source=source
        )
        result = self._run(run, "issue", "")
        failing = result.issue_failures
        content = failing_only(test.content, test.path, failing) if result.ran else None
        broken = collection_problem(result.tail, stated, self.workspace)
        if not result.ran:
            reason = f"it could not run: {result.reason}"
        elif test.path in failing and broken:
            content, reason = None, broken
        else:
            reason = "it passes on the code before the change, so it does not test the issue"
        if content is not None and only_reported(content):
            content, reason = None, ONLY_REPORTED
        if content is None:
            run.store.append(ISSUE_TEST, status="dropped", path=test.path, reason=reason)
        elif content != test.content:
            run.store.append(ISSUE_TEST, status="active", path=test.path, content=content)
        return content is not None

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

    def _unfixed(self, run: PassContext, result: TestRun) -> list[str]:
        """Tests that failed at the baseline and still fail, in test files that import what
        the change touched (pytest's `file::name` ids; the issue's own test aside)."""
        if result.stage in ("baseline", "issue"):
            return []
        baseline = baseline_of(recorded_runs(run.store.entries()))
        before = set(baseline.failing) if baseline is not None else set()
        issue = set(result.issue_failures)
        still = [n for n in result.failing if n in before and n not in issue and "::" in n]
        if not still:
            return []
        files = sorted({name.split("::")[0] for name in still})
        patterns = self.settings.test_paths
        exercising = exercising_tests(
            self.workspace, self._changed_code(run), files, lambda p: is_test_file(p, patterns)
        )
        return [name for name in still if name.split("::")[0] in exercising]

    def _changed_tests(self, run: PassContext) -> list[str]:
        return changed_test_files(self.workspace, _base(run), self.settings.test_paths)

    def _changed_code(self, run: PassContext) -> list[str]:
        """Files other than tests changed since the baseline: what broke the tests."""
        patterns = self.settings.test_paths
        return changed_files(self.workspace, _base(run), lambda p: not is_test_file(p, patterns))

    def _still_used(self, run: PassContext, changed: list[str]) -> dict[str, list[str]]:
        """Functions and classes the change removed, each with the files that still use it."""
        return files_using(self.workspace, removed_names(self.workspace, _base(run), changed))

    def _added(self, run: PassContext, stage: Stage, failing: list[str]) -> list[str]:
        """Of the failing tests, those the change added (none at the baseline: no change)."""
        if stage == "baseline":
            return []
        baseline = _baseline_entry(run)
        dirty = set(baseline.get("dirty_tests") or [])
        added = added_tests(self.workspace, str(baseline.get("base_commit") or ""), failing)
        return [name for name in added if name.split("::")[0] not in dirty]

    def _tree_changed(self, run: PassContext) -> bool:
        if not self.checked:
            latest = [e for e in run.store.entries() if e.get("type") == VERIFICATION]
            self.checked = str(latest[-1].get("fingerprint") or "") if latest else ""
        return fingerprint(self.workspace) != self.checked

    # -- hooks during the plan ---------------------------------------------------------------

    def addendum(self, run: PassContext, request: Request) -> str:
        entries = run.store.entries()
        runs = self._can_run(entries)
        if not (runs or self._checks_due(run)):
            return ""
        if request == "planning":
            return self._planning_text(entries) if runs else ""
        if request == "execute":
            hint = _attempt_hint(entries, compact=True)
            feedback = _issue_test_failing(entries) or self._feedback(
                run, verification_note(entries)
            )
            return "\n".join(text for text in (hint, feedback) if text)
        evidence = evidence_text(entries)
        return f"## Tests\n{evidence}\n" if evidence else ""

    def _planning_text(self, entries: list[dict[str, Any]]) -> str:
        baseline = baseline_of(recorded_runs(entries))
        test = _active_test(entries)
        return render(
            "verification_planning.md.j2",
            command=self.found.display,
            issue_test=test.path if test is not None and not self.usable else "",
            tool=RUN_TESTS.name,
            failing=baseline.failing[:NAMES_SHOWN] if baseline else [],
            baseline_passed=baseline is not None and baseline.status == "passed",
        )

    def _feedback(self, run: PassContext, note: VerificationNote | None) -> str:
        if note is None or not note.unfinished or note.latest is None:
            return ""
        return render(
            "verification_feedback.md.j2",
            command=note.command,
            new_failures=note.broken[:NAMES_SHOWN],
            added_failures=note.added_failures[:NAMES_SHOWN],
            issue_failures=note.issue_failures[:NAMES_SHOWN],
            unfixed=note.unfixed[:NAMES_SHOWN],
            tool=RUN_TESTS.name if self._can_run(run.store.entries()) else "",
            tail=note.latest.tail,
            change=self._change(run) if note.regressed else "",
            checks=note.latest.command == CHECKS,
        )

    def _change(self, run: PassContext) -> str:
        """The code changed since the tests passed, as a diff: the 1.5B dropped `sorted()`
        while adding `--reverse`, and shown the failure and the new file it wrote the same
        file back twice; what its change removed is what the failing test needs."""
        return diff_since(self.workspace, _base(run), self._changed_code(run), CHANGE_LINES)

    def after_plan(self, run: PassContext, reply: Any, event: Any) -> None:
        self._write_issue_test(run)  # once per issue, when there is a plan to carry out

    def tools(self, run: PassContext) -> list[ToolSpec]:
        return [RUN_TESTS] if self._can_run(run.store.entries()) else []

    def before_action(self, run: PassContext, task_id: str, call: ToolCall) -> ToolResult | None:
        entries = run.store.entries()
        test = _active_test(entries)
        if test is not None and _writes(call, test.path):
            # The 1.5B, shown the issue's test failing, wrote its own version of it.
            return ToolResult(ok=False, error=f"{test.path} {ISSUE_TEST_IS_PLANNERS}")
        self.repair.before_write(task_id, call)
        if call.name != RUN_TESTS.name or not self._can_run(entries):
            return None
        result = self._run(run, "tool", task_id)
        text = self._result_text(run, result)
        if result.status == "passed":
            return ToolResult(ok=True, content=text)
        return ToolResult(ok=False, error=f"tests {result.status.replace('_', ' ')}", content=text)

    def _result_text(self, run: PassContext, result: TestRun) -> str:
        baseline = baseline_of(recorded_runs(run.store.entries()))
        new = new_failures(baseline, result)
        old = [name for name in result.failing if name not in new]
        outcome = result.counts() + (f" ({result.reason})" if result.reason else "")
        return render(
            "verification_result.md.j2",
            command=result.command,
            outcome=outcome,
            new_failures=new[:NAMES_SHOWN],
            old_failures=old[:NAMES_SHOWN],
            tail=result.tail if result.status != "passed" else "",
        )

    def after_task(self, run: PassContext, task_id: str, status: str, summary: str) -> None:
        due = self._can_run(run.store.entries()) or self._checks_due(run)
        if due and self._tree_changed(run):
            self._run(run, "task", task_id)
            self._undo_if_mended_nothing(run, task_id)

    def _undo_if_mended_nothing(self, run: PassContext, task_id: str) -> None:
        note = verification_note(run.store.entries())
        failing = failing_names(note) if note else []
        if not self.repair.mended_nothing(task_id, failing):
            return
        with self._own_change():
            restored = self.repair.undo()
        run.store.append(UNDONE, task_id=task_id, paths=restored, still_failing=failing)
        self._run(run, "task", task_id)  # the tests as the tree is again

    @contextmanager
    def _own_change(self) -> Iterator[None]:
        """planner changes the tree itself (an undo, a reset): what is not its own is judged
        first, and the tree afterwards counts as judged, so the approval gate never takes
        planner's change for one made outside any judged call."""
        if self.tree is not None:
            self.tree.settle()
        try:
            yield
        finally:
            if self.tree is not None:
                self.tree.accept()

    def _can_run(self, entries: list[dict[str, Any]]) -> bool:
        """The repository's tests run here, or (without them) the issue's test does."""
        if self.usable:
            return True
        return self.pytest and (_active_test(entries) is not None or bool(_kept_test(entries)))

    # -- before completion: repair, try again, or stop ---------------------------------------

    def before_completion(self, run: PassContext) -> None:
        entries = run.store.entries()
        if not (self._can_run(entries) or self._checks_due(run)):
            return
        if self._tree_changed(run):
            self._run(run, "final", "")
        note = verification_note(run.store.entries())
        if note is not None and note.unfinished and self._repair(run, note):
            raise PlanChanged()  # the failing tests of the changed files are enough to go on
        if _partial(run.store.entries()):
            self._run(run, "final", "")  # what the result shows is the whole suite's
            note = verification_note(run.store.entries())
            if note is not None and note.unfinished and self._repair(run, note):
                raise PlanChanged()
        if note is None or not note.unfinished:
            self._record_won(run)
            self._stop_if_unproven(run, note)
            return
        self._try_again(run, note)
        if self._keep_best(run, note):
            note = verification_note(run.store.entries()) or note
        repairs = self._repairs(run.store.entries())
        run.store.append(
            UNRESOLVED,
            new_failures=note.new_failures,
            issue_failures=note.issue_failures,
            repairs=repairs,
        )
        reason = unresolved_reason(note, repairs if run.config.planning.enabled else None)
        raise StopPass("needs_human", reason, [note.line()])

    def _stop_if_unproven(self, run: PassContext, note: VerificationNote | None) -> None:
        """The change touched Python code and no test of the issue passed (the one written was
        dropped): the tests that pass say nothing about the issue, so the pass ends
        needs_human with a draft that says so (a change to documents alone is not held)."""
        entries = run.store.entries()
        latest = next((e for e in reversed(entries) if e.get("type") == ISSUE_TEST), None)
        if latest is None or latest.get("status") != "dropped":
            return
        if not any(path.endswith(".py") for path in self._changed_code(run)):
            return
        why = str(latest.get("reason") or "it was dropped")
        reason = f"{FIX_UNPROVEN}: no test of the issue passed (planner's was dropped: {why})"
        run.store.append(UNPROVEN, reason=reason)  # the result and the draft say it
        line = note.line() if note is not None else ""
        raise StopPass("needs_human", reason, [line] if line else [])

    def _repair(self, run: PassContext, note: VerificationNote) -> bool:
        """A repair task was added (with a plan, while repairs are left)."""
        repairs = self._repairs(run.store.entries())
        if not run.config.planning.enabled or repairs >= self._repair_limit(note):
            return False
        self._add_repair_task(run, note, repairs + 1)
        return True

    def _repair_limit(self, note: VerificationNote) -> int:
        """The issue's own test alone gets one repair: a model wrote it, it may be wrong."""
        limit = self.settings.max_repair_attempts
        return limit if note.regressed else min(1, limit)

    def _repairs(self, entries: list[dict[str, Any]]) -> int:
        """Repair tasks added in this attempt, since a person last gave an instruction."""
        count = 0
        for entry in entries:
            if entry.get("type") == "human_input" or _attempt_failed(entry):
                count = 0
            elif entry.get("type") == REPAIR:
                count += 1
        return count

    def _add_repair_task(self, run: PassContext, note: VerificationNote, attempt: int) -> None:
        state = run.state()
        assert state.plan is not None  # completion is only reached with a plan
        changed = self._changed_code(run)
        task = repair_task(state.plan, note, attempt, changed, self._still_used(run, changed))
        run.store.append(REPAIR, task_id=task.id, attempt=attempt, new_failures=note.new_failures)
        self.repair.start(task.id, failing_names(note))
        run.store.append(
            "revision",
            revision=state.revision + 1,
            reason=repair_goal(note).rstrip("."),
            changes=[{"type": "add_task", "details": task.description}],
            updated_plan=with_task(state.plan, task, RUN_TESTS.name).model_dump(mode="json"),
            carry_progress=True,
            review_phases=[],
            source=SOURCE,
        )

    # -- another attempt from the start (attempts.py) ----------------------------------------

    def _try_again(self, run: PassContext, note: VerificationNote) -> None:
        """Attempts are left: record this one, put the tree back to the start and raise
        PlanChanged with what failed, so the next attempt plans afresh (returns otherwise)."""
        entries = run.store.entries()
        number = attempt_count(entries) + 1
        start = self._start(run)
        if number >= self.settings.attempts or not start.base:
            return
        record = attempt_record(self.workspace, start, number, note)
        with self._own_change():
            try:
                restored = reset(self.workspace, start)
            except ResetImpossible as why:
                run.store.append(ATTEMPT_NOT_MADE, attempt=number + 1, reason=str(why))
                return
        run.store.append(ATTEMPT, **record, restored=restored)
        self._activate_again(run)
        self.repair = RepairUndo(self.workspace)
        self.checked = fingerprint(self.workspace)
        run.new_attempt(number + 1)
        run.progress(f"attempt {number + 1} of {self.settings.attempts}")
        raise PlanChanged(feedback=_attempt_hint(run.store.entries(), compact=False))

    def on_stop(self, run: PassContext, status: PassStatus) -> None:
        """A pass stopped by its budget in a later attempt leaves the closest attempt's tree,
        not the half-made one (a needs_human end chose in before_completion)."""
        if status not in ("in_progress", "failed") or not attempt_count(run.store.entries()):
            return
        note = verification_note(run.store.entries()) or VerificationNote()
        self._keep_best(run, note)

    def _keep_best(self, run: PassContext, note: VerificationNote) -> bool:
        """No attempts left and none passed: when an earlier attempt came closer than the
        current one (fewer tests it broke, fewer of the issue's failing, a smaller change),
        the current one is recorded and undone, and that one's tree taken up again."""
        entries = run.store.entries()
        earlier = failed_attempts(entries)
        latest = next((e for e in reversed(entries) if e.get("type") == ATTEMPT), None)
        start = self._start(run)
        ended = latest is not None and latest.get("status") in ("won", "restored")
        if not earlier or ended or not start.base:
            return False
        current = attempt_record(self.workspace, start, len(earlier) + 1, note)
        best = min(earlier, key=rank)
        if rank(best) >= rank(current):
            return False
        if self.tree is not None:
            try:
                self.tree.settle()
            except Exception:  # a person must judge what the tools left first: leave it
                return False
        try:
            restored = take_up(self.workspace, start, best)
        finally:
            if self.tree is not None:
                self.tree.accept()  # planner's own change
        if restored is None:
            return False
        run.store.append(ATTEMPT, **current)
        run.store.append(ATTEMPT, attempt=best.get("attempt"), status="restored", paths=restored)
        self.checked = fingerprint(self.workspace)
        return True

    def _start(self, run: PassContext) -> Start:
        baseline = _baseline_entry(run)
        dirty = baseline.get("dirty")
        kept = {str(k): (str(v) if v else None) for k, v in dirty.items()} if dirty else {}
        return Start(str(baseline.get("base_commit") or ""), kept, self.excluded)

    def _activate_again(self, run: PassContext) -> None:
        """The issue's test, kept into the change the reset took away, is placed for each run
        again: the next attempt is judged by it too."""
        entries = run.store.entries()
        if _active_test(entries) is not None:
            return
        latest = next(
            (e for e in reversed(entries) if e.get("type") == ISSUE_TEST and e.get("content")),
            None,
        )
        if latest is not None and _kept_test(entries):
            run.store.append(
                ISSUE_TEST, status="active", path=latest.get("path"), content=latest["content"]
            )

    def _record_won(self, run: PassContext) -> None:
        """After failed attempts, the one whose tests pass is recorded as the winner (once)."""
        entries = run.store.entries()
        number = attempt_count(entries) + 1
        latest = next((e for e in reversed(entries) if e.get("type") == ATTEMPT), None)
        if number == 1 or (latest is not None and latest.get("status") == "won"):
            return
        start = self._start(run)
        changed = [path for path in start.changed(self.workspace) if path not in start.dirty]
        diff = diff_since(self.workspace, start.base, changed, 10_000)
        lines = sum(1 for line in diff.splitlines() if line[:1] in "+-")
        run.store.append(ATTEMPT, attempt=number, status="won", diff_lines=lines)


def _stated(issue: IssueContext, example: str = "") -> str:
    """The text whose values the issue's test may use: the issue (its comments and the run's
    instruction included) and the repository test shown as the example."""
    comments = [comment.body for comment in issue.comments]
    return "\n".join([issue.title, issue.body, *comments, issue.instruction, example])


def _issue_test_failing(entries: list[dict[str, Any]]) -> str:
    """Before any change was tested: the issue's test and how it fails on the code as it is,
    for the task's prompt (the reproduction Agentless starts from). Shown its test failing
    only after a first edit, the 1.5B first changed what the plan said, not what the issue
    showed."""
    failing = _failing_before(entries)
    if failing is None:
        return ""
    test, before = failing
    lines = test.content.splitlines()
    content = "\n".join(lines[:REPRODUCTION_LINES])
    if len(lines) > REPRODUCTION_LINES:
        content += f"\n# … {len(lines) - REPRODUCTION_LINES} more lines"
    tail = str(before.get("tail") or "")[-REPRODUCTION_TAIL:]
    return render("issue_test_failing.md.j2", path=test.path, content=content, tail=tail)


def _failing_before(entries: list[dict[str, Any]]) -> tuple[IssueTest, dict[str, Any]] | None:
    """The active issue test and its failing run on the code before the change, while no
    run after a change was recorded (None otherwise)."""
    test = _active_test(entries)
    runs = [entry for entry in entries if entry.get("type") == VERIFICATION]
    if test is None or any(entry.get("stage") not in ("baseline", "issue") for entry in runs):
        return None
    before = next((entry for entry in reversed(runs) if entry.get("stage") == "issue"), None)
    if before is None or before.get("status") != "failed":
        return None
    return test, before


def _active_test(entries: list[dict[str, Any]]) -> IssueTest | None:
    """The issue's test while it is placed for each run (written, not yet dropped or kept)."""
    latest = next((entry for entry in reversed(entries) if entry.get("type") == ISSUE_TEST), None)
    if latest is None or latest.get("status") != "active":
        return None
    try:
        return IssueTest.model_validate(latest)
    except ValueError:
        return None


def _kept_test(entries: list[dict[str, Any]]) -> str:
    """The issue's test written into the change for good ("" when there is none)."""
    latest = next((entry for entry in reversed(entries) if entry.get("type") == ISSUE_TEST), None)
    if latest is None or latest.get("status") != "kept":
        return ""
    return str(latest.get("path") or "")


def _attempt_failed(entry: dict[str, Any]) -> bool:
    return entry.get("type") == ATTEMPT and entry.get("status") == "failed"


def _attempt_hint(entries: list[dict[str, Any]], compact: bool) -> str:
    """What the attempts before this one failed on ("" in the first attempt)."""
    attempts = failed_attempts(entries)
    if not attempts:
        return ""
    shown = [
        {
            "attempt": entry.get("attempt"),
            "failing": [str(name) for name in entry.get("failing") or []][:NAMES_SHOWN],
            "tail": str(entry.get("tail") or ""),
            "diff": str(entry.get("diff") or ""),
        }
        for entry in attempts
    ]
    return render("attempt_hint.md.j2", attempts=shown, compact=compact)


def _partial(entries: list[dict[str, Any]]) -> bool:
    """The latest run was not the whole command (the tests of the changed files only)."""
    runs = current_runs(entries)
    latest = runs[-1] if runs else None
    return latest is not None and (bool(latest.selected) or latest.reason == WHOLE_TOO_SLOW)


def _with_checks(issue: TestRun, checks: TestRun | None) -> TestRun:
    """The issue's test's run, with what the check of the changed files found failing (its
    files are not tests: they are not counted as passed)."""
    if checks is None or not checks.failing:
        return issue
    return issue.model_copy(
        update={
            "status": "failed" if issue.status == "passed" else issue.status,
            "failed": (issue.failed or 0) + len(checks.failing),
            "failing": [*issue.failing, *checks.failing],
            "tail": "\n".join([checks.tail, issue.tail]).strip(),
        }
    )


def _not_rerun() -> TestRun:
    return TestRun(status="not_run", reason=WHOLE_TOO_SLOW)


def _relative_folders(workspace: Path, excluded: tuple[Path, ...]) -> tuple[str, ...]:
    """The folders of `excluded` inside the workspace, relative, with a trailing /."""
    folders = []
    for path in excluded:
        try:
            relative = path.resolve().relative_to(workspace.resolve())
        except (OSError, ValueError):
            continue
        folders.append(relative.as_posix().rstrip("/") + "/")
    return tuple(folders)


def _writes(call: ToolCall, path: str) -> bool:
    return call.name in WRITE_TOOLS and path_argument(call.arguments) == path


def _passes(result: TestRun) -> bool:
    """The issue's test ran with it and none of its tests failed."""
    if result.status == "passed":
        return True
    return result.status == "failed" and bool(result.failing) and not result.issue_failures


def _base(run: PassContext) -> str:
    """The commit the baseline ran on ("" before a baseline)."""
    return str(_baseline_entry(run).get("base_commit") or "")


def _baseline_entry(run: PassContext) -> dict[str, Any]:
    """The latest baseline's history entry ({} before a baseline)."""
    return next(
        (
            entry
            for entry in reversed(run.store.entries())
            if entry.get("type") == VERIFICATION and entry.get("stage") == "baseline"
        ),
        {},
    )
