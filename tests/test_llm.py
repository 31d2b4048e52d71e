"""The OpenAI-compatible client: retries, Retry-After, error mapping, usage records."""

from __future__ import annotations

import dataclasses

import jinja2
import pytest

from planner.config import LLMConfig
from planner.core.errors import ApiError, ConfigError, ModelBehaviourError
from planner.model.llm import OpenAIModel
from planner.model.replies import extract_json
from planner.model.sampling import REPEAT_TEMPERATURE, WARM_SEEDS
from planner.model.usage import CallRecord
from planner.plan.documents import CompletionReply
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_error, reply_json, reply_text
from planner.text.prompts import render

DONE = {
    "phase": "completion",
    "done": True,
    "summary": {"goal_achieved": True, "tasks_completed": 1},
}
MESSAGES = [{"role": "user", "content": "evaluate"}]


def model(
    server: ScriptedModelServer, sleeps: list[float], records: list[CallRecord], **settings: object
) -> OpenAIModel:
    config = LLMConfig.model_validate(
        {"api_key": "k", "base_url": server.base_url, "model": "m", **settings}
    )
    return OpenAIModel(config, on_call=records.append, sleep=sleeps.append)


def test_retry_after_is_honoured_and_capped(scripted_model: ScriptedModelServer) -> None:
    scripted_model.add(
        reply_error(429, "slow down", headers={"Retry-After": "7"}),
        reply_error(503, "busy", headers={"Retry-After": "900"}),
        reply_json("completion", DONE),
    )
    sleeps: list[float] = []
    records: list[CallRecord] = []
    reply = model(scripted_model, sleeps, records, max_retry_wait_seconds=30).structured(
        "completion", MESSAGES, CompletionReply
    )
    assert reply.done is True
    assert sleeps == [7.0, 30.0]
    assert len(records) == 1 and records[0].attempts == 3 and records[0].outcome == "ok"
    assert records[0].prompt_tokens > 0 and records[0].completion_tokens > 0


def test_backoff_without_retry_after_grows(scripted_model: ScriptedModelServer) -> None:
    scripted_model.add(reply_error(500), reply_error(502), reply_json("completion", DONE))
    sleeps: list[float] = []
    model(scripted_model, sleeps, []).structured("completion", MESSAGES, CompletionReply)
    assert len(sleeps) == 2 and 0.5 <= sleeps[0] <= 1.0 and 1.0 <= sleeps[1] <= 2.0


def test_retries_are_bounded(scripted_model: ScriptedModelServer) -> None:
    scripted_model.add(*[reply_error(429, headers={"Retry-After": "0"}) for _ in range(3)])
    records: list[CallRecord] = []
    with pytest.raises(ApiError) as caught:
        model(scripted_model, [], records, max_retries=2).structured(
            "completion", MESSAGES, CompletionReply
        )
    assert caught.value.status == 429 and caught.value.retry_after == 0.0
    assert records[-1].outcome == "error 429" and records[-1].attempts == 3


def test_client_errors_are_not_retried_and_name_the_fix(
    scripted_model: ScriptedModelServer,
) -> None:
    scripted_model.add(reply_error(401, "bad key"))
    sleeps: list[float] = []
    with pytest.raises(ApiError, match=r"HTTP 401.*check OPENAI_API_KEY"):
        model(scripted_model, sleeps, []).structured("completion", MESSAGES, CompletionReply)
    assert sleeps == []


def test_unreachable_endpoint_is_an_api_error() -> None:
    config = LLMConfig(api_key="k", base_url="http://127.0.0.1:9/v1", max_retries=1)  # type: ignore[arg-type]
    sleeps: list[float] = []
    with pytest.raises(ApiError, match="unreachable"):
        OpenAIModel(config, sleep=sleeps.append).structured("completion", MESSAGES, CompletionReply)
    assert len(sleeps) == 1


