"""Whole passes with MCP servers: tool results reach the model, plans are checked against the
real tool list, a dying server does not end the pass, and servers stop even when the pass fails.

The model is the scripted stand-in server over real HTTP; the MCP servers are real processes.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from planner.config import PlannerConfig, load_config
from planner.outcome.result import PassResult
from planner.run.runner import PassSetup, run_pass
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import Step, reply_json, reply_tool_calls
from planner.text.issue import IssueContext
from tests.mcp_servers.launch import filesystem_server, git_server, misbehaving_server
from tests.plans import REFINEMENT_OFF, ROOT_TOOLS, committed_repo, evaluation_ok, review_ok

ISSUE = IssueContext(
    repository="demo/notes",
    number="7",
    title="Summarise the README into NOTES.md",
    body="Please write NOTES.md with a one-line summary of the README.",
    author="maintainer",
)


def make_repo(root: Path) -> Path:
    return committed_repo(root, {"README.md": "# Notes demo\n\nA tiny project.\n"})


def config_for(server: ScriptedModelServer, servers: dict[str, Any]) -> PlannerConfig:
    env = {"OPENAI_API_KEY": "scripted", "OPENAI_BASE_URL": server.base_url, "OPENAI_MODEL": "m"}
    overrides = {
        "tools.mcpServers": servers,
        "planning.reflection.enabled": False,
        **REFINEMENT_OFF,
        **ROOT_TOOLS,  # the servers run with this checkout's interpreter
        # Files change through the servers' tools here: every turn offers the tools
        # (whole_file sends a task's first turn without them).
        "llm.edit_format": "edit_file",
    }
    return load_config(None, env=env, overrides=overrides)


def plan(*steps: tuple[str, str]) -> dict[str, Any]:
    """A one-task plan whose actions use the given (tool, purpose) pairs."""
    return {
        "phase": "planning",
        "goal_understanding": {
            "main_objective": "Write NOTES.md summarising the README",
            "success_criteria": ["NOTES.md exists"],
            "constraints": [],
            "context": "",
        },
        "task_decomposition": {
            "reasoning": "Read, then write.",
            "subtasks": [
                {
                    "id": "task_1",
                    "description": "Summarise the README into NOTES.md",
                    "dependencies": [],
                    "estimated_complexity": "low",
                    "required_tools": [tool for tool, _ in steps],
                }
            ],
        },
        "action_plan": {
            "execution_order": ["task_1"],
            "actions": [
                {
                    "task_id": "task_1",
                    "action_type": "tool_call",
                    "tool": tool,
                    "purpose": purpose,
                    "expected_outcome": "done",
                }
                for tool, purpose in steps
            ],
        },
        "comment": "Plan ready.",
    }


DONE = {
    "phase": "completion",
    "done": True,
    "comment": "Done.",
    "summary": {"goal_achieved": True, "tasks_completed": 1, "tasks_failed": 0, "key_outcomes": []},
}
FINISH = ("finish_task", {"status": "completed", "summary": "NOTES.md written"})


def tool_messages(request_body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request_body["messages"] if m["role"] == "tool"]


def offered_tools(request_body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {tool["function"]["name"]: tool["function"] for tool in request_body.get("tools", [])}


def finished_pass(
    server: ScriptedModelServer, workspace: Path, servers: dict[str, Any], *work: Step
) -> PassResult:
    """A pass with the MCP `servers` whose model plans and does `work`, then finishes the task
    and judges the pass done."""
    server.add(
        *work,
        reply_tool_calls("execute", [FINISH]),
        evaluation_ok(),
        reply_json("completion", DONE),
    )
    return run_pass(PassSetup(config=config_for(server, servers), workspace=workspace), ISSUE)


def test_mcp_tool_results_reach_the_model(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = make_repo(tmp_path / "repo")
    servers = {"fs": filesystem_server("."), "git": git_server()}
    result = finished_pass(
        scripted_model,
        workspace,
        servers,
        reply_json("planning", plan(("fs__read_text_file", "read"), ("fs__write_file", "write"))),
        review_ok(),
        reply_tool_calls(
            "execute",
            [
                ("fs__read_text_file", {"path": "README.md"}),
                ("git__git_status", {"repo_path": "."}),
            ],
        ),
        reply_tool_calls(
            "execute", [("fs__write_file", {"path": "NOTES.md", "content": "A tiny project.\n"})]
        ),
    )

    assert result.status == "completed", result.stop_reason
    requests = scripted_model.requests
    planning_prompt = requests[0].body["messages"][-1]["content"]
    assert "- fs__read_text_file: Read the complete contents of a file" in planning_prompt
    assert "- git__git_status: Shows the working tree status" in planning_prompt
    offered = offered_tools(requests[2].body)
    assert offered["fs__write_file"]["parameters"]["required"] == ["path", "content"]
    readme, status = tool_messages(requests[3].body)
    assert readme == "# Notes demo\n\nA tiny project.\n"
    assert "On branch main" in status
    assert tool_messages(requests[4].body)[-1].startswith("Successfully wrote to NOTES.md")
    assert (workspace / "NOTES.md").read_text(encoding="utf-8") == "A tiny project.\n"


def test_plan_naming_an_unknown_tool_is_repaired_against_the_real_tools(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    """A tool no server offers (a GitHub MCP tool the model knows from elsewhere) is dropped
    from the action with a note; the MCP server's real tools run."""
    workspace = make_repo(tmp_path / "repo")
    result = finished_pass(
        scripted_model,
        workspace,
        {"mis": misbehaving_server()},
        reply_json(
            "planning",
            plan(("github_get_file_contents", "read the README"), ("mis__echo", "say something")),
        ),
        review_ok(),
        reply_tool_calls("execute", [("mis__echo", {"text": "hello"})]),
    )

    assert result.status == "completed", result.stop_reason
    assert [r.kind for r in scripted_model.requests][:2] == ["planning", "replan_review"]
    assert result.plan is not None
    tools = [a.tool for a in result.plan.action_plan.actions]
    assert tools == [None, "mis__echo"]
    offered = {t["function"]["name"] for t in scripted_model.requests[2].body["tools"]}
    assert {"mis__echo", "mis__crash", "read_file", "write_file", "edit_file"} <= offered
    assert tool_messages(scripted_model.requests[3].body) == ["hello"]


