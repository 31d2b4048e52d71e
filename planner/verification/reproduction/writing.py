"""The model writes the issue's test, and the first run on the code before the change judges
it: the request, the test its reply holds, and which of its tests are kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from planner.engine.context import PassContext
from planner.model.conversation import user
from planner.outcome.evidence import ISSUE_TEST, TestRun
from planner.text.issue import prompt_view
from planner.text.prompts import render
from planner.verification.reproduction.contrary import without_contrary_checks
from planner.verification.reproduction.issue_test import (
    IssueTest,
    collection_problem,
    example_test,
    failing_only,
    issue_test_from_reply,
)
from planner.verification.reproduction.records import stated
from planner.verification.reproduction.stated_calls import only_reported, with_stated_calls

ONLY_REPORTED = (
    "only its checks that a result the issue reports is gone fail on the code before the "
    "change: they do not show the right result"
)
CONTRARY = "its checks expected the result the issue reports as wrong"
NO_TEST = "the reply held no test"
PASSES_BEFORE = "it passes on the code before the change, so it does not test the issue"


def written_test(
    run: PassContext, workspace: Path, path: str, plain_functions: bool
) -> tuple[IssueTest | None, str, str]:
    """The model's test of the issue (with the calls the issue states), the text whose
    values it may use, and who wrote it: the model, or planner from the issue's stated calls
    alone (None: no test is left, and the drop is recorded with why).

    A check of the model's that expects the very result the issue reports as wrong (a
    `pytest.raises` of the reported error, an equality with the reported value) is removed
    first (contrary.py): kept, it would fail on the bug and reject the right fix."""
    messages, text = _request(run, workspace, path, plain_functions)
    reply = run.chat("issue_test", messages, [])
    written = issue_test_from_reply(reply.content, text)
    written, contrary = without_contrary_checks(written, run.issue.body, workspace)
    if contrary:
        run.store.append(ISSUE_TEST, status="trimmed", removed=contrary, reason=CONTRARY)
    content = with_stated_calls(written, run.issue.body, workspace)
    if content is None:
        run.store.append(ISSUE_TEST, status="dropped", reason=CONTRARY if contrary else NO_TEST)
        return None, text, ""
    source = "model" if written is not None else "issue text"
    return IssueTest(path=path, content=content), text, source


def _request(
    run: PassContext, workspace: Path, path: str, plain_functions: bool
) -> tuple[list[dict[str, Any]], str]:
    """The request, and the text whose values the test may use: the issue and the example
    test (its comments and the instruction of the run included)."""
    files = run.shown_files([f"{run.issue.title}\n{run.issue.body}"])
    modules = [Path(name).stem for name in files.whole if name.endswith(".py")]
    example_path, example = example_test(workspace, modules)
    request = render(
        "issue_test_request.md.j2",
        issue=prompt_view(run.issue),
        files=files.text,
        example_path=example_path,
        example=example,
        path=path,
        plain_functions=plain_functions,
    )
    return [run.system("issue_test"), user(request)], stated(run.issue, example)


def judged(test: IssueTest, result: TestRun, text: str, workspace: Path) -> tuple[str | None, str]:
    """Of the test run on the code before the change, what is kept (its tests that fail
    there; None: nothing, also when the file fails before any check for a reason the issue
    does not give) and, when nothing is, why."""
    failing = result.issue_failures
    content = failing_only(test.content, test.path, failing) if result.ran else None
    broken = collection_problem(result.tail, text, workspace)
    if not result.ran:
        reason = f"it could not run: {result.reason}"
    elif test.path in failing and broken:
        content, reason = None, broken
    else:
        reason = PASSES_BEFORE
    if content is not None and only_reported(content):
        content, reason = None, ONLY_REPORTED
    return content, reason
