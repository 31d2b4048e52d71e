"""Changes to documents judged before `completed`: a document keeps the lines the issue did not
ask to change, and a change to documents alone never proves behaviour the issue asks for.

Both checks run before the tests decide anything (phase.py's before_completion): a README
written back with only its new section, or a README line describing an option no code has, is
not finished work whatever the tests say. Where the repository's tests cannot run, the command
the issue shows (`python3 tool.py --count notes.txt`) is the issue's test (commands.py)."""

from __future__ import annotations

from planner.engine.context import PassContext
from planner.outcome.evidence import UNPROVEN, TestRun
from planner.outcome.flow import StopPass
from planner.tools.files.document_edits import is_document
from planner.tools.files.paths import read_in_tree
from planner.verification.reproduction.behaviour import (
    behaviour_asked,
    documents_only,
    lost_lines,
)
from planner.verification.reproduction.commands import command_test
from planner.verification.reproduction.issue_test import IssueTest, issue_test_path
from planner.verification.reproduction.records import active_test, kept_test
from planner.verification.runs import PassTests
from planner.verification.suite.changes import changed_files, text_at, working_files

DOCUMENTS_LOST = "verification_documents_lost"
FIX_UNPROVEN = "the fix is unproven"


def command_issue_test(tests: PassTests, run: PassContext, path: str) -> str | None:
    """Without the repository's tests: the command the issue shows, with what it should
    print, as the issue's test (None: the tests run, or the issue shows no command that can)."""
    return None if tests.usable else command_test(run.issue.body, tests.workspace, path)


def stop_if_documents_lost(tests: PassTests, run: PassContext) -> None:
    """`completed` needs every document the change touched to keep the lines the issue did
    not ask to change (planner.tools.files.document_edits); a person looks otherwise."""
    dirty = tests.start(run).dirty
    changed = [p for p in _changed(tests, run) if is_document(p) and p not in dirty]
    base = tests.base(run)
    texts = {path: (text_at(tests.workspace, base, path), _now(tests, path)) for path in changed}
    lost = lost_lines(texts, f"{run.issue.title}\n{run.issue.body}")
    if lost:
        reason = f"the change removes lines the issue did not ask to change from {lost}"
        run.store.append(DOCUMENTS_LOST, reason=reason)
        raise StopPass("needs_human", reason)


def stop_if_only_documented(tests: PassTests, run: PassContext) -> None:
    """The change is to documents alone and the issue asks for behaviour: no test of the
    issue judges it, so the command the issue shows must run (commands.py), or the pass
    ends needs_human saying so (reproduction/behaviour.py)."""
    entries = run.store.entries()
    if tests.settings.enabled == "off" or not documents_only(_changed(tests, run)):
        return
    if active_test(entries) is not None or kept_test(entries):
        return  # the issue's test judges the change
    text = f"{run.issue.title}\n{run.issue.body}"
    asked = behaviour_asked(text, tests.workspace, working_files(tests.workspace))
    if not asked:
        return
    shown = _issue_command(tests, run)
    if shown is not None and shown.status == "passed":
        return  # the behaviour the issue shows is there: the documents describe it
    checked = f"the command it shows fails ({shown.counts()})" if shown and shown.ran else ""
    why = checked or "no check of that behaviour could run"
    reason = (
        f"{FIX_UNPROVEN}: only documentation changed, but the issue asks for behaviour "
        f"({asked}) and {why}"
    )
    run.store.append(UNPROVEN, reason=reason)
    raise StopPass("needs_human", reason)


def _issue_command(tests: PassTests, run: PassContext) -> TestRun | None:
    """The command the issue shows, run now as its test would run it (None: it shows no
    command that can run, or pytest does not run here)."""
    path = issue_test_path(tests.workspace, run.issue.number, run.issue.title)
    content = command_test(run.issue.body, tests.workspace, path)
    if content is None or not tests.pytest:
        return None
    return tests.issue_run(IssueTest(path=path, content=content))


def _changed(tests: PassTests, run: PassContext) -> list[str]:
    """Every file changed since the baseline, planner's own folders aside."""
    return changed_files(
        tests.workspace, tests.base(run), lambda path: not path.startswith(tests.excluded)
    )


def _now(tests: PassTests, path: str) -> str:
    whole = tests.workspace / path
    data = read_in_tree(tests.workspace, path) if whole.is_file() else None
    return data.decode("utf-8", errors="replace") if data is not None else ""
