"""The scripted model server, driven through the real openai client over HTTP."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
import warnings
from collections.abc import Iterator
from typing import Any

import openai
import pydantic
import pytest

from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import Step, reply_error, reply_json, reply_text, reply_tool_calls

MODEL = "gpt-test"

# Typed as Any: the tests send raw wire dicts, not the client's TypedDict params.
PLANNING_FORMAT: Any = {
    "type": "json_schema",
    "json_schema": {
        "name": "planning",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"steps": {"type": "array", "items": {"type": "string"}}},
            "required": ["steps"],
            "additionalProperties": False,
        },
    },
}

READ_FILE_TOOL: Any = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a file from the repository.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    },
}


def make_client(server: ScriptedModelServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0, timeout=10)


@pytest.fixture
def own_server() -> Iterator[ScriptedModelServer]:
    """A server without the fixture's teardown check, for tests that provoke failures."""
    with ScriptedModelServer() as server:
        yield server


def user(text: str) -> Any:
    return {"role": "user", "content": text}


def explore(client: openai.OpenAI) -> Any:
    return client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "system", "content": "You explore."}, user("Look around.")],
        tools=[READ_FILE_TOOL],
        extra_headers={"X-Planner-Kind": "explore"},
    )


# ----------------------------------------------------------------- structured output


def test_structured_reply_returns_document_and_usage(
    scripted_model: ScriptedModelServer,
) -> None:
    document = {"steps": ["edit README.md", "run tests"]}
    scripted_model.add(reply_json("planning", document))
    messages: Any = [{"role": "system", "content": "abcd" * 10}, user("efgh" * 5)]

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        completion = make_client(scripted_model).chat.completions.create(
            model=MODEL, messages=messages, response_format=PLANNING_FORMAT
        )
        completion.model_dump()  # pydantic would warn here on any type mismatch

    choice = completion.choices[0]
    assert json.loads(choice.message.content or "") == document
    assert choice.finish_reason == "stop"
    assert choice.message.role == "assistant"
    assert choice.message.tool_calls is None
    assert choice.message.refusal is None
    assert completion.object == "chat.completion"
    assert completion.model == MODEL
    assert completion.usage is not None
    assert completion.usage.prompt_tokens == 15  # 60 characters / 4
    assert completion.usage.completion_tokens == -(-len(json.dumps(document)) // 4)
    assert completion.usage.total_tokens == 15 + completion.usage.completion_tokens
    assert completion._request_id is not None


def test_explicit_usage_overrides_default(scripted_model: ScriptedModelServer) -> None:
    scripted_model.add(reply_text(None, "hi", usage={"prompt_tokens": 1000}))

    completion = make_client(scripted_model).chat.completions.create(
        model=MODEL, messages=[user("hello")]
    )

    assert completion.usage is not None
    assert completion.usage.prompt_tokens == 1000
    assert completion.usage.completion_tokens == 1
    assert completion.usage.total_tokens == 1001


def test_parse_helper_with_pydantic_model(scripted_model: ScriptedModelServer) -> None:
    class Plan(pydantic.BaseModel):
        steps: list[str]

    # The client names the json_schema after the model class.
    scripted_model.add(reply_json("Plan", {"steps": ["a"]}))

    completion = make_client(scripted_model).chat.completions.parse(
        model=MODEL, messages=[user("plan")], response_format=Plan
    )

    assert completion.choices[0].message.parsed == Plan(steps=["a"])


def test_kind_mismatch_is_bad_request_and_recorded(own_server: ScriptedModelServer) -> None:
    own_server.add(reply_json("review", {"ok": True}), reply_json("planning", {"steps": []}))

    with pytest.raises(openai.BadRequestError) as info:
        make_client(own_server).chat.completions.create(
            model=MODEL, messages=[user("plan")], response_format=PLANNING_FORMAT
        )

    assert "'review'" in info.value.message and "'planning'" in info.value.message
    assert own_server.remaining == 1  # only the mismatched step was used up
    assert len(own_server.mismatches) == 1
    with pytest.raises(AssertionError, match="mismatch"):
        own_server.assert_consumed()


def test_plain_text_reply_can_be_garbage(scripted_model: ScriptedModelServer) -> None:
    scripted_model.add(reply_text("planning", "not json"))

    completion = make_client(scripted_model).chat.completions.create(
        model=MODEL, messages=[user("plan")], response_format=PLANNING_FORMAT
    )

    assert completion.choices[0].message.content == "not json"


# ---------------------------------------------------------------------- tool calls


def test_tool_call_round_trip(scripted_model: ScriptedModelServer) -> None:
    scripted_model.add(
        reply_tool_calls("explore", [("read_file", {"path": "README.md"})]),
        reply_text("explore", "done"),
    )
    client = make_client(scripted_model)

    first = explore(client)

    message = first.choices[0].message
    assert first.choices[0].finish_reason == "tool_calls"
    assert message.tool_calls is not None and len(message.tool_calls) == 1
    call = message.tool_calls[0]
    assert call.type == "function"
    assert call.id.startswith("call_")
    assert call.function.name == "read_file"
    assert json.loads(call.function.arguments) == {"path": "README.md"}

    second = client.chat.completions.create(
        model=MODEL,
        messages=[
            user("Look around."),
            message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": "# planner"},
        ],
        tools=[READ_FILE_TOOL],
        extra_headers={"X-Planner-Kind": "explore"},
    )

    assert second.choices[0].message.content == "done"
    assert scripted_model.protocol_errors == []


def test_raw_string_arguments_are_sent_verbatim(scripted_model: ScriptedModelServer) -> None:
    scripted_model.add(
        reply_tool_calls("explore", [("read_file", '{"path": '), ("read_file", {"path": "b"})])
    )

    calls = explore(make_client(scripted_model)).choices[0].message.tool_calls

    assert calls is not None
    assert [c.function.arguments for c in calls] == ['{"path": ', '{"path": "b"}']
    assert len({c.id for c in calls}) == 2


def test_tool_message_with_unknown_id_is_rejected(own_server: ScriptedModelServer) -> None:
    own_server.add(reply_text(None, "never used"))
    assistant: Any = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }

    with pytest.raises(openai.BadRequestError) as info:
        make_client(own_server).chat.completions.create(
            model=MODEL,
            messages=[
                user("go"),
                assistant,
                {"role": "tool", "tool_call_id": "call_999", "content": "x"},
            ],
        )

    assert "call_999" in info.value.message
    assert own_server.remaining == 1  # rejected requests never consume a step
    assert len(own_server.protocol_errors) == 1
    assert own_server.requests[0].step_index is None
    with pytest.raises(AssertionError, match="protocol error"):
        own_server.assert_consumed()


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        ({"messages": []}, "non-empty"),
        ({"messages": [{"role": "robot", "content": "x"}]}, "robot"),
        ({"stream_options": {"include_usage": True}}, "only allowed when 'stream' is enabled"),
        ({"tools": [{"type": "function", "function": {"name": "bad name"}}]}, "pattern"),
        (
            {"tools": [{"type": "function", "function": {"name": "f", "parameters": []}}]},
            "parameters",
        ),
        ({"response_format": {"type": "json_schema", "json_schema": {"name": "x"}}}, "schema"),
        ({"response_format": {"type": "yaml"}}, "response_format.type"),
        (
            {
                "messages": [
                    user("go"),
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "f", "arguments": "{}"},
                            }
                        ],
                    },
                    user("and?"),
                ]
            },
            "did not have response messages: call_1",
        ),
        (
            {
                "messages": [
                    user("go"),
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "id": "c",
                                "type": "function",
                                "function": {"name": "f", "arguments": {}},
                            }
                        ],
                    },
                ]
            },
            "expected a string",
        ),
    ],
)
def test_invalid_requests_are_rejected_like_the_real_api(
    own_server: ScriptedModelServer, overrides: dict[str, Any], fragment: str
) -> None:
    body: dict[str, Any] = {"model": MODEL, "messages": [user("hi")], **overrides}

    with pytest.raises(openai.BadRequestError) as info:
        make_client(own_server).post("/chat/completions", body=body, cast_to=object)

    assert fragment in info.value.message
    assert isinstance(info.value.body, dict) and set(info.value.body) >= {"message", "type"}
    assert len(own_server.protocol_errors) == 1