def test_schema_violation_is_reasked_with_the_error(scripted_model: ScriptedModelServer) -> None:
    scripted_model.add(reply_json("completion", {"done": "maybe"}), reply_json("completion", DONE))
    reply = model(scripted_model, [], []).structured("completion", MESSAGES, CompletionReply)
    assert reply.summary.tasks_completed == 1
    reask = scripted_model.requests[1].body["messages"]
    assert reask[-2] == {"role": "assistant", "content": '{"done": "maybe"}'}
    assert "summary: Field required" in reask[-1]["content"]


def test_the_reask_asks_for_json_without_the_schema_grammar(
    scripted_model: ScriptedModelServer,
) -> None:
    """Constrained by the planning schema's grammar, the 1.5B's planning reply ended inside a
    success criterion (`"parse_duration(" ] }}`), twice the same; the second request asks for
    a JSON object without the schema, so the reply is the model's own."""
    cut_by_grammar = '{"phase": "completion", "done": true, "summary": {"key_outcomes": ["f(" ]}}'
    scripted_model.add(reply_text("completion", cut_by_grammar), reply_json("completion", DONE))
    reply = model(scripted_model, [], []).structured("completion", MESSAGES, CompletionReply)
    assert reply.summary.tasks_completed == 1
    first, second = (r.body["response_format"] for r in scripted_model.requests)
    assert first["type"] == "json_schema" and second == {"type": "json_object"}


def test_a_reply_repeated_word_for_word_makes_the_next_call_warmer(
    scripted_model: ScriptedModelServer,
) -> None:
    """At temperature 0 the 1.5B, re-asked, wrote the same unchanged file three times; the call
    after a repeated reply samples at REPEAT_TEMPERATURE, and the next new reply cools it again."""
    same, other = "stats.py\n```python\nx = 1\n```", "something new"
    scripted_model.add(*(reply_text("execute", text) for text in (same, same, other, other, same)))
    client = model(scripted_model, [], [], temperature=0)
    for _ in range(5):
        client.chat("execute", MESSAGES, [], tools_on_wire=False)
    temperatures = [r.body["temperature"] for r in scripted_model.requests]
    assert temperatures == [0, 0, REPEAT_TEMPERATURE, 0, REPEAT_TEMPERATURE]


def test_warmer_calls_carry_seeds_so_a_run_repeats_and_each_warm_call_differs(
    scripted_model: ScriptedModelServer,
) -> None:
    """A warmer call samples: sent without a seed, two runs of the same pass with identical
    requests got different replies there and went apart (one asked 6 calls, the other 10). Each
    warmer call carries a seed of its own (sampling.WARM_SEEDS), the same in every run; calls
    at the configured temperature carry none, as before."""
    same, other = "stats.py\n```python\nx = 1\n```", "something new"
    replies = (same, same, same, other, other)
    runs = []
    for _ in range(2):
        before = len(scripted_model.requests)
        scripted_model.add(*(reply_text("execute", text) for text in replies))
        client = model(scripted_model, [], [], temperature=0)
        for _ in replies:
            client.chat("execute", MESSAGES, [], tools_on_wire=False)
        sent = scripted_model.requests[before:]
        runs.append([(r.body["temperature"], r.body.get("seed")) for r in sent])
    warm = REPEAT_TEMPERATURE
    assert runs[0] == [(0, None), (0, None), (warm, WARM_SEEDS), (warm, WARM_SEEDS + 1), (0, None)]
    assert runs[1] == runs[0]


def test_a_chat_reply_cut_off_at_the_limit_makes_the_next_call_warmer(
    scripted_model: ScriptedModelServer,
) -> None:
    loop = dataclasses.replace(reply_text("execute", "assert x\n" * 50), finish_reason="length")
    scripted_model.add(loop, reply_text("execute", "done"), reply_text("execute", "other"))
    client = model(scripted_model, [], [], temperature=0)
    for _ in range(3):
        client.chat("execute", MESSAGES, [], tools_on_wire=False)
    temperatures = [r.body["temperature"] for r in scripted_model.requests]
    assert temperatures == [0, REPEAT_TEMPERATURE, 0]


