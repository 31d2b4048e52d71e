"""The task that mends the tests: what it says, and the plan it is added to.

When the tests that passed at the baseline fail at the end of a pass (or the issue's own test
does), the verification phase (planner.verification.phase) adds a repair task as a revision of
the plan; its text names the failing tests, the files changed and the names a rename left used.
"""

from __future__ import annotations

from typing import Any

from planner.outcome.evidence import VerificationNote, listed
from planner.plan.documents import Plan, PlannedAction, Subtask
from planner.verification.fixes.attempts import attempt_failed

REPAIR = "verification_repair"


def repair_task(
    plan: Plan,
    note: VerificationNote,
    attempt: int,
    changed: list[str],
    still_used: dict[str, list[str]],
) -> Subtask:
    """The task that mends the tests. It names the files changed since the baseline, so its
    prompt shows them (the 1.5B, shown only the failing test file, rewrote the test), and the
    files that still use a name the change removed (a rename: the 1.5B renamed the function,
    and shown only its file and the test that failed to import it, wrote its file again).
    Failing tests the change itself added may be fixed or removed (the 1.5B added a wrong
    test to a docs change and, told to make "the tests that passed before" pass without
    changing tests, could do neither)."""
    task_id = f"repair_tests_{attempt}"
    while plan.subtask(task_id) is not None:
        task_id += "_"
    where = f" The change was made in {listed(changed)}." if changed else ""
    users = "".join(
        f" `{name}`, which the change removed, is still used in {listed(files)}."
        for name, files in still_used.items()
        if files
    )
    own = " or the change added it" if note.added_failures else ""
    description = (
        f"{repair_goal(note)}{where}{users} Run them with run_tests (`{note.command}`); "
        f"fix the code, and change a test only where the issue asks for it{own}."
    )
    return Subtask(
        id=task_id,
        description=description,
        estimated_complexity="low",
        required_tools=["edit_file"],
    )


def failing_names(note: VerificationNote) -> list[str]:
    """The tests a repair is to make pass: those the change broke, then the issue's own."""
    return [*note.new_failures, *note.issue_failures]


def repair_goal(note: VerificationNote) -> str:
    """What the repair is for: tests the change broke, tests it added that fail, the issue's
    own test, or several of these."""
    parts = []
    broken, new = note.broken, note.added_failures
    if broken:
        again = listed(broken)
        parts.append(f"Make the tests that passed before the change pass again: {again}.")
    if new:
        parts.append(
            f"Tests this change added fail: {listed(new)}; fix them, or remove them if the "
            "issue does not ask for them."
        )
    if note.issue_failures:
        parts.append(f"Make the issue's test pass: {listed(note.issue_failures)}.")
    return " ".join(parts)


def with_task(plan: Plan, task: Subtask, check_tool: str) -> Plan:
    """`plan` with `task` run last, its planned action `check_tool` (the tests)."""
    decomposition = plan.task_decomposition.model_copy(
        update={"subtasks": [*plan.task_decomposition.subtasks, task]}
    )
    check = PlannedAction(task_id=task.id, tool=check_tool, purpose="see which tests fail")
    action_plan = plan.action_plan.model_copy(
        update={
            "execution_order": [*plan.action_plan.execution_order, task.id],
            "actions": [*plan.action_plan.actions, check],
        }
    )
    return plan.model_copy(update={"task_decomposition": decomposition, "action_plan": action_plan})


def unresolved_reason(note: VerificationNote, attempts: int | None) -> str:
    """Why the pass ends needs_human; `attempts`: the repair tasks made (None: no plan, the
    model was told about the failures in its conversation)."""
    tried = f"after {attempts} repair attempt(s)" if attempts else "(no repair attempts allowed)"
    tried = "after the model was shown them" if attempts is None else tried
    draft = "the pull request is a draft until a person looks at them"
    unproven = []
    if note.unfixed:
        failing = listed(note.unfixed)
        unproven.append(
            f"tests of the changed code that failed before the change still fail {tried}: "
            f"{failing}; the fix may be incomplete"
        )
    if note.issue_failures:
        failing = listed(note.issue_failures)
        unproven.append(f"the issue's test still fails {tried}: {failing}; the fix is unproven")
    return "; ".join([*note.still_failing(tried), *unproven, draft])


def repairs_made(entries: list[dict[str, Any]]) -> int:
    """Repair tasks added in this attempt, since a person last gave an instruction."""
    count = 0
    for entry in entries:
        if entry.get("type") == "human_input" or attempt_failed(entry):
            count = 0
        elif entry.get("type") == REPAIR:
            count += 1
    return count


def repair_limit(note: VerificationNote, limit: int) -> int:
    """The issue's own test alone gets one repair: a model wrote it, it may be wrong."""
    return limit if note.regressed else min(1, limit)