def test_body_that_is_not_json_is_rejected(own_server: ScriptedModelServer) -> None:
    request = urllib.request.Request(
        own_server.base_url + "/chat/completions", data=b"{nope", method="POST"
    )

    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(request, timeout=10)

    assert info.value.code == 400
    assert "could not parse the JSON body" in json.load(info.value)["error"]["message"]


# ---------------------------------------------------------------------- HTTP errors


def test_rate_limit_error_carries_headers(scripted_model: ScriptedModelServer) -> None:
    scripted_model.add(reply_error(429, "slow down", headers={"Retry-After": "0"}))

    with pytest.raises(openai.RateLimitError) as info:
        make_client(scripted_model).chat.completions.create(model=MODEL, messages=[user("x")])

    assert info.value.response.headers["retry-after"] == "0"
    assert isinstance(info.value.body, dict) and info.value.body["message"] == "slow down"
    assert info.value.code == "rate_limit_exceeded"


def test_server_error_step(scripted_model: ScriptedModelServer) -> None:
    scripted_model.add(reply_error(503, "overloaded"))

    with pytest.raises(openai.InternalServerError) as info:
        make_client(scripted_model).chat.completions.create(model=MODEL, messages=[user("x")])

    assert info.value.status_code == 503


def test_client_retries_consume_scripted_errors(scripted_model: ScriptedModelServer) -> None:
    scripted_model.add(
        reply_error(429, headers={"Retry-After": "0"}), reply_json(None, {"ok": True})
    )
    client = openai.OpenAI(base_url=scripted_model.base_url, api_key="test", max_retries=1)

    completion = client.chat.completions.create(model=MODEL, messages=[user("x")])

    assert json.loads(completion.choices[0].message.content or "") == {"ok": True}
    assert [r.step_index for r in scripted_model.requests] == [0, 1]