def test_the_configured_temperature_is_kept_when_it_is_warmer_already(
    scripted_model: ScriptedModelServer,
) -> None:
    scripted_model.add(*(reply_text("execute", "same") for _ in range(3)))
    client = model(scripted_model, [], [], temperature=1.2)
    for _ in range(3):
        client.chat("execute", MESSAGES, [], tools_on_wire=False)
    assert [r.body["temperature"] for r in scripted_model.requests] == [1.2, 1.2, 1.2]


def test_two_bad_replies_raise_model_behaviour_error(scripted_model: ScriptedModelServer) -> None:
    scripted_model.add(reply_text("completion", "nope"), reply_text("completion", "still nope"))
    with pytest.raises(ModelBehaviourError) as caught:
        model(scripted_model, [], []).structured("completion", MESSAGES, CompletionReply)
    assert caught.value.kind == "completion" and caught.value.raw == "still nope"


def test_a_reply_cut_off_by_the_output_limit_is_named_as_such(
    scripted_model: ScriptedModelServer,
) -> None:
    """Qwen2.5-Coder 1.5B's planning replies ran into `max_output_tokens: 1024` and were
    reported as "not JSON": the model was told its JSON was broken, the maintainer was never
    told which setting to raise."""
    cut = dataclasses.replace(
        reply_text("completion", '{"phase": "completion", "done": true, "summary": {"goa'),
        finish_reason="length",
    )
    scripted_model.add(cut, dataclasses.replace(cut))
    with pytest.raises(ModelBehaviourError) as caught:
        model(scripted_model, [], [], max_output_tokens=1024).structured(
            "completion", MESSAGES, CompletionReply
        )
    said = "cut off at the output limit (llm.max_output_tokens = 1024)"
    assert said in str(caught.value)
    reask = scripted_model.requests[1].body["messages"][-1]["content"]
    assert said in reask and "shorter" in reask


def test_a_loop_cut_off_at_the_limit_is_not_shown_back_and_the_reask_samples_warmer(
    scripted_model: ScriptedModelServer,
) -> None:
    """At temperature 0 the 1.5B's plan repeated one subtask until the output limit; asked again
    in a conversation that showed it that reply, it wrote the same 2,048 tokens again. The re-ask
    is the request with the problem, without the loop, at REPEAT_TEMPERATURE."""
    loop = '{"phase": "completion", "summary": {"key_outcomes": [' + '"read the rule", ' * 40
    cut = dataclasses.replace(reply_text("completion", loop), finish_reason="length")
    scripted_model.add(cut, reply_json("completion", DONE))
    client = model(scripted_model, [], [], temperature=0, max_output_tokens=1024)
    assert client.structured("completion", MESSAGES, CompletionReply).done is True
    first, second = (r.body for r in scripted_model.requests)
    assert (first["temperature"], second["temperature"]) == (0, REPEAT_TEMPERATURE)
    assert len(second["messages"]) == len(MESSAGES)
    assert second["messages"][-1]["content"].startswith(MESSAGES[-1]["content"] + "\n\n")
    assert "cut off at the output limit" in second["messages"][-1]["content"]
    assert not any(m["role"] == "assistant" for m in second["messages"])
    assert second["response_format"] == first["response_format"]  # the grammar was not the cause
    assert second["response_format"]["type"] == "json_schema"


def test_a_malformed_reply_that_was_not_cut_off_is_not_called_cut_off(
    scripted_model: ScriptedModelServer,
) -> None:
    scripted_model.add(reply_text("completion", "nope"), reply_json("completion", DONE))
    model(scripted_model, [], [], max_output_tokens=1024).structured(
        "completion", MESSAGES, CompletionReply
    )
    assert "cut off" not in scripted_model.requests[1].body["messages"][-1]["content"]


def test_missing_key_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAIModel(LLMConfig())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('Sure:\n```json\n{"a": 2}\n```', {"a": 2}),
        ('prefix {"a": {"b": 3}} suffix', {"a": {"b": 3}}),
    ],
)
def test_extract_json(text: str, expected: object) -> None:
    assert extract_json(text) == expected


def test_prompt_with_undefined_variable_fails() -> None:
    with pytest.raises(jinja2.UndefinedError):
        render("reask.md.j2", kind="planning")
