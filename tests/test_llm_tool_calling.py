"""llm.tool_calling json and auto: tool calls from endpoints without native tool calling.

The scripted server replays the reply shapes Qwen2.5-Coder 0.5B/1.5B behind llama-server
produce for our execute prompts (content holds the call, `tool_calls` stays empty): a fenced
JSON block, bare JSON in Qwen's own `{"name", "arguments"}` shape, `<tool_call>` tags, and a
call to a tool that does not exist.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from planner.config import LLMConfig
from planner.core.errors import ApiError
from planner.core.interfaces import ChatReply, ToolSpec
from planner.model.conversation import FINISH_TASK
from planner.model.llm import OpenAIModel
from planner.model.toolcalls import calls_in_text, schema_problems, wire_messages
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_error, reply_text, reply_tool_calls
from tests.harness import Harness

READ_FILE = ToolSpec(
    name="read_file",
    description="Read a file.",
    parameters={
        "type": "object",
        "properties": {"path": {"type": "string"}, "start_line": {"type": "integer"}},
        "required": ["path"],
        "additionalProperties": False,
    },
)
TOOLS = [READ_FILE, FINISH_TASK]
MESSAGES = [{"role": "system", "content": "You work."}, {"role": "user", "content": "task_1"}]

# Reply shapes of the local models (content only, no tool_calls).
FENCED = 'I will read it.\n```json\n{"name": "read_file", "arguments": {"path": "README.md"}}\n```'
BARE = '{"name": "read_file", "arguments": {"path": "README.md"}}'
TAGGED = '<tool_call>\n{"name": "read_file", "arguments": {"path": "README.md"}}\n</tool_call>'
STRING_ARGUMENTS = '{"name": "read_file", "arguments": "{\\"path\\": \\"README.md\\"}"}'
# Verbatim from Qwen2.5-Coder-0.5B (llama-server, --jinja, tools offered natively) on the
# fahrenheit_formula eval task, planning off: the repository's function called as a tool.
CAPTURED_05B = (
    '```json\n{\n  "name": "to_fahrenheit",\n  "arguments": {\n    "100": "148.0"\n  }\n}\n```'
)
INVENTED = '```json\n{"name": "open_file", "arguments": {"path": "README.md"}}\n```'


def model(server: ScriptedModelServer, mode: str, **settings: Any) -> OpenAIModel:
    config = LLMConfig.model_validate(
        {
            "api_key": "k",
            "base_url": server.base_url,
            "model": "m",
            "max_retries": 0,
            "tool_calling": mode,
            **settings,
        }
    )
    return OpenAIModel(config)


def chat_once(server: ScriptedModelServer, mode: str, *texts: str, **settings: Any) -> ChatReply:
    """One execute turn of a `mode` model whose answers are `texts`, in turn (a re-ask takes
    the next)."""
    server.add(*(reply_text("execute", text) for text in texts))
    return model(server, mode, **settings).chat("execute", MESSAGES, TOOLS)


@pytest.mark.parametrize("shape", [FENCED, BARE, TAGGED, STRING_ARGUMENTS])
def test_json_mode_reads_every_shape_the_local_models_write(
    scripted_model: ScriptedModelServer, shape: str
) -> None:
    reply = chat_once(scripted_model, "json", shape)
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("read_file", {"path": "README.md"})
    ]
    request = scripted_model.requests[0].body
    assert "tools" not in request  # the endpoint never sees the native parameter
    schema = request["response_format"]["json_schema"]
    assert schema["name"] == "execute"
    variants = schema["schema"]["anyOf"]
    assert [v["properties"]["tool"]["enum"] for v in variants] == [["read_file"], ["finish_task"]]
    assert variants[0]["properties"]["arguments"] == READ_FILE.parameters
    system = request["messages"][0]["content"]
    assert (
        system.startswith("You work.") and "read_file(path: string, start_line?: integer)" in system
    )


def test_json_mode_reasks_a_call_to_a_tool_that_does_not_exist(
    scripted_model: ScriptedModelServer,
) -> None:
    reply = chat_once(scripted_model, "json", INVENTED, FENCED)
    assert [c.name for c in reply.tool_calls] == ["read_file"]
    reask = scripted_model.requests[1].body["messages"]
    assert reask[-2] == {"role": "assistant", "content": INVENTED}
    assert "there is no tool 'open_file'" in reask[-1]["content"]
    assert "finish_task, read_file" in reask[-1]["content"]


def test_json_mode_reasks_arguments_the_schema_refuses(
    scripted_model: ScriptedModelServer,
) -> None:
    wrong = '{"tool": "read_file", "arguments": {"file": "README.md", "start_line": "1"}}'
    reply = chat_once(scripted_model, "json", wrong, BARE)
    assert reply.tool_calls[0].arguments == {"path": "README.md"}
    problem = scripted_model.requests[1].body["messages"][-1]["content"]
    assert "path is required" in problem
    assert "file is not a parameter" in problem
    assert "start_line must be integer, not str" in problem


def test_json_mode_second_invented_tool_is_passed_on_for_the_registry_to_refuse(
    scripted_model: ScriptedModelServer,
) -> None:
    reply = chat_once(scripted_model, "json", INVENTED, INVENTED)
    assert [c.name for c in reply.tool_calls] == ["open_file"]  # a failed action, as native


def test_json_mode_second_prose_reply_is_prose(scripted_model: ScriptedModelServer) -> None:
    reply = chat_once(scripted_model, "json", "Done.", "All done.")
    assert reply.tool_calls == [] and reply.content == "All done."


def test_json_mode_sends_json_object_when_structured_output_is_json_mode(
    scripted_model: ScriptedModelServer,
) -> None:
    chat_once(scripted_model, "json", BARE, structured_output="json_mode")
    assert scripted_model.requests[0].body["response_format"] == {"type": "json_object"}


def test_auto_recovers_a_fenced_call_and_stays_on_json_for_the_pass(
    scripted_model: ScriptedModelServer, caplog: pytest.LogCaptureFixture
) -> None:
    scripted_model.add(reply_text("execute", FENCED), reply_text("execute", TAGGED))
    adapter = model(scripted_model, "auto")
    with caplog.at_level(logging.WARNING):
        first = adapter.chat("execute", MESSAGES, TOOLS)
    assert [c.name for c in first.tool_calls] == ["read_file"]
    assert "using json tool calls for this pass" in caplog.text
    second = adapter.chat("execute", MESSAGES, TOOLS)
    assert [c.id for c in first.tool_calls + second.tool_calls] == ["call_json_1", "call_json_2"]
    first_request, second_request = (r.body for r in scripted_model.requests)
    assert "tools" in first_request and "tools" not in second_request
    assert second_request["response_format"]["type"] == "json_schema"


def test_auto_reasks_the_captured_05b_reply(scripted_model: ScriptedModelServer) -> None:
    scripted_model.add(reply_text("legacy", CAPTURED_05B), reply_text("legacy", TAGGED))
    adapter = model(scripted_model, "auto")
    reply = adapter.chat("legacy", MESSAGES, TOOLS)
    assert [c.name for c in reply.tool_calls] == ["read_file"]
    assert adapter.tool_calling == "json"
    problem = scripted_model.requests[1].body["messages"][-1]["content"]
    assert "there is no tool 'to_fahrenheit'" in problem


def test_auto_reasks_an_invented_tool_written_as_text(
    scripted_model: ScriptedModelServer,
) -> None:
    reply = chat_once(scripted_model, "auto", INVENTED, BARE)
    assert [c.name for c in reply.tool_calls] == ["read_file"]
    assert "there is no tool 'open_file'" in str(scripted_model.requests[1].body["messages"])


def test_auto_keeps_native_calls_native(scripted_model: ScriptedModelServer) -> None:
    scripted_model.add(
        reply_tool_calls("execute", [("read_file", {"path": "a"})]),
        reply_text("execute", "I am done."),
    )
    adapter = model(scripted_model, "auto")
    assert adapter.chat("execute", MESSAGES, TOOLS).tool_calls[0].name == "read_file"
    prose = adapter.chat("execute", MESSAGES, TOOLS)
    assert prose.content == "I am done." and adapter.tool_calling == "auto"
    assert all("tools" in r.body for r in scripted_model.requests)


def test_auto_asks_prose_once_in_json_and_switches_when_that_works(
    scripted_model: ScriptedModelServer,
) -> None:
    scripted_model.add(
        reply_text("execute", "Let me look at the file."), reply_text("execute", BARE)
    )
    adapter = model(scripted_model, "auto")
    assert adapter.chat("execute", MESSAGES, TOOLS).tool_calls[0].name == "read_file"
    assert adapter.tool_calling == "json"


@pytest.mark.parametrize(
    ("status", "message"),
    [(400, "tools are not supported"), (500, "tools param requires --jinja flag")],
)
def test_auto_falls_back_when_the_endpoint_refuses_tools(
    scripted_model: ScriptedModelServer, status: int, message: str
) -> None:
    scripted_model.add(reply_error(status, message), reply_text("execute", BARE))
    adapter = model(scripted_model, "auto")
    assert adapter.chat("execute", MESSAGES, TOOLS).tool_calls[0].name == "read_file"
    assert adapter.tool_calling == "json"


def test_auto_does_not_hide_other_errors(scripted_model: ScriptedModelServer) -> None:
    scripted_model.add(reply_error(400, "Invalid 'messages[0].content': string too long"))
    with pytest.raises(ApiError):
        model(scripted_model, "auto").chat("execute", MESSAGES, TOOLS)


@pytest.mark.parametrize("shape", [FENCED, BARE, TAGGED, STRING_ARGUMENTS])
def test_native_mode_runs_a_call_written_as_text(
    scripted_model: ScriptedModelServer, shape: str
) -> None:
    """A well-formed call written as text is that call in every mode (with the default native
    mode, Qwen2.5-Coder's first JSON call was recorded as "no tool called")."""
    scripted_model.add(reply_text("execute", shape))
    adapter = model(scripted_model, "native")
    reply = adapter.chat("execute", MESSAGES, TOOLS)
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("read_file", {"path": "README.md"})
    ]
    assert adapter.tool_calling == "native"  # the mode stays; only this reply was read
    assert len(scripted_model.requests) == 1  # no extra request


