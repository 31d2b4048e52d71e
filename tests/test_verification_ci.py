"""What people see of the tests (issue 23): the pull request body and title, its draft state, the
tracking comment and the job summary, on the fake GitHub and GitLab with a real pytest suite.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from planner.ci.forges.base import TRACKING_MARKER
from planner.ci.report.summary import SummaryFacts, open_history, render_summary
from planner.ci.report.tracking import ADDED_TESTS_WARNING, REGRESSION_WARNING
from planner.testing.steps import Step, reply_tool_calls
from tests.fake_forge import FakeGitHub, FakeGitLab
from tests.fake_forge.rig import Rig
from tests.fake_forge.scenario import gitlab_payload, labeled_event
from tests.plans import ROOT_TOOLS, completion, finish, planning
from tests.test_verification_pass import BROKEN_ADD, BUGGY, GOOD, PYTEST, TESTS, WRONG_TEST

SETTINGS: dict[str, Any] = {
    "planning.replanning.enabled": False,
    "planning.reflection.enabled": False,
    "verification.command": PYTEST,
    "verification.issue_test": False,  # its own tests: tests/test_issue_test.py
    **ROOT_TOOLS,  # the tests run with this checkout's interpreter
}


def push_calc_project(fake: FakeGitHub | FakeGitLab) -> None:
    """main gets calc.py (sub is wrong) and its tests: test_add passes, test_sub fails."""
    pytest_ini = "[pytest]\npythonpath = .\n"
    fake.push_main(
        {"calc.py": BUGGY, "tests/test_calc.py": TESTS, "pytest.ini": pytest_ini}, "calc"
    )


def edit_calc(content: str) -> list[Step]:
    """Plan one task that writes calc.py (no completion: the regression stops the pass)."""
    write = reply_tool_calls("execute", [("write_file", {"path": "calc.py", "content": content})])
    return [planning("task_1"), write, finish()]


def github_rig(fake: FakeGitHub, tmp_path: Path) -> Rig:
    fake.add_issue(1, "sub adds", "calc.sub adds instead of subtracting.", labels=["planner"])
    fake.permissions["Codertocat"] = "write"
    push_calc_project(fake)
    return Rig("github", fake, tmp_path)


def test_a_regression_opens_a_draft_that_says_so(fake_github: FakeGitHub, tmp_path: Path) -> None:
    rig = github_rig(fake_github, tmp_path)
    outcome = rig.run(
        labeled_event(),
        edit_calc(BROKEN_ADD),
        event_name="issues",
        **SETTINGS,
        **{"verification.max_repair_attempts": 0, "forge.draft_pr": False},
    )

    assert outcome.status == "needs_human"
    [pull] = fake_github.pulls.values()
    assert pull.draft  # although forge.draft_pr is false
    assert pull.title.startswith("[tests failing] sub adds")
    assert REGRESSION_WARNING in pull.body
    assert "Failing now but not before the change: `tests/test_calc.py::test_add`" in pull.body
    assert f"Tests (`{PYTEST}`): 1 passed, 1 failed — 1 failing before" in pull.body
    [tracking] = [c for c in fake_github.comments_on(1) if TRACKING_MARKER in c.body]
    assert REGRESSION_WARNING in tracking.body
    assert "1 passed, 1 failed — 1 failing before" in tracking.body

    history = open_history(rig.history, fake_github.repository, 1)
    summary = render_summary(outcome, SummaryFacts(history=history))
    assert f"Tests (`{PYTEST}`): 1 passed, 1 failed — 1 failing before" in summary
    assert REGRESSION_WARNING in summary


def test_a_failing_test_the_change_added_is_not_called_one_that_passed_before(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    """The change fixes sub and adds a wrong test: nothing that passed before fails, so the
    draft says the change's own test fails, not that it broke the repository's tests."""
    rig = github_rig(fake_github, tmp_path)
    script = [
        planning("task_1"),
        reply_tool_calls(
            "execute",
            [
                ("write_file", {"path": "calc.py", "content": GOOD}),
                ("write_file", {"path": "tests/test_calc.py", "content": WRONG_TEST}),
            ],
        ),
        finish(),
    ]
    outcome = rig.run(
        labeled_event(),
        script,
        event_name="issues",
        **SETTINGS,
        **{"verification.max_repair_attempts": 0},
    )

    assert outcome.status == "needs_human"
    assert "tests the change added fail" in outcome.reason
    [pull] = fake_github.pulls.values()
    assert pull.draft and pull.title.startswith("[tests failing] ")
    for body in (pull.body, *(c.body for c in fake_github.comments_on(1))):
        assert REGRESSION_WARNING not in body
        assert "Failing now but not before the change" not in body
    assert ADDED_TESTS_WARNING in pull.body
    assert "Tests the change added that fail: `tests/test_calc.py::test_mul`" in pull.body
    [tracking] = [c for c in fake_github.comments_on(1) if TRACKING_MARKER in c.body]
    assert ADDED_TESTS_WARNING in tracking.body


def test_a_fix_shows_its_tests_and_the_edited_test_files(
    fake_gitlab: FakeGitLab, tmp_path: Path
) -> None:
    fake_gitlab.add_issue(
        12, "sub adds", "calc.sub adds instead of subtracting.", labels=["planner"]
    )
    fake_gitlab.members[7] = 30
    push_calc_project(fake_gitlab)
    rig = Rig("gitlab", fake_gitlab, tmp_path)
    commented = TESTS.replace("assert add(2, 3) == 5", "assert add(2, 3) == 5  # checked")
    script = [
        planning("task_1"),
        reply_tool_calls("execute", [("write_file", {"path": "calc.py", "content": GOOD})]),
        reply_tool_calls(
            "execute", [("write_file", {"path": "tests/test_calc.py", "content": commented})]
        ),
        finish(),
        completion(),
    ]
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps(gitlab_payload("issue_hook")), encoding="utf-8")
    outcome = rig.run(None, script, env=rig.env(TRIGGER_PAYLOAD=str(payload)), **SETTINGS)

    assert outcome.status == "completed", outcome.reason
    [merge_request] = fake_gitlab.merge_requests.values()
    body = merge_request.description
    assert f"Tests (`{PYTEST}`): 2 passed, 0 failed — 1 failing before" in body
    assert "Test files changed by planner (review them): `tests/test_calc.py`" in body
    assert REGRESSION_WARNING not in body
    assert not merge_request.title.startswith(("Draft:", "[tests failing]"))
