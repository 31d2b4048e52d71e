"""A candidate that fails the issue's test costs one run of that test: the changed file's
tests run only for a candidate that passed it (planner.verification.runs.PassTests.trial).

On a released package the tests of a module take many times as long as the issue's test, and
mechanical candidates come by the dozen: running them after every failing candidate spent a
pass's time before the model was asked for one fix.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_text
from planner.verification.suite.runner import TestRunner
from tests.plans import completion
from tests.test_candidates import ISSUE_TEST, NOT_IT, RIGHT, UNCHANGED_PUSH, queues_repo, run
from tests.test_verification_pass import of_type


@pytest.fixture
def commands(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every test command the pass runs, in order."""
    ran: list[str] = []
    original = TestRunner.run_argv

    def recorded(self: TestRunner, argv: list[str], *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        ran.append(" ".join(argv))
        return original(self, argv, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(TestRunner, "run_argv", recorded)
    yield ran


def test_failing_candidates_run_the_issues_test_alone(
    tmp_path: Path, scripted_model: ScriptedModelServer, commands: list[str]
) -> None:
    workspace = queues_repo(tmp_path / "repo")
    scripted_model.add(
        reply_text("candidate", NOT_IT),  # Lifo.pop: the issue's test fails
        reply_text("candidate", UNCHANGED_PUSH),  # Lifo.push: nothing to run
        reply_text("candidate", "```python\nimport os\n```"),  # Lifo.__init__: unusable
        reply_text("candidate", RIGHT),
        completion(),
    )
    result = run(workspace, scripted_model, **{"verification.mutants": 0})

    assert result.status == "completed", result.stop_reason
    judged = [(c["number"], c["outcome"]) for c in of_type(workspace, "candidate")]
    assert judged == [(1, "issue_test_fails"), (2, "unchanged"), (3, "unusable"), (4, "passes")]
    alone = [
        i for i, c in enumerate(commands) if c.endswith(f" {ISSUE_TEST}") and "queues" not in c
    ]
    trials = commands[alone[0] + 1 :]  # after the issue's test's first run, on the code as it was
    first_module_run = next(i for i, c in enumerate(trials) if "tests/test_queues.py" in c)
    # candidate 1 ran the issue's test alone; the module's tests ran first for the winner,
    # candidate 4, after its issue's test passed
    assert trials[:first_module_run] == [commands[alone[0]]] * 2, trials