def test_native_mode_passes_a_bad_written_call_on_as_a_failing_action(
    scripted_model: ScriptedModelServer,
) -> None:
    reply = chat_once(scripted_model, "native", INVENTED)
    assert [c.name for c in reply.tool_calls] == ["open_file"]  # the registry answers it


def test_native_mode_keeps_prose_as_prose(scripted_model: ScriptedModelServer) -> None:
    reply = chat_once(scripted_model, "native", "I am done.")
    assert reply.tool_calls == [] and reply.content == "I am done."


def test_auto_is_the_default() -> None:
    assert LLMConfig().tool_calling == "auto"


def test_wire_messages_rewrite_native_history_for_the_json_endpoint() -> None:
    history = [
        *MESSAGES,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "hello"},
    ]
    wire = wire_messages(history, TOOLS)
    assert wire[2] == {
        "role": "assistant",
        "content": json.dumps({"tool": "read_file", "arguments": {"path": "a"}}),
    }
    assert wire[3] == {"role": "user", "content": "Result of read_file:\nhello"}
    assert history[2]["tool_calls"]  # the pass's own conversation is untouched


def test_text_without_a_call_is_not_a_call() -> None:
    assert calls_in_text("The answer is {x} and [1, 2].") is None
    assert calls_in_text('{"summary": "done"}') is None


