"""Verification phase: the repository's tests are part of the pass (issue 23, docs/verification.md).

    pass start ─ start(): detect the command, run the setup (network, no tokens), and the
                 baseline once per issue (which tests fail already), recorded in the history
    planning ─── addendum("planning"): the command, the `run_tests` tool, the baseline failures
    each task ── tools(): run_tests, answered in before_action() with the parsed result
                 after_task(): the tests run again when the task changed files
                 addendum("execute"): tests that passed at the baseline and fail now, with the
                 end of the output, are the next task's input
    no task left ─ before_completion(): a last run when files changed since; tests failing that
                 passed at the baseline add a repair task (a saved plan revision) up to
                 verification.max_repair_attempts, then the pass ends needs_human

Every run is a `verification` entry (planner.engine.verification) recorded as it finishes, so
a later pass reuses the baseline and the pass result, reflection and the judges read the same
evidence. Only failures the baseline did not have count against the pass.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from planner.engine.config import PlannerConfig
from planner.engine.context import PassContext
from planner.engine.documents import Plan, PlannedAction, Subtask
from planner.engine.flow import PlanChanged, StopPass
from planner.engine.interfaces import ToolCall, ToolResult, ToolSpec
from planner.engine.phase import Phase, Request
from planner.engine.prompts import render
from planner.engine.verification import (
    VERIFICATION,
    Stage,
    TestRun,
    VerificationNote,
    baseline_of,
    evidence_text,
    new_failures,
    recorded_runs,
    verification_note,
)
from planner.tools.isolation import SandboxUser
from planner.verification.changes import (
    changed_files,
    changed_test_files,
    fingerprint,
    head_commit,
    is_test_file,
)
from planner.verification.detect import NO_TESTS, Verification, resolve
from planner.verification.runner import TestRunner, Watch

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
SOURCE = "verification"
NAMES_SHOWN = 20


class VerificationPhase(Phase):
    name = "verification"

    def __init__(
        self,
        workspace: Path,
        config: PlannerConfig,
        sandbox: SandboxUser | None = None,
        watch: Watch | None = None,
    ) -> None:
        self.workspace = workspace
        self.settings = config.verification
        self.runner = TestRunner(workspace, config, sandbox, watch)
        self.found = Verification()
        self.usable = False
        """A command was found and its program is installed: the tests can run this pass."""
        self.checked = ""
        """Fingerprint of the working tree the latest run saw."""

    # -- pass start: setup and baseline ------------------------------------------------------

    def start(self, run: PassContext) -> None:
        if self.settings.enabled == "off":
            self._record_skip(run, "verification.enabled is off")
            return
        self.found = resolve(self.workspace, self.settings)
        if not self.found.command:
            self._record_skip(run, NO_TESTS)
            if self.settings.enabled == "on":
                raise StopPass("failed", f"verification.enabled is on, but: {NO_TESTS}")
            return
        setup_problem = self._set_up(run)
        self._baseline(run, setup_problem)

    def _record_skip(self, run: PassContext, reason: str) -> None:
        """Say once why no test runs (again only when something else was said since)."""
        runs = recorded_runs(run.store.entries())
        if runs and runs[-1].status == "not_run" and runs[-1].reason == reason:
            return
        run.store.append(VERIFICATION, stage="baseline", status="not_run", reason=reason)

    def _set_up(self, run: PassContext) -> str:
        """Run the setup commands; '' when they succeeded, else what failed."""
        if not self.found.setup:
            return ""
        results = self.runner.set_up(self.found)
        problems = [f"{r.command}: {r.detail}" for r in results if not r.ok]
        run.store.append(
            SETUP, commands=[r.command for r in results], ok=not problems, problems=problems
        )
        return "; ".join(problems)

    def _baseline(self, run: PassContext, setup_problem: str) -> None:
        earlier = baseline_of(recorded_runs(run.store.entries()))
        if earlier is not None and earlier.ran and earlier.command == self.found.display:
            self.usable = True  # one baseline per issue: it describes the tree before any change
            return
        result = self._run(run, "baseline", "", base_commit=head_commit(self.workspace))
        if setup_problem and result.status != "passed":
            run.store.append(SETUP, ok=False, problems=[f"the tests ran after: {setup_problem}"])
        self.usable = result.ran

    # -- runs --------------------------------------------------------------------------------

    def _run(self, run: PassContext, stage: Stage, task_id: str, **extra: Any) -> TestRun:
        result = self.runner.run_tests(self.found).model_copy(
            update={"stage": stage, "task_id": task_id, "changed_tests": self._changed_tests(run)}
        )
        tree = fingerprint(self.workspace)  # as the run left it (caches it wrote included)
        run.store.append(VERIFICATION, **result.model_dump(), fingerprint=tree, **extra)
        self.checked = tree
        run.progress(f"tests ({stage}): {result.counts()}")
        return result

    def _changed_tests(self, run: PassContext) -> list[str]:
        return changed_test_files(self.workspace, _base(run), self.settings.test_paths)

    def _changed_code(self, run: PassContext) -> list[str]:
        """Files other than tests changed since the baseline: what broke the tests."""
        patterns = self.settings.test_paths
        return changed_files(self.workspace, _base(run), lambda p: not is_test_file(p, patterns))

    def _tree_changed(self, run: PassContext) -> bool:
        if not self.checked:
            latest = [e for e in run.store.entries() if e.get("type") == VERIFICATION]
            self.checked = str(latest[-1].get("fingerprint") or "") if latest else ""
        return fingerprint(self.workspace) != self.checked

    # -- hooks during the plan ---------------------------------------------------------------

    def addendum(self, run: PassContext, request: Request) -> str:
        if not self.usable:
            return ""
        entries = run.store.entries()
        if request == "planning":
            return self._planning_text(entries)
        if request == "execute":
            return self._feedback(verification_note(entries))
        evidence = evidence_text(entries)
        return f"## Tests\n{evidence}\n" if evidence else ""

    def _planning_text(self, entries: list[dict[str, Any]]) -> str:
        baseline = baseline_of(recorded_runs(entries))
        return render(
            "verification_planning.md.j2",
            command=self.found.display,
            tool=RUN_TESTS.name,
            failing=baseline.failing[:NAMES_SHOWN] if baseline else [],
            baseline_passed=baseline is not None and baseline.status == "passed",
        )

    def _feedback(self, note: VerificationNote | None) -> str:
        if note is None or not note.regressed or note.latest is None:
            return ""
        return render(
            "verification_feedback.md.j2",
            command=note.command,
            new_failures=note.new_failures[:NAMES_SHOWN],
            tool=RUN_TESTS.name,
            tail=note.latest.tail,
        )

    def tools(self, run: PassContext) -> list[ToolSpec]:
        return [RUN_TESTS] if self.usable else []

    def before_action(self, run: PassContext, task_id: str, call: ToolCall) -> ToolResult | None:
        if call.name != RUN_TESTS.name or not self.usable:
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
        if self.usable and self._tree_changed(run):
            self._run(run, "task", task_id)

    # -- before completion: repair or stop ---------------------------------------------------

    def before_completion(self, run: PassContext) -> None:
        if not self.usable:
            return
        if self._tree_changed(run):
            self._run(run, "final", "")
        note = verification_note(run.store.entries())
        if note is None or not note.regressed:
            return
        attempts = self._repairs(run.store.entries())
        if attempts < self.settings.max_repair_attempts:
            self._add_repair_task(run, note, attempts + 1)
            raise PlanChanged()
        run.store.append(UNRESOLVED, new_failures=note.new_failures, repairs=attempts)
        raise StopPass("needs_human", _unresolved_reason(note, attempts), [note.line()])

    def _repairs(self, entries: list[dict[str, Any]]) -> int:
        """Repair tasks added since a person last gave an instruction."""
        count = 0
        for entry in entries:
            if entry.get("type") == "human_input":
                count = 0
            elif entry.get("type") == REPAIR:
                count += 1
        return count

    def _add_repair_task(self, run: PassContext, note: VerificationNote, attempt: int) -> None:
        state = run.state()
        assert state.plan is not None  # completion is only reached with a plan
        task = _repair_task(state.plan, note, attempt, self._changed_code(run))
        run.store.append(REPAIR, task_id=task.id, attempt=attempt, new_failures=note.new_failures)
        run.store.append(
            "revision",
            revision=state.revision + 1,
            reason=f"tests that passed before the change fail: {_names(note.new_failures)}",
            changes=[{"type": "add_task", "details": task.description}],
            updated_plan=_with_task(state.plan, task).model_dump(mode="json"),
            carry_progress=True,
            review_phases=[],
            source=SOURCE,
        )


def _base(run: PassContext) -> str:
    """The commit the baseline ran on ("" before a baseline)."""
    return next(
        (
            str(entry.get("base_commit") or "")
            for entry in reversed(run.store.entries())
            if entry.get("type") == VERIFICATION and entry.get("stage") == "baseline"
        ),
        "",
    )


def _repair_task(plan: Plan, note: VerificationNote, attempt: int, changed: list[str]) -> Subtask:
    """The task that mends the tests. It names the files changed since the baseline, so its
    prompt shows them: the 1.5B, shown only the failing test file, rewrote the test."""
    task_id = f"repair_tests_{attempt}"
    while plan.subtask(task_id) is not None:
        task_id += "_"
    where = f" The change was made in {_names(changed)}." if changed else ""
    description = (
        f"Make the tests that passed before the change pass again: {_names(note.new_failures)}."
        f"{where} Run them with run_tests (`{note.command}`); fix the code, not the tests."
    )
    return Subtask(
        id=task_id,
        description=description,
        estimated_complexity="low",
        required_tools=["edit_file"],
    )


def _with_task(plan: Plan, task: Subtask) -> Plan:
    decomposition = plan.task_decomposition.model_copy(
        update={"subtasks": [*plan.task_decomposition.subtasks, task]}
    )
    check = PlannedAction(task_id=task.id, tool=RUN_TESTS.name, purpose="see which tests fail")
    action_plan = plan.action_plan.model_copy(
        update={
            "execution_order": [*plan.action_plan.execution_order, task.id],
            "actions": [*plan.action_plan.actions, check],
        }
    )
    return plan.model_copy(update={"task_decomposition": decomposition, "action_plan": action_plan})


def _names(names: list[str], shown: int = 5) -> str:
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def _unresolved_reason(note: VerificationNote, attempts: int) -> str:
    tried = f"after {attempts} repair attempt(s)" if attempts else "(no repair attempts allowed)"
    return (
        f"tests that passed before the change still fail {tried}: {_names(note.new_failures)}; "
        "the pull request is a draft until a person looks at them"
    )