def test_a_server_dying_mid_pass_is_left_out_and_the_pass_goes_on(
    tmp_path: Path, scripted_model: ScriptedModelServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    workspace = make_repo(tmp_path / "repo")
    result = finished_pass(
        scripted_model,
        workspace,
        {"mis": misbehaving_server()},
        reply_json("planning", plan(("mis__crash", "crash"), ("write_file", "write"))),
        review_ok(),
        reply_tool_calls("execute", [("mis__crash", {})]),
        reply_tool_calls("execute", [("write_file", {"path": "NOTES.md", "content": "ok\n"})]),
    )

    assert result.status == "completed", result.stop_reason
    before, after = scripted_model.requests[2].body, scripted_model.requests[3].body
    assert "mis__echo" in offered_tools(before)
    assert not [name for name in offered_tools(after) if name.startswith("mis__")]
    assert tool_messages(after) == ["ERROR: MCP server 'mis' died during the call"]
    assert (workspace / "NOTES.md").read_text() == "ok\n"
    assert sum("'mis' died" in record.getMessage() for record in caplog.records) == 1


class ExplodingModel:
    """A model whose first request raises, as a bug in the pass would."""

    name = "exploding"
    on_call: Any = None

    def structured(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the pass broke")

    def chat(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the pass broke")


def test_servers_are_shut_down_when_the_pass_fails(tmp_path: Path) -> None:
    workspace = make_repo(tmp_path / "repo")
    pid_file = tmp_path / "mis.pid"
    config = load_config(
        None,
        env={},
        overrides={
            "tools.mcpServers": {"mis": misbehaving_server(MISBEHAVING_PID_FILE=str(pid_file))},
            **ROOT_TOOLS,
        },
    )
    with pytest.raises(RuntimeError, match="the pass broke"):
        run_pass(PassSetup(config=config, workspace=workspace, model=ExplodingModel()), ISSUE)
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_history_records_mcp_calls_like_builtin_ones(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    workspace = make_repo(tmp_path / "repo")
    result = finished_pass(
        scripted_model,
        workspace,
        {"mis": misbehaving_server()},
        reply_json("planning", plan(("mis__echo", "echo"))),
        review_ok(),
        reply_tool_calls(
            "execute", [("mis__echo", {"text": "recorded"}), ("mis__fail", {"message": "no"})]
        ),
    )

    entries = [json.loads(line) for line in Path(result.history_path).read_text().splitlines()]
    actions = [entry for entry in entries if entry.get("type") == "action"]
    assert [(a["execution"]["function_call"]["name"], a["ok"]) for a in actions] == [
        ("mis__echo", True),
        ("mis__fail", False),
    ]
    assert actions[0]["result"] == "recorded"
    assert actions[1]["error"] == "the tool reported an error"