def test_schema_problems_check_enum_and_booleans() -> None:
    schema = FINISH_TASK.parameters
    assert schema_problems({"status": "maybe"}, schema) == [
        "summary is required",
        "status must be one of ['completed', 'failed']",
    ]
    integer = {"properties": {"n": {"type": "integer"}}}
    assert schema_problems({"n": True}, integer) == ["n must be integer, not bool"]


def _actions(root: Path, server: ScriptedModelServer, mode: str, *steps: Any) -> list[Any]:
    harness = Harness(root, server)
    server.add(*steps)
    result = harness.run(**{"planning.enabled": False, "llm.tool_calling": mode})
    server.assert_consumed()
    assert result.status == "completed"
    assert (harness.workspace / "a.txt").read_text() == "A"
    return [(e["execution"], e["ok"], e["result"]) for e in harness.of_type("action")]


def test_a_pass_in_json_mode_keeps_the_history_format_of_native_calls(
    tmp_path: Path, scripted_model: ScriptedModelServer
) -> None:
    write = {"path": "a.txt", "content": "A"}
    finish = {"status": "completed", "summary": "wrote a.txt"}
    native = _actions(
        tmp_path / "native",
        scripted_model,
        "native",
        reply_tool_calls("legacy", [("write_file", write)]),
        reply_tool_calls("legacy", [("finish_task", finish)]),
    )
    json_mode = _actions(
        tmp_path / "json",
        scripted_model,
        "json",
        reply_text(
            "legacy", "```json\n" + json.dumps({"name": "write_file", "arguments": write}) + "\n```"
        ),
        reply_text("legacy", json.dumps({"tool": "finish_task", "arguments": finish})),
    )
    assert native == json_mode and len(native) == 1
    assert native[0][0]["function_call"] == {"name": "write_file", "arguments": write}


