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

from functools import partial
from pathlib import Path
from typing import Any

from planner.engine.config import PlannerConfig
from planner.engine.context import PassContext
from planner.engine.conversation import user
from planner.engine.flow import PlanChanged, StopPass
from planner.engine.interfaces import ToolCall, ToolResult, ToolSpec
from planner.engine.issue import prompt_view
from planner.engine.phase import Phase, Request
from planner.engine.prompts import render
from planner.engine.tool_names import WRITE_TOOLS, path_argument
from planner.engine.verification import (
    VERIFICATION,
    Stage,
    TestRun,
    VerificationNote,
    baseline_of,
    evidence_text,
    is_test_file,
    new_failures,
    recorded_runs,
    verification_note,
)
from planner.tools.isolation import SandboxUser
from planner.verification.changes import (
    added_tests,
    changed_files,
    changed_test_files,
    diff_since,
    files_using,
    fingerprint,
    head_commit,
    removed_names,
)
from planner.verification.detect import NO_TESTS, Verification, resolve
from planner.verification.issue_test import (
    ISSUE_TEST,
    IssueTest,
    example_test,
    failing_only,
    issue_test_from_reply,
    issue_test_path,
    placed,
)
from planner.verification.repair_task import (
    failing_names,
    repair_goal,
    repair_task,
    unresolved_reason,
    with_task,
)
from planner.verification.runner import TestRunner, Watch
from planner.verification.undo import RepairUndo

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
SOURCE = "verification"
NAMES_SHOWN = 20
CHANGE_LINES = 80
"""Lines of the change's diff shown with failing tests."""
ISSUE_TEST_IS_PLANNERS = (
    "is planner's test of the issue, written from it before the change, and stays as it is: "
    "change the code so that it passes"
)


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
        self.repair = RepairUndo(workspace)

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
        if not run.config.planning.enabled:
            self._write_issue_test(run)  # no plan will come: the issue is all there is

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
        head = head_commit(self.workspace)
        # Test files already changed or new before planner acts (a local run on a checkout
        # with work in progress): their tests are the maintainer's, never "added by the change".
        dirty = changed_test_files(self.workspace, head, self.settings.test_paths)
        result = self._run(run, "baseline", "", base_commit=head, dirty_tests=dirty)
        if setup_problem and result.status != "passed":
            run.store.append(SETUP, ok=False, problems=[f"the tests ran after: {setup_problem}"])
        self.usable = result.ran

    # -- runs --------------------------------------------------------------------------------

    def _run(self, run: PassContext, stage: Stage, task_id: str, **extra: Any) -> TestRun:
        test = _active_test(run.store.entries()) if stage != "baseline" else None
        result = self.runner.run_tests(self.found, partial(placed, self.workspace, test))
        result = result.model_copy(
            update={
                "stage": stage,
                "task_id": task_id,
                "changed_tests": self._changed_tests(run),
                "issue_test": test.path if test is not None else "",
                "added": self._added(run, stage, result.failing),
            }
        )
        tree = fingerprint(self.workspace)  # as the run left it (caches it wrote included)
        run.store.append(VERIFICATION, **result.model_dump(), fingerprint=tree, **extra)
        self.checked = tree
        run.progress(f"tests ({stage}): {result.counts()}")
        if test is not None and stage != "issue" and _passes(result):
            self._keep_issue_test(run, test, task_id)
        return result

    # -- the issue's own test ----------------------------------------------------------------

    def _write_issue_test(self, run: PassContext) -> None:
        """Once per issue, after the baseline: the model writes a test of what the issue
        asks; it is used only when it fails on the code before the change."""
        if not self._issue_test_applies(run):
            return
        path = issue_test_path(self.workspace, run.issue.number)
        messages, stated = self._issue_test_request(run, path)
        reply = run.chat("issue_test", messages, [])
        content = issue_test_from_reply(reply.content, stated)
        if content is None:
            run.store.append(ISSUE_TEST, status="dropped", reason="the reply held no test")
            return
        self._try_issue_test(run, IssueTest(path=path, content=content))

    def _issue_test_applies(self, run: PassContext) -> bool:
        entries = run.store.entries()
        return (
            self.usable
            and self.settings.issue_test
            and "pytest" in self.found.display
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
        )
        issue = run.issue
        comments = [comment.body for comment in issue.comments]
        stated = "\n".join([issue.title, issue.body, *comments, issue.instruction, example])
        return [run.system("issue_test"), user(request)], stated

    def _try_issue_test(self, run: PassContext, test: IssueTest) -> None:
        """Run it on the code before the change; keep only its tests that fail there."""
        run.store.append(ISSUE_TEST, status="active", path=test.path, content=test.content)
        result = self._run(run, "issue", "")
        failing = result.issue_failures
        content = failing_only(test.content, test.path, failing) if result.ran else None
        if content is None:
            reason = "it passes on the code before the change, so it does not test the issue"
            run.store.append(ISSUE_TEST, status="dropped", path=test.path, reason=reason)
        elif content != test.content:
            run.store.append(ISSUE_TEST, status="active", path=test.path, content=content)

    def _keep_issue_test(self, run: PassContext, test: IssueTest, task_id: str) -> None:
        """It passes: it goes into the pull request as the issue's regression test, written
        like any file (the approval gate and the path rules judge it; the action is recorded)."""
        arguments = {"path": test.path, "content": test.content}
        call = ToolCall(id=f"{ISSUE_TEST}_{test.path}", name="write_file", arguments=arguments)
        result = run.act(task_id or SOURCE, call)
        status = "kept" if result.ok else "not_kept"
        run.store.append(ISSUE_TEST, status=status, path=test.path, reason=result.error or "")
        self.checked = fingerprint(self.workspace)

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
        if not self.usable:
            return ""
        entries = run.store.entries()
        if request == "planning":
            return self._planning_text(entries)
        if request == "execute":
            return self._feedback(run, verification_note(entries))
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

    def _feedback(self, run: PassContext, note: VerificationNote | None) -> str:
        if note is None or not note.unfinished or note.latest is None:
            return ""
        return render(
            "verification_feedback.md.j2",
            command=note.command,
            new_failures=note.broken[:NAMES_SHOWN],
            added_failures=note.added_failures[:NAMES_SHOWN],
            issue_failures=note.issue_failures[:NAMES_SHOWN],
            tool=RUN_TESTS.name,
            tail=note.latest.tail,
            change=self._change(run) if note.regressed else "",
        )

    def _change(self, run: PassContext) -> str:
        """The code changed since the tests passed, as a diff: the 1.5B dropped `sorted()`
        while adding `--reverse`, and shown the failure and the new file it wrote the same
        file back twice; what its change removed is what the failing test needs."""
        return diff_since(self.workspace, _base(run), self._changed_code(run), CHANGE_LINES)

    def after_plan(self, run: PassContext, reply: Any, event: Any) -> None:
        self._write_issue_test(run)  # once per issue, when there is a plan to carry out

    def tools(self, run: PassContext) -> list[ToolSpec]:
        return [RUN_TESTS] if self.usable else []

    def before_action(self, run: PassContext, task_id: str, call: ToolCall) -> ToolResult | None:
        test = _active_test(run.store.entries())
        if test is not None and _writes(call, test.path):
            # The 1.5B, shown the issue's test failing, wrote its own version of it.
            return ToolResult(ok=False, error=f"{test.path} {ISSUE_TEST_IS_PLANNERS}")
        self.repair.before_write(task_id, call)
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
            self._undo_if_mended_nothing(run, task_id)

    def _undo_if_mended_nothing(self, run: PassContext, task_id: str) -> None:
        note = verification_note(run.store.entries())
        failing = failing_names(note) if note else []
        if not self.repair.mended_nothing(task_id, failing):
            return
        restored = self.repair.undo()
        run.store.append(UNDONE, task_id=task_id, paths=restored, still_failing=failing)
        self._run(run, "task", task_id)  # the tests as the tree is again

    # -- before completion: repair or stop ---------------------------------------------------

    def before_completion(self, run: PassContext) -> None:
        if not self.usable:
            return
        if self._tree_changed(run):
            self._run(run, "final", "")
        note = verification_note(run.store.entries())
        if note is None or not note.unfinished:
            return
        attempts = self._repairs(run.store.entries())
        if attempts < self._repair_limit(note):
            self._add_repair_task(run, note, attempts + 1)
            raise PlanChanged()
        if not note.regressed:
            return  # only the issue's own test fails: the result says so, the pass goes on
        run.store.append(UNRESOLVED, new_failures=note.new_failures, repairs=attempts)
        reason = unresolved_reason(note, attempts)
        raise StopPass("needs_human", reason, [note.line()])

    def _repair_limit(self, note: VerificationNote) -> int:
        """The issue's own test alone gets one repair: a model wrote it, it may be wrong."""
        limit = self.settings.max_repair_attempts
        return limit if note.regressed else min(1, limit)

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


def _active_test(entries: list[dict[str, Any]]) -> IssueTest | None:
    """The issue's test while it is placed for each run (written, not yet dropped or kept)."""
    latest = next((entry for entry in reversed(entries) if entry.get("type") == ISSUE_TEST), None)
    if latest is None or latest.get("status") != "active":
        return None
    try:
        return IssueTest.model_validate(latest)
    except ValueError:
        return None


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
