"""The registry's own rules: routing, duplicates, provider failures, problems, cleanup order."""

from __future__ import annotations

from typing import Any

import pytest

from planner.core.interfaces import ToolResult, ToolSpec
from planner.tools.registry import ToolRegistry, one_line


class Provider:
    """A provider with fixed tools whose calls echo the tool name, or raise when told to."""

    def __init__(self, *names: str, raises: bool = False, log: list[str] | None = None) -> None:
        self.names = names
        self.raises = raises
        self.problem: str | None = None
        self.log = log if log is not None else []

    def list_tools(self) -> list[ToolSpec]:
        return [ToolSpec(name=name, description=f"{name} tool. More text.") for name in self.names]

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        if self.raises:
            raise ValueError("provider bug")
        return ToolResult(ok=True, content=f"{name}:{arguments}")

    def close(self) -> None:
        self.log.append(f"close {','.join(self.names)}")
        if self.raises:
            raise RuntimeError("close failed")


def test_routes_calls_and_reports_duplicates_once() -> None:
    registry = ToolRegistry([Provider("a", "b"), Provider("b", "c")])
    assert registry.call("b", {"x": 1}).content == "b:{'x': 1}"
    assert registry.names() == frozenset({"a", "b", "c"})
    assert registry.problems == ["tool 'b' is offered twice; the first one is kept"]


def test_unknown_tool_lists_the_available_ones() -> None:
    registry = ToolRegistry([Provider("read", "write")])
    result = registry.call("github_get_file_contents", {})
    assert result.error == "unknown tool 'github_get_file_contents'; available tools: read, write"


def test_a_provider_exception_becomes_a_failed_result() -> None:
    registry = ToolRegistry([Provider("boom", raises=True)])
    assert registry.call("boom", {}).error == "tool 'boom' failed: ValueError: provider bug"


def test_a_provider_with_a_problem_has_its_tools_left_out() -> None:
    healthy, dying = Provider("a"), Provider("m__x", "m__y")
    registry = ToolRegistry([healthy, dying])
    assert registry.names() == frozenset({"a", "m__x", "m__y"})
    dying.problem = "MCP server 'm' died"
    assert registry.names() == frozenset({"a"})
    assert [spec.name for spec in registry.specs()] == ["a"]
    assert registry.problems == ["MCP server 'm' died"]
    assert "m__x" not in (registry.call("nope", {}).error or "")


def test_close_closes_every_provider_then_runs_cleanups_despite_failures() -> None:
    log: list[str] = []
    registry = ToolRegistry([Provider("a", raises=True, log=log), Provider("b", log=log)])
    registry.add_cleanup(lambda: log.append("end what the tools left running"))
    registry.add_cleanup(lambda: log.append("stop loop"))
    registry.close()
    closed = ["close a", "close b", "stop loop", "end what the tools left running"]
    assert log == closed  # last added first: the sandbox user's close comes after the servers'
    registry.close()
    assert log == [*closed, "close a", "close b"]


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        ("Shows the working tree status", "Shows the working tree status"),
        ("Read a file. Handles encodings. More.", "Read a file"),
        ("First line\nsecond line", "First line"),
        ("x" * 200, "x" * 157 + "..."),
        ("", ""),
    ],
)
def test_one_line_descriptions_for_prompts(description: str, expected: str) -> None:
    assert one_line(description) == expected


def test_catalogue_keeps_names_and_shortens_descriptions() -> None:
    registry = ToolRegistry([Provider("a")])
    assert [(s.name, s.description) for s in registry.catalogue()] == [("a", "a tool")]
    assert registry.specs()[0].description == "a tool. More text."