def test_max_output_tokens_is_sent_as_max_tokens(scripted_model: ScriptedModelServer) -> None:
    scripted_model.add(reply_text("execute", BARE), reply_text("execute", BARE))
    model(scripted_model, "json", max_output_tokens=1500).chat("execute", MESSAGES, TOOLS)
    model(scripted_model, "json").chat("execute", MESSAGES, TOOLS)
    bounded, default = (request.body for request in scripted_model.requests)
    assert bounded["max_tokens"] == 1500 and "max_tokens" not in default


# -- replies captured from the local models (tests/fixtures/local_models, branch localmodel) --

FIXTURES = Path(__file__).parent / "fixtures" / "local_models"
CAPTURED = sorted(
    path
    for path in FIXTURES.glob("*.json")
    if json.loads(path.read_text())["kind"] in ("execute", "legacy")
)
REASK_ANSWER = '{"name": "finish_task", "arguments": {"status": "failed", "summary": "stuck"}}'


@pytest.mark.parametrize("path", CAPTURED, ids=[path.stem for path in CAPTURED])
def test_auto_mode_recovers_every_captured_local_model_reply(
    scripted_model: ScriptedModelServer, path: Path
) -> None:
    captured = json.loads(path.read_text())
    message = captured["response"]["choices"][0]["message"]
    assert not message.get("tool_calls")  # the models never call natively
    offered = [
        ToolSpec(name=name, parameters={"type": "object"})
        for name in captured["request_options"]["tools"]
    ]
    scripted_model.add(
        reply_text("execute", message["content"]), reply_text("execute", REASK_ANSWER)
    )
    scripted_model.allow_leftovers = True
    adapter = model(scripted_model, "auto")
    reply = adapter.chat("execute", MESSAGES, offered)
    assert adapter.tool_calling == "json" and reply.tool_calls
    written = calls_in_text(message["content"])
    usable = written and all(
        name in captured["request_options"]["tools"] and isinstance(arguments, dict)
        for name, arguments in written
    )
    if usable:
        assert [c.name for c in reply.tool_calls] == [name for name, _ in written]
        assert len(scripted_model.requests) == 1  # used as written, no second request
    else:  # an invented tool, arguments not an object, no parseable call: asked again in json
        assert len(scripted_model.requests) == 2
        assert [c.name for c in reply.tool_calls] == ["finish_task"]


def test_captured_replies_cover_the_shapes_the_issue_names() -> None:
    contents = [
        json.loads(path.read_text())["response"]["choices"][0]["message"]["content"]
        for path in CAPTURED
    ]
    assert any(text.startswith("```json") for text in contents)  # fenced
    assert any(text.startswith('{"name"') for text in contents)  # bare
    invented = [
        name
        for text in contents
        for name, _ in calls_in_text(text) or []
        if name
        not in {
            "read_file",
            "write_file",
            "edit_file",
            "list_directory",
            "search_files",
            "run_command",
            "finish_task",
        }
    ]
    assert invented  # a call to a tool that does not exist


def test_the_json_call_schema_binds_each_tool_to_its_parameters() -> None:
    """A server that enforces the response schema (llama.cpp turns it into a grammar) must not
    let a small model write `edits` as a list of strings (seen with Qwen2.5-Coder 1.5B), nor
    read_file's arguments under edit_file's name."""
    from planner.model.toolcalls import call_schema, tool_lines
    from planner.tools.files.workspace import EDIT_FILE
    from planner.tools.files.workspace import READ_FILE as WORKSPACE_READ

    schema = call_schema([WORKSPACE_READ, EDIT_FILE])
    good = {
        "tool": "edit_file",
        "arguments": {"path": "a.py", "edits": [{"oldText": "a", "newText": "b"}]},
    }
    jsonschema.validate(good, schema)
    for bad in (
        {"tool": "edit_file", "arguments": {"path": "a.py", "edits": ["1|", "2|"]}},
        {"tool": "edit_file", "arguments": {"path": "a.py"}},
        {"tool": "read_file", "arguments": {"edits": []}},
        {"tool": "pytest", "arguments": {}},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
    # The prompt's one-line signature shows the items' keys, not a bare "array".
    assert "edits: [{oldText, newText}]" in tool_lines([EDIT_FILE])[0]


def test_a_tool_schema_beyond_the_plain_keywords_gets_an_open_object() -> None:
    """MCP tools may use $ref, oneOf or formats that some grammar converters reject: the whole
    request would fail, so such a tool's arguments are left open (and checked by planner)."""
    from planner.model.toolcalls import call_schema

    fancy = ToolSpec(
        name="query",
        description="d",
        parameters={"type": "object", "properties": {"q": {"$ref": "#/$defs/q"}}},
    )
    variant = call_schema([fancy])["anyOf"][0]
    assert variant["properties"]["arguments"] == {"type": "object"}
