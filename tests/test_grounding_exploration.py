"""The bounded look before the plan: read-only tools, limits, findings in prompt and history."""

from __future__ import annotations

from planner.testing.steps import reply_text, reply_tool_calls
from tests.harness import ISSUE, Harness
from tests.plans import completed, finish, planned, write

ALWAYS = {"planning.exploration.mode": "always"}
ISSUE_AGAIN = ISSUE.model_copy(update={"instruction": "Write the files again."})


def explore(*calls: tuple[str, dict[str, object]]) -> object:
    return reply_tool_calls("explore", list(calls))


def report(findings: str) -> object:
    return explore(("report_findings", {"findings": findings}))


def rest_of_pass() -> list[object]:
    return [*planned("task_1"), write("a.txt"), finish(), *completed()]


def test_findings_reach_the_planning_prompt_and_the_history(harness: Harness) -> None:
    harness.server.add(
        explore(("read_file", {"path": "README.md"})),
        report("README.md is a one-line title; nothing else exists."),
        *rest_of_pass(),
    )
    result = harness.run(**ALWAYS)
    assert result.status == "completed"
    assert "# demo" in harness.server.requests[1].body["messages"][-1]["content"]  # the tool ran
    planning = harness.prompt(harness.kinds().index("planning"))
    assert "## What a look at the repository found" in planning
    assert "README.md is a one-line title" in planning
    [explored] = harness.of_type("exploration")
    assert explored["actions"] == [
        {"tool": "read_file", "arguments": {"path": "README.md"}, "ok": True}
    ]
    assert explored["stopped"] == "reported" and explored["model_calls"] == 2
    assert harness.types()[1:5] == ["verification", "repository_map", "exploration", "plan"]


def test_exploration_cannot_write_or_run_anything(harness: Harness) -> None:
    harness.server.add(
        explore(
            ("write_file", {"path": "pwned.txt", "content": "x"}),
            ("run_command", {"argv": ["touch", "ran.txt"]}),
        ),
        report("nothing"),
        *rest_of_pass(),
    )
    harness.run(**ALWAYS, **{"tools.allowed_commands": ["touch"]})
    assert not (harness.workspace / "pwned.txt").exists()
    assert not (harness.workspace / "ran.txt").exists()
    refused = harness.server.requests[1].body["messages"][-2:]
    assert all("cannot be used while exploring" in m["content"] for m in refused)
    offered = {t["function"]["name"] for t in harness.server.requests[0].body["tools"]}
    assert offered == {"read_file", "list_directory", "search_files", "report_findings"}


def test_the_action_limit_ends_the_exploration_with_a_report(harness: Harness) -> None:
    harness.server.add(
        explore(("list_directory", {"path": "."})),
        explore(("search_files", {"pattern": "demo"}), ("read_file", {"path": "README.md"})),
        reply_text("explore", "Only README.md; it holds the title."),
        *rest_of_pass(),
    )
    harness.run(**ALWAYS, **{"planning.exploration.max_actions": 2})
    [explored] = harness.of_type("exploration")
    assert [a["tool"] for a in explored["actions"]] == ["list_directory", "search_files"]
    assert explored["stopped"] == "limit: 2 actions"
    assert explored["findings"] == "Only README.md; it holds the title."
    over = harness.server.requests[2].body["messages"]
    assert "action limit is reached" in over[-2]["content"]  # the third call was not run
    assert "call report_findings now" in over[-1]["content"]


def test_the_token_limit_ends_the_exploration_with_a_report(harness: Harness) -> None:
    expensive = {"prompt_tokens": 900, "completion_tokens": 100, "total_tokens": 1_000}
    harness.server.add(
        reply_tool_calls("explore", [("list_directory", {"path": "."})], usage=expensive),
        report("README.md only"),
        *rest_of_pass(),
    )
    harness.run(**ALWAYS, **{"planning.exploration.max_tokens": 800})
    [explored] = harness.of_type("exploration")
    assert explored["stopped"] == "limit: 800 tokens" and len(explored["actions"]) == 1
    assert explored["findings"] == "README.md only" and explored["tokens"] >= 1_000


def test_auto_explores_only_when_the_map_left_files_out(harness: Harness) -> None:
    harness.server.add(*rest_of_pass())
    harness.run()  # a one-file repository fits the map: no exploration call
    assert "explore" not in harness.kinds() and harness.of_type("exploration") == []
    for n in range(60):
        (harness.workspace / f"module_{n}.py").write_text(f'"""Module {n} of many."""\n')
    harness.server.add(report("many modules"), *rest_of_pass())
    harness.run(ISSUE_AGAIN, **{"planning.repository_map.max_tokens": 100})
    assert harness.of_type("repository_map")[-1]["truncated"] is True
    assert harness.of_type("exploration")[0]["findings"] == "many modules"


def test_the_pass_budget_keeps_room_to_plan(harness: Harness) -> None:
    harness.server.add(*planned("task_1"))
    result = harness.run(**ALWAYS, **{"budget.max_model_calls": 2})
    assert "explore" not in harness.kinds()
    [explored] = harness.of_type("exploration")
    assert explored["stopped"] == "pass budget" and explored["model_calls"] == 0
    assert result.status == "in_progress"


def test_off_never_explores(harness: Harness) -> None:
    harness.server.add(*rest_of_pass())
    harness.run(**{"planning.exploration.mode": "off", "planning.repository_map.max_tokens": 50})
    assert harness.of_type("exploration") == []
