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

How a run is made and recorded is planner.verification.runs. Every run is a `verification`
entry (planner.outcome.evidence) recorded as it finishes, so
a later pass reuses the baseline and the pass result, reflection and the judges read the same
evidence. Only failures the baseline did not have count against the pass.
"""

from __future__ import annotations

from typing import Any

from planner.core.interfaces import ToolCall, ToolResult, ToolSpec
from planner.core.tool_names import WRITE_TOOLS, path_argument
from planner.engine.context import PassContext
from planner.engine.phase import Phase, Request
from planner.outcome.evidence import (
    ATTEMPT,
    CHECKS,
    ISSUE_TEST,
    UNPROVEN,
    TestRun,
    VerificationNote,
    evidence_text,
    new_failures,
    verification_note,
)
from planner.outcome.flow import PlanChanged, StopPass
from planner.outcome.result import PassStatus
from planner.text.prompts import render
from planner.verification.documents import (
    command_issue_test,
    stop_if_documents_lost,
    stop_if_only_documented,
)
from planner.verification.fixes.attempts import (
    NAMES_SHOWN,
    ResetImpossible,
    attempt_count,
    attempt_hint,
    attempt_record,
    closer_attempt,
    reset,
    take_up,
    won_record,
)
from planner.verification.fixes.repair_task import (
    REPAIR,
    failing_names,
    repair_goal,
    repair_limit,
    repair_task,
    repairs_made,
    unresolved_reason,
    with_task,
)
from planner.verification.fixes.undo import RepairUndo, own_change
from planner.verification.reproduction.issue_test import IssueTest, issue_test_path
from planner.verification.reproduction.records import (
    active_test,
    issue_test_failing,
    latest_issue_test,
    reactivation,
    reproducing_tests,
    reproduction_failing,
    stated,
)
from planner.verification.reproduction.script import script_test
from planner.verification.reproduction.transcript import transcript_test
from planner.verification.reproduction.writing import judged, written_test
from planner.verification.runs import SOURCE, PassTests, partial_run
from planner.verification.suite.changes import diff_since, fingerprint
from planner.verification.suite.detect import NO_TESTS, resolve

RUN_TESTS = ToolSpec(
    name="run_tests",
    description=(
        "Run the repository's tests and get the result: passed and failed counts, the failing "
        "tests (those failing before any change are marked) and the end of the output."
    ),
    parameters={"type": "object", "properties": {}},
)
UNRESOLVED = "verification_unresolved"
UNDONE = "verification_repair_undone"
ATTEMPT_NOT_MADE = "verification_attempt_not_made"
CHANGE_LINES = 80
"""Lines of the change's diff shown with failing tests."""
ISSUE_TEST_IS_PLANNERS = (
    "is planner's test of the issue, written from it before the change, and stays as it is: "
    "change the code so that it passes"
)


