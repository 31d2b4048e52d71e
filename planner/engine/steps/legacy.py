"""Legacy mode (planning.enabled: false, seed §7.5): the model works the issue with tools,
without a plan, until it finishes or stops calling tools. The whole issue is one task
("legacy"): its turns run like a task's (planner.engine.steps.execute.task_turns)."""

from __future__ import annotations

from functools import partial
from typing import Any, NoReturn

from planner.core.interfaces import ShownFiles
from planner.engine.context import PassContext
from planner.engine.steps.execute import Finish, task_turns
from planner.model.conversation import user
from planner.outcome.evidence import VerificationNote, evidence_text, verification_note
from planner.outcome.flow import PlanChanged, StopPass
from planner.plan.task_guard import TaskGuard, did_nothing
from planner.text.issue import prompt_view
from planner.text.prompts import render

LEGACY = "legacy"


def run_legacy(run: PassContext) -> NoReturn:
    run.phases.start(run)  # the tests' baseline, when the repository has tests
    feedback = ""
    while True:
        finish = _attempt(run, feedback)
        try:
            # The tests decide as they do with a plan: an unproven change is tried again from
            # the start (PlanChanged with what failed), or the pass ends needs_human.
            run.phases.before_completion(run)
        except PlanChanged as again:
            feedback = again.feedback
            continue
        break
    run.store.append("completion", done=True, summary={}, comment=finish[1])
    raise StopPass("completed" if finish[0] == "completed" else "failed", finish[1] or "done")


def _attempt(run: PassContext, feedback: str) -> Finish:
    """One attempt at the issue, in a conversation of its own; `feedback` says what the
    attempts before it failed on."""
    # Seed §7.5: without planning the base system prompt is used, without the planning section.
    files = run.shown_files([f"{run.issue.title}\n{run.issue.body}"])
    whole_file = run.writes_whole(files)
    request = render(
        "legacy_request.md.j2",
        issue=prompt_view(run.issue),
        files=files.text,
        whole_file=whole_file,
        windows=whole_file and bool(files.windows),
    )
    system = render("system_legacy.md.j2", whole_file=whole_file)
    messages = [{"role": "system", "content": system}, user(request + _after(feedback))]
    # Without a plan the whole issue is one task: it gets twice a task's calls.
    guard = TaskGuard(2 * run.config.budget.max_actions_per_task, files.whole, files.windows)
    finish = _checked_turns(run, messages, guard, whole_file)
    if _undone(run, finish):
        finish = ("failed", f"nothing was changed. The model said: {finish[1]}")
    return finish


def _after(feedback: str) -> str:
    return f"\n\n{feedback}" if feedback else ""


def _checked_turns(
    run: PassContext, messages: list[dict[str, Any]], guard: TaskGuard, whole_file: bool
) -> Finish:
    """The turns until the model finishes; a finish that leaves tests failing which passed
    before goes back to the model with the failures, up to verification.max_repair_attempts."""
    undone = partial(_nothing_changed, run)
    note = None
    for _ in range(run.config.verification.max_repair_attempts + 1):
        finish = task_turns(run, LEGACY, messages, guard, undone, LEGACY, write_first=whole_file)
        run.phases.after_task(run, LEGACY, *finish)  # the tests run when files changed
        note = verification_note(run.store.entries())
        if finish[0] != "completed" or note is None or not note.unfinished:
            return finish
        if guard.stands_by and not note.regressed:
            return finish  # the issue's own test had its round: a model wrote it, it may be wrong
        guard.stands_by = not note.regressed
        messages.append(user(_failing_tests(run, guard, whole_file, note)))
    if note is None or not note.regressed:
        return finish  # only the issue's own test fails: the result says so
    return "failed", "; ".join(note.still_failing())


def _failing_tests(
    run: PassContext, guard: TaskGuard, whole_file: bool, note: VerificationNote
) -> str:
    """The failures, and with whole_file the files the model changed and those the output names
    (the failing test file among them), shown whole so the model can write them back; its own
    files first (shown the test first, the 1.5B rewrote the test)."""
    evidence = evidence_text(run.store.entries())
    changed = " ".join(sorted(guard.changed))
    files = run.shown_files([changed, evidence]) if whole_file else ShownFiles()
    guard.shown |= files.whole
    return render(
        "tests_failing.md.j2",
        evidence=evidence,
        whole_file=whole_file,
        files=files.text,
        regressed=note.regressed,
        added=note.regressed and not note.broken,
    )


def _nothing_changed(run: PassContext, finish: Finish) -> bool:
    """The model finished, completed or failed, without changing anything: it is told so once
    (a small model gives up on the first error of its own edit, which is its to fix)."""
    return did_nothing(run.state().actions_by_task.get(LEGACY, []))


def _undone(run: PassContext, finish: Finish) -> bool:
    """The issue asks for a change: a run that changed and ran nothing did not resolve it."""
    return finish[0] == "completed" and _nothing_changed(run, finish)
