"""Snapshot of the planning prompt with a repository map and exploration findings."""

from __future__ import annotations

from pathlib import Path

from planner.config import RepositoryMapConfig
from planner.core.interfaces import ToolSpec
from planner.grounding.index import RepositoryIndex, build_index
from planner.grounding.repo_map import render_map
from planner.text.issue import IssueContext, prompt_view
from planner.text.prompts import render
from tests.snapshot import assert_snapshot
from tests.test_grounding_map import CALC

ISSUE = IssueContext(
    repository="octo/calc",
    number="3",
    title="Implement parse_config",
    body="`parse_config` in calc.py is a stub; implement it from its docstring.",
)


def test_planning_request_prompt_with_a_map(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(CALC, encoding="utf-8")
    (tmp_path / "README.md").write_text("# Calc\n\n## Usage\n", encoding="utf-8")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text("def test_add():\n    assert True\n")
    index = build_index(tmp_path, 262_144)
    fixed = RepositoryIndex(commit="0123456789abcdef0123", files=index.files)
    shown = render_map(tmp_path, fixed, RepositoryMapConfig(), ISSUE.title + "\n" + ISSUE.body)
    prompt = render(
        "planning_request.md.j2",
        issue=prompt_view(ISSUE),
        tools=[ToolSpec(name="read_file", description="Read a text file")],
        history="",
        max_subtasks=100,
        repository=shown.text,
        findings="calc.parse_config raises NotImplementedError; tests/test_calc.py tests add only.",
    )
    assert_snapshot("planning_request_map.txt", prompt)
