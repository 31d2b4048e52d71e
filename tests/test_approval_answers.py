"""A person's answer to an approval request, as the CI layer records it before the pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.approval.commands import Reject, parse_command
from planner.approval.setup import build_gate, build_plan_tool
from planner.approval.waiting import AwaitingApproval
from planner.ci.gate.approvals import record_answer
from planner.config import PlannerConfig
from planner.core.interfaces import ToolCall
from planner.memory.history import PlanningHistoryStore
from planner.text.issue import IssueContext
from planner.tools.build import build_registry

ISSUE = IssueContext(repository="octo/repo", number="7")


def waiting_a1(tmp_path: Path) -> tuple[PlannerConfig, Path, Path]:
    """A pass that ended waiting for a person's approval of a1 (a write, auto_approve off)."""
    repo, history = tmp_path / "repo", tmp_path / "history"
    repo.mkdir()
    config = PlannerConfig.model_validate({"approval": {"auto_approve": []}})
    registry = build_registry(config.tools, repo, (history,))
    journal = PlanningHistoryStore(history, ISSUE.repository, ISSUE.number)
    tool = build_plan_tool(config, repo, history, ISSUE.number, registry.call, journal=journal)
    gate = build_gate(tool, config, "octo/repo#7")
    with pytest.raises(AwaitingApproval):
        gate.before_action("task_1", ToolCall(id="c", name="write_file", arguments=_write()))
    return config, repo, history


def _write() -> dict[str, str]:
    return {"path": "notes.txt", "content": "hello\n"}


def spec_outcomes(config: PlannerConfig, repo: Path, history: Path) -> list[str]:
    journal = PlanningHistoryStore(history, ISSUE.repository, ISSUE.number)
    tool = build_plan_tool(config, repo, history, ISSUE.number, lambda n, a: None, journal=journal)  # type: ignore[arg-type,return-value]
    return [spec.outcome for record in tool.records() for spec in record.state.action_specs]


@pytest.mark.parametrize(
    "text", ["approve a1 thanks!", "approve all, looks good", "reject this one please"]
)
def test_an_approval_with_extra_words_is_not_taken_as_guidance_that_rejects_it(
    tmp_path: Path, text: str
) -> None:
    """`/planner approve a1 thanks!` did not parse as an approval, so it reached the pass as new
    guidance, and the approval phase rejects every waiting spec when guidance arrives: the
    person's approval turned into a rejection. Now nothing is decided and the note says why."""
    config, repo, history = waiting_a1(tmp_path)
    line = record_answer(config, repo, history, ISSUE, text, "octocat")
    assert line is not None and "/planner approve" in line and "nothing was" in line
    assert spec_outcomes(config, repo, history) == ["pending"]


def test_a_plain_approval_is_still_recorded(tmp_path: Path) -> None:
    config, repo, history = waiting_a1(tmp_path)
    assert record_answer(config, repo, history, ISSUE, "approve a1", "octocat") == (
        "octocat approved a1."
    )
    assert spec_outcomes(config, repo, history) == ["approved"]


def test_guidance_that_is_no_approval_word_rejects_nothing(tmp_path: Path) -> None:
    """Issue 25, item 20: only an explicit reject rejects; guidance is answered with what
    still waits, and stays on the issue for the next pass."""
    config, repo, history = waiting_a1(tmp_path)
    line = record_answer(config, repo, history, ISSUE, "use notes.md instead", "octocat")
    assert line is not None and "a1 still wait(s)" in line
    assert spec_outcomes(config, repo, history) == ["pending"]


def test_reject_names_every_spec_listed_with_spaces(tmp_path: Path) -> None:
    """Issue 25, item 8: `reject a1 a3 <why>` rejected only a1 (a3 became the reason)."""
    assert parse_command("reject a1 a3 too big") == Reject(("a1", "a3"), "too big")
    assert parse_command("reject a1, a3") == Reject(("a1", "a3"), "no reason given")
    config, repo, history = waiting_a1(tmp_path)
    line = record_answer(config, repo, history, ISSUE, "reject a1 a3 not now", "octocat")
    assert line == "octocat rejected a1. Not waiting for approval: a3."
    assert spec_outcomes(config, repo, history) == ["rejected"]