class VerificationPhase(Phase):
    name = "verification"

    def __init__(self, tests: PassTests) -> None:
        self.workspace = tests.workspace
        self.settings = tests.settings
        self.tests = tests
        """How the tests run and are recorded (the candidate fixes run theirs through it)."""
        self.repair = RepairUndo(tests.workspace)

    # -- pass start: setup and baseline ------------------------------------------------------

    def start(self, run: PassContext) -> None:
        tests = self.tests
        if self.settings.enabled == "off":
            tests.record_skip(run, "verification.enabled is off")
            return
        tests.found = resolve(self.workspace, self.settings)
        if not tests.found.command:
            if self.settings.enabled == "on" or not tests.found.python:
                tests.record_skip(run, NO_TESTS)
            if self.settings.enabled == "on":
                raise StopPass("failed", f"verification.enabled is on, but: {NO_TESTS}")
            if not tests.found.python:
                return
            # A Python project without tests: the issue's test, and checks of what changed
            tests.record_start(run)
        failed = attempt_count(run.store.entries())
        if failed:
            run.new_attempt(failed + 1)  # a later pass goes on sampling as its attempt does
        setup_problem = tests.set_up(run)
        if tests.found.command:
            tests.take_baseline(run, setup_problem)
            tests.find_reproduction(run)  # its failing tests that show the issue's bug
        if not run.config.planning.enabled:
            self._write_issue_test(run)  # no plan will come: the issue is all there is

    # -- the issue's own test ----------------------------------------------------------------

    def _write_issue_test(self, run: PassContext) -> None:
        """Once per issue, after the baseline: the model writes a test of what the issue
        asks; it is used only when it fails on the code before the change."""
        if not self._issue_test_applies(run):
            return
        if self.tests.work_begun(run):
            reason = "the work had begun before a test of the issue could be written"
            run.store.append(ISSUE_TEST, status="dropped", reason=reason)
            return  # it must fail on the code before the change: that code is gone
        path = issue_test_path(self.workspace, run.issue.number, run.issue.title)
        if self._try_example_test(run, path) or self._try_command_test(run, path):
            return
        plain = self.tests.found.runner != "pytest"
        test, text, source = written_test(run, self.workspace, path, plain)
        if test is None:
            return  # written_test recorded why
        self._try_issue_test(run, test, text, source)

    def _try_example_test(self, run: PassContext, path: str) -> bool:
        """The issue's own `>>>` session, or else the script it shows with its output, with
        the value it expected, as the test (no model call, so no request is built); True when
        it fails on the code before the change and is kept."""
        body = run.issue.body
        content = transcript_test(body, self.workspace) or script_test(body, self.workspace)
        if content is None:
            return False
        test = IssueTest(path=path, content=content)
        return self._try_issue_test(run, test, stated(run.issue), "issue example")

    def _try_command_test(self, run: PassContext, path: str) -> bool:
        """Without the repository's tests: the command the issue shows (`python3 tool.py
        --count notes.txt`) with what it should print, as the test (documents.py)."""
        content = command_issue_test(self.tests, run, path)
        if content is None:
            return False
        test = IssueTest(path=path, content=content)
        return self._try_issue_test(run, test, stated(run.issue), "issue command")

    def _issue_test_applies(self, run: PassContext) -> bool:
        """Any Python repository where pytest runs (the repository's or the one planner
        installed), once per issue."""
        return (
            self.tests.pytest
            and self.tests.found.python
            and self.settings.issue_test
            and latest_issue_test(run.store.entries()) is None
        )

    def _try_issue_test(self, run: PassContext, test: IssueTest, text: str, source: str) -> bool:
        """Run it on the code before the change; keep only its tests that fail there, and
        none when the file fails before any check for a reason the issue does not give.
        `source` says who wrote it: the model, or planner from the issue's example. True
        when some of it is kept."""
        run.store.append(
            ISSUE_TEST, status="active", path=test.path, content=test.content, source=source
        )
        result = self.tests.record(run, "issue", "")
        content, reason = judged(test, result, text, self.workspace)
        if content is None:
            run.store.append(ISSUE_TEST, status="dropped", path=test.path, reason=reason)
        elif content != test.content:
            run.store.append(ISSUE_TEST, status="active", path=test.path, content=content)
        return content is not None

    # -- hooks during the plan ---------------------------------------------------------------

    def addendum(self, run: PassContext, request: Request) -> str:
        entries = run.store.entries()
        runs = self.tests.can_run(entries)
        if not (runs or self.tests.checks_due(run)):
            return ""
        if request == "planning":
            return self._planning_text(run) if runs else ""
        if request == "execute":
            hint = attempt_hint(entries, compact=True)
            feedback = (
                issue_test_failing(entries)
                or reproduction_failing(entries)
                or self._feedback(run, verification_note(entries))
            )
            return "\n".join(text for text in (hint, feedback) if text)
        evidence = evidence_text(entries)
        return f"## Tests\n{evidence}\n" if evidence else ""

    def _planning_text(self, run: PassContext) -> str:
        baseline = self.tests.baseline(run)
        test = active_test(run.store.entries())
        return render(
            "verification_planning.md.j2",
            command=self.tests.found.display,
            issue_test=test.path if test is not None and not self.tests.usable else "",
            tool=RUN_TESTS.name,
            failing=baseline.failing[:NAMES_SHOWN] if baseline else [],
            reproducing=reproducing_tests(run.store.entries())[:NAMES_SHOWN],
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
            tool=RUN_TESTS.name if self.tests.can_run(run.store.entries()) else "",
            tail=note.latest.tail,
            change=self._change(run) if note.regressed else "",
            checks=note.latest.command == CHECKS,
        )

    def _change(self, run: PassContext) -> str:
        """The code changed since the tests passed, as a diff: the 1.5B dropped `sorted()`
        while adding `--reverse`, and shown the failure and the new file it wrote the same
        file back twice; what its change removed is what the failing test needs."""
        changed = self.tests.changed_code(run)
        return diff_since(self.workspace, self.tests.base(run), changed, CHANGE_LINES)

    def after_plan(self, run: PassContext, reply: Any, event: Any) -> None:
        self._write_issue_test(run)  # once per issue, when there is a plan to carry out

    def tools(self, run: PassContext) -> list[ToolSpec]:
        return [RUN_TESTS] if self.tests.can_run(run.store.entries()) else []

    def before_action(self, run: PassContext, task_id: str, call: ToolCall) -> ToolResult | None:
        entries = run.store.entries()
        test = active_test(entries)
        if test is not None and _writes(call, test.path):
            # The 1.5B, shown the issue's test failing, wrote its own version of it.
            return ToolResult(ok=False, error=f"{test.path} {ISSUE_TEST_IS_PLANNERS}")
        self.repair.before_write(task_id, call)
        if call.name != RUN_TESTS.name or not self.tests.can_run(entries):
            return None
        result = self.tests.record(run, "tool", task_id)
        text = self._result_text(run, result)
        if result.status == "passed":
            return ToolResult(ok=True, content=text)
        return ToolResult(ok=False, error=f"tests {result.status.replace('_', ' ')}", content=text)

    def _result_text(self, run: PassContext, result: TestRun) -> str:
        new = new_failures(self.tests.baseline(run), result)
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
        due = self.tests.can_run(run.store.entries()) or self.tests.checks_due(run)
        if due and self.tests.tree_changed(run):
            self.tests.record(run, "task", task_id)
            self._undo_if_mended_nothing(run, task_id)

    def _undo_if_mended_nothing(self, run: PassContext, task_id: str) -> None:
        note = verification_note(run.store.entries())
        failing = failing_names(note) if note else []
        if not self.repair.mended_nothing(task_id, failing):
            return
        with own_change(self.tests.tree):
            restored = self.repair.undo()
        run.store.append(UNDONE, task_id=task_id, paths=restored, still_failing=failing)
        self.tests.record(run, "task", task_id)  # the tests as the tree is again

    # -- before completion: repair, try again, or stop ---------------------------------------

    def before_completion(self, run: PassContext) -> None:
        stop_if_documents_lost(self.tests, run)
        stop_if_only_documented(self.tests, run)
        if not (self.tests.can_run(run.store.entries()) or self.tests.checks_due(run)):
            return
        note = self._final_note(run)
        if note is None or not note.unfinished:
            self._record_won(run)
            self._stop_if_unproven(run, note)
            return
        self._try_again(run, note)
        if self._keep_best(run, note):
            note = verification_note(run.store.entries()) or note
        repairs = repairs_made(run.store.entries())
        run.store.append(
            UNRESOLVED,
            new_failures=note.new_failures,
            issue_failures=note.issue_failures,
            repairs=repairs,
        )
        reason = unresolved_reason(note, repairs if run.config.planning.enabled else None)
        raise StopPass("needs_human", reason, [note.line()])

    def _final_note(self, run: PassContext) -> VerificationNote | None:
        """The tests at the end of the task list (the whole suite's when the latest run was
        not); PlanChanged when a repair task was added for what they found failing."""
        if self.tests.tree_changed(run):
            self.tests.record(run, "final", "")
        note = verification_note(run.store.entries())
        if note is not None and note.unfinished and self._repair(run, note):
            raise PlanChanged()  # the failing tests of the changed files are enough to go on
        if partial_run(run.store.entries()):
            self.tests.record(run, "final", "")  # what the result shows is the whole suite's
            note = verification_note(run.store.entries())
            if note is not None and note.unfinished and self._repair(run, note):
                raise PlanChanged()
        return note

    def _stop_if_unproven(self, run: PassContext, note: VerificationNote | None) -> None:
        """The change touched Python code and no test of the issue passed (the one written was
        dropped): the tests that pass say nothing about the issue, so the pass ends
        needs_human with a draft that says so (a change to documents alone is not held)."""
        latest = latest_issue_test(run.store.entries())
        if latest is None or latest.get("status") != "dropped":
            return
        if note is not None and note.reproduced:
            return  # tests that failed the way the issue reports pass now: they prove it
        if not any(path.endswith(".py") for path in self.tests.changed_code(run)):
            return
        why = str(latest.get("reason") or "it was dropped")
        reason = f"the fix is unproven: no test of the issue passed (planner's was dropped: {why})"
        run.store.append(UNPROVEN, reason=reason)  # the result and the draft say it
        line = note.line() if note is not None else ""
        raise StopPass("needs_human", reason, [line] if line else [])

    def _repair(self, run: PassContext, note: VerificationNote) -> bool:
        """A repair task was added (with a plan, while repairs are left)."""
        repairs = repairs_made(run.store.entries())
        limit = repair_limit(note, self.settings.max_repair_attempts)
        if not run.config.planning.enabled or repairs >= limit:
            return False
        self._add_repair_task(run, note, repairs + 1)
        return True

    def _add_repair_task(self, run: PassContext, note: VerificationNote, attempt: int) -> None:
        state = run.state()
        assert state.plan is not None  # completion is only reached with a plan
        changed = self.tests.changed_code(run)
        still_used = self.tests.still_used(run, changed)
        task = repair_task(state.plan, note, attempt, changed, still_used)
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

    # -- another attempt from the start (fixes/attempts.py) ----------------------------------

    def _try_again(self, run: PassContext, note: VerificationNote) -> None:
        """Attempts are left: record this one, put the tree back to the start and raise
        PlanChanged with what failed, so the next attempt plans afresh (returns otherwise)."""
        number = attempt_count(run.store.entries()) + 1
        start = self.tests.start(run)
        if number >= self.settings.attempts or not start.base:
            return
        record = attempt_record(self.workspace, start, number, note)
        with own_change(self.tests.tree):
            try:
                restored = reset(self.workspace, start)
            except ResetImpossible as why:
                run.store.append(ATTEMPT_NOT_MADE, attempt=number + 1, reason=str(why))
                return
        run.store.append(ATTEMPT, **record, restored=restored)
        again = reactivation(run.store.entries())
        if again is not None:  # the issue's test, kept into the change the reset took away
            run.store.append(ISSUE_TEST, **again)
        self.repair = RepairUndo(self.workspace)
        self.tests.checked = fingerprint(self.workspace)
        run.new_attempt(number + 1)
        run.progress(f"attempt {number + 1} of {self.settings.attempts}")
        raise PlanChanged(feedback=attempt_hint(run.store.entries(), compact=False))

    def on_stop(self, run: PassContext, status: PassStatus) -> None:
        """A pass stopped by its budget in a later attempt leaves the closest attempt's tree,
        not the half-made one (a needs_human end chose in before_completion)."""
        if status not in ("in_progress", "failed") or not attempt_count(run.store.entries()):
            return
        note = verification_note(run.store.entries()) or VerificationNote()
        self._keep_best(run, note)

    def _keep_best(self, run: PassContext, note: VerificationNote) -> bool:
        """No attempts left and none passed: when an earlier attempt came closer than the
        current one, the current one is recorded and undone, and that one's tree taken up
        again."""
        start = self.tests.start(run)
        closer = closer_attempt(self.workspace, start, run.store.entries(), note)
        tree = self.tests.tree
        if closer is None:
            return False
        current, best = closer
        if tree is not None:
            try:
                tree.settle()
            except Exception:  # a person must judge what the tools left first: leave it
                return False
        try:
            restored = take_up(self.workspace, start, best)
        finally:
            if tree is not None:
                tree.accept()  # planner's own change
        if restored is None:
            return False
        run.store.append(ATTEMPT, **current)
        run.store.append(ATTEMPT, attempt=best.get("attempt"), status="restored", paths=restored)
        self.tests.checked = fingerprint(self.workspace)
        return True

    def _record_won(self, run: PassContext) -> None:
        """After failed attempts, the one whose tests pass is recorded as the winner (once)."""
        won = won_record(self.workspace, self.tests.start(run), run.store.entries())
        if won:
            run.store.append(ATTEMPT, **won)


def _writes(call: ToolCall, path: str) -> bool:
    return call.name in WRITE_TOOLS and path_argument(call.arguments) == path