# ------------------------------------------------------------ queue and bookkeeping


def test_leftover_steps_fail_assert_consumed(own_server: ScriptedModelServer) -> None:
    own_server.add(reply_json("planning", {"steps": []}), reply_text("review", "ok"))
    make_client(own_server).chat.completions.create(
        model=MODEL, messages=[user("plan")], response_format=PLANNING_FORMAT
    )

    with pytest.raises(AssertionError, match=r"step 1: kind='review'"):
        own_server.assert_consumed()

    own_server.allow_leftovers = True
    own_server.assert_consumed()


def test_fixture_allows_opting_out_of_leftover_check(
    scripted_model: ScriptedModelServer,
) -> None:
    scripted_model.add(reply_text(None, "unused"))
    scripted_model.allow_leftovers = True


def test_empty_queue_answers_500(own_server: ScriptedModelServer) -> None:
    with pytest.raises(openai.InternalServerError) as info:
        make_client(own_server).chat.completions.create(
            model=MODEL, messages=[user("plan")], response_format=PLANNING_FORMAT
        )

    assert info.value.status_code == 500
    expected = "scripted model: no step left for request kind=planning"
    assert isinstance(info.value.body, dict) and info.value.body["message"] == expected
    assert own_server.mismatches == [expected]


def test_clean_run_passes_assert_consumed() -> None:
    with ScriptedModelServer([reply_text(None, "a")]) as server:
        make_client(server).chat.completions.create(model=MODEL, messages=[user("x")])
    server.assert_consumed()


def test_expect_failure_gives_400_and_mismatch(own_server: ScriptedModelServer) -> None:
    def wants_two_messages(body: dict[str, Any]) -> None:
        assert len(body["messages"]) == 2, "expected system + user"

    own_server.add(reply_text(None, "x", expect=wants_two_messages))

    with pytest.raises(openai.BadRequestError) as info:
        make_client(own_server).chat.completions.create(model=MODEL, messages=[user("x")])

    assert "expected system + user" in info.value.message
    assert len(own_server.mismatches) == 1
    assert "expected system + user" in own_server.mismatches[0]


def test_expect_success_lets_reply_through(scripted_model: ScriptedModelServer) -> None:
    def uses_test_model(body: dict[str, Any]) -> None:
        assert body["model"] == MODEL

    scripted_model.add(reply_text(None, "fine", expect=uses_test_model))

    completion = make_client(scripted_model).chat.completions.create(
        model=MODEL, messages=[user("x")]
    )

    assert completion.choices[0].message.content == "fine"


def test_requests_are_recorded(scripted_model: ScriptedModelServer) -> None:
    scripted_model.add(
        reply_tool_calls("explore", [("read_file", {"path": "a"})]),
        reply_json("planning", {"steps": []}),
    )
    client = make_client(scripted_model)
    explore(client)
    client.chat.completions.create(
        model=MODEL, messages=[user("plan")], response_format=PLANNING_FORMAT
    )

    first, second = scripted_model.requests
    assert (first.kind, first.step_index) == ("explore", 0)
    assert first.headers["x-planner-kind"] == "explore"
    assert first.headers["authorization"] == "Bearer test"
    assert first.body["tools"][0]["function"]["name"] == "read_file"
    assert first.body["model"] == MODEL
    assert (second.kind, second.step_index) == ("planning", 1)
    assert second.body["response_format"] == PLANNING_FORMAT


def test_delay_seconds_simulates_latency(scripted_model: ScriptedModelServer) -> None:
    scripted_model.add(Step(content="slow", delay_seconds=0.2))

    started = time.monotonic()
    make_client(scripted_model).chat.completions.create(model=MODEL, messages=[user("x")])

    assert time.monotonic() - started >= 0.2


# ----------------------------------------------------------------------- routing


def test_models_list(scripted_model: ScriptedModelServer) -> None:
    models = make_client(scripted_model).models.list()

    assert [m.id for m in models] == ["scripted-model"]


def test_unknown_path_is_404_in_openai_error_shape(scripted_model: ScriptedModelServer) -> None:
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(scripted_model.base_url + "/embeddings", timeout=10)

    assert info.value.code == 404
    error = json.load(info.value)["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert scripted_model.requests == []


def test_base_url_requires_running_server() -> None:
    server = ScriptedModelServer()
    with pytest.raises(RuntimeError):
        _ = server.base_url
    with server:
        assert server.base_url.startswith("http://127.0.0.1:")
        assert server.base_url.endswith("/v1")
    server.stop()  # idempotent
