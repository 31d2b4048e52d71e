"""The reason a pass stopped is plain text (issue 59): a model's reply that could not be used
ends the pass with a reason people read in the tracking comment, the job summary and the
terminal, and it used to carry the raw JSON of the reply (`the reply is not JSON: {"done": true,
"summary": {…`). The reply itself stays in the history."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_text
from planner.text.plain import MALFORMED, plain_reason
from tests.plans import committed_repo, finish, planning
from tests.test_verification_pass import of_type, run, write

CUT_OFF = '{"phase": "completion", "done": true, "summary": {"goal_achieved": true, "tasks_'


def test_an_unusable_reply_ends_the_pass_with_a_plain_reason(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """The completion reply breaks off mid-document twice: the pass fails, its reason and
    message say the reply was malformed without quoting it, and the history keeps it."""
    workspace = committed_repo(tmp_path / "repo", {"README.md": "# tool\n"})
    scripted_model.add(
        planning("task_1"),
        write("NOTES.md", "n\n"),
        finish(),
        reply_text("completion", CUT_OFF),
        reply_text("completion", CUT_OFF),
    )
    result = run(workspace, scripted_model, **{"verification.enabled": "off"})

    assert result.status == "failed"
    for shown in (result.stop_reason, *result.messages):
        assert "{" not in shown and '"summary"' not in shown, shown
    assert result.stop_reason.startswith("the model's completion reply was unusable twice")
    assert result.stop_reason.endswith(MALFORMED)
    (end,) = of_type(workspace, "run_end")
    assert end["stop_reason"] == result.stop_reason
    (error,) = of_type(workspace, "error")
    assert '"summary": {' in error["message"]  # what the model sent is still on record


@pytest.mark.parametrize(
    ("reason", "plain"),
    [
        ("all tasks finished", "all tasks finished"),
        (  # a reply's field that holds a document: its text is the reason
            'clarification needed: {"summary": {"reason": "which  file?"}, "done": false}',
            "clarification needed: which file?",
        ),
        (  # nothing to read in it: said malformed
            'the reply is not JSON: {"done": true, "tasks": [1, 2]}',
            f"the reply is not JSON: {MALFORMED}",
        ),
        (  # cut off inside a parenthesis: the parenthesis is closed
            f"cut off at the output limit (the reply is not JSON: {CUT_OFF}",
            f"cut off at the output limit (the reply is not JSON: {MALFORMED})",
        ),
        (  # strings without a known key are joined; text after the document stays
            'stopped: ["a", "b"] and more',
            "stopped: a; b and more",
        ),
        ("a set {1, 2} and f(x) stay", "a set {1, 2} and f(x) stay"),
    ],
)
def test_json_in_a_reason_becomes_its_text(reason: str, plain: str) -> None:
    assert plain_reason(reason) == plain
