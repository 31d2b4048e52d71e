"""Replies read as a stream and stopped once they repeat themselves (llm.stop_repeating).

The streams come from the scripted model server over real HTTP (server-sent events, as the
API sends them) through the real openai client; the loops are the shapes the 1.5B wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.config import LLMConfig, load_config
from planner.core.interfaces import ToolSpec
from planner.model.llm import OpenAIModel
from planner.model.sampling import REPEAT_TEMPERATURE
from planner.model.streaming import REPEAT_STEP, REPEAT_WINDOW, repeating
from planner.model.usage import CallRecord
from planner.plan.documents import CompletionReply
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_json, reply_text, reply_tool_calls

ROOT = Path(__file__).resolve().parent.parent
MESSAGES = [{"role": "user", "content": "add peek() to the stack"}]
FIXED = (
    "stack.py\n```python\nclass Stack:\n    def peek(self):\n        return self._items[-1]\n```\n"
)
SNIPPET_LOOP = (
    "Now, let's run the tests to check the methods. Here's the updated code for the "
    "`run_tests` function:\n\n```python\nimport pytest\n\ndef run_tests() -> None:\n"
    "    pytest.main()\n```\n\n"
) * 60
SUBTASK_LOOP = "".join(
    f'{{"id": "{n}", "description": "Read the `durations` section in the `README.md` file '
    f'and extract the `durations` section.", "dependencies": ["{n - 1}"]}},\n'
    for n in range(2, 80)
)
TEMPERATURE = "def to_fahrenheit(celsius: float) -> float:\n    return celsius * 9 / 5 - 32\n"
BLOCK_LOOP = "".join(f"{n}. `temperature.py`\n```python\n{TEMPERATURE}```\n" for n in range(1, 12))
"""The 0.5B's fahrenheit_formula reply: the file, unchanged, as numbered blocks until stopped."""
DONE = {
    "phase": "completion",
    "done": True,
    "summary": {"goal_achieved": True, "tasks_completed": 1},
}


def model(
    server: ScriptedModelServer, records: list[CallRecord], **settings: object
) -> OpenAIModel:
    config = LLMConfig.model_validate(
        {"api_key": "k", "base_url": server.base_url, "model": "m", "stop_repeating": True}
        | settings
    )
    return OpenAIModel(config, on_call=records.append, sleep=lambda _: None)


@pytest.mark.parametrize("loop", [SNIPPET_LOOP, SUBTASK_LOOP], ids=["snippet", "subtasks"])
def test_a_loop_is_repeating(loop: str) -> None:
    assert repeating(loop)


def test_the_same_block_three_times_is_a_loop_long_before_the_window() -> None:
    assert len(BLOCK_LOOP) < REPEAT_WINDOW and repeating(BLOCK_LOOP)
    third = BLOCK_LOOP.index("3. ")
    assert not repeating(BLOCK_LOOP[:third])  # twice is not yet a loop
    # three different blocks, or the same one-line command thrice, are not a loop
    different = "".join(f"```python\n{TEMPERATURE}x = {n}\n```\n" for n in range(3))
    assert not repeating(different) and not repeating("```sh\npytest\n```\n" * 3)


def test_a_reply_repeating_its_block_is_stopped_after_the_third(
    scripted_model: ScriptedModelServer,
) -> None:
    scripted_model.add(reply_text("legacy", BLOCK_LOOP))
    records: list[CallRecord] = []
    reply = model(scripted_model, records, temperature=0).chat("legacy", MESSAGES, [])
    # the tail is measured every REPEAT_STEP characters: stopped within that of the third block
    assert reply.content is not None and reply.content.startswith(BLOCK_LOOP[:200])
    assert len(reply.content) < BLOCK_LOOP.index("3. ") + REPEAT_STEP + 100 < len(BLOCK_LOOP)


@pytest.mark.parametrize(
    "path", ["planner/model/llm.py", "README.md", "docs/configuration.md", "CHANGELOG.md"]
)
def test_real_text_with_its_own_patterns_is_not_repeating(path: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8")
    windows = range(REPEAT_WINDOW, len(text), 500)
    assert not any(repeating(text[:end]) for end in windows)


def test_a_looping_reply_is_stopped_and_what_came_before_is_the_reply(
    scripted_model: ScriptedModelServer,
) -> None:
    scripted_model.add(reply_text("execute", FIXED + SNIPPET_LOOP), reply_text("execute", "ok"))
    records: list[CallRecord] = []
    client = model(scripted_model, records, temperature=0)
    reply = client.chat("execute", MESSAGES, [], tools_on_wire=False)
    assert reply.content is not None and reply.content.startswith(FIXED)
    assert len(reply.content) < len(FIXED + SNIPPET_LOOP) / 2
    first = scripted_model.requests[0].body
    assert first["stream"] is True and first["stream_options"] == {"include_usage": True}
    assert 0 < records[0].completion_tokens < len(SNIPPET_LOOP) // 16
    client.chat("execute", MESSAGES, [], tools_on_wire=False)
    assert scripted_model.requests[1].body["temperature"] == REPEAT_TEMPERATURE
    # The stopped stream never got the usage chunk; its prompt is estimated as the server
    # counts it (4 characters per token), not taken for free by the token budget.
    assert records[0].prompt_tokens == records[1].prompt_tokens > 0


def test_a_reply_that_ends_is_read_whole_with_the_endpoints_usage(
    scripted_model: ScriptedModelServer,
) -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")[:6000]
    scripted_model.add(reply_text("execute", text), reply_text("execute", text))
    streamed: list[CallRecord] = []
    reply = model(scripted_model, streamed, temperature=0).chat("execute", MESSAGES, [])
    whole: list[CallRecord] = []
    plain = model(scripted_model, whole, temperature=0, stop_repeating=False)
    assert reply == plain.chat("execute", MESSAGES, [])
    assert reply.content == text
    assert (streamed[0].prompt_tokens, streamed[0].completion_tokens) == (
        whole[0].prompt_tokens,
        whole[0].completion_tokens,
    )
    assert streamed[0].prompt_tokens > 0
    assert "stream" not in scripted_model.requests[1].body


def test_tool_calls_arrive_through_the_stream(scripted_model: ScriptedModelServer) -> None:
    arguments = json.dumps({"path": "stack.py"})
    scripted_model.add(reply_tool_calls("execute", [("read_file", arguments)]))
    tool = ToolSpec(
        name="read_file",
        description="Read a file",
        parameters={"type": "object", "properties": {"path": {"type": "string"}}},
    )
    reply = model(scripted_model, []).chat("execute", MESSAGES, [tool])
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("read_file", {"path": "stack.py"})
    ]


def test_a_plan_stopped_in_a_loop_is_asked_again_saying_why(
    scripted_model: ScriptedModelServer,
) -> None:
    loop = '{"phase": "completion", "summary": {"key_outcomes": [' + SUBTASK_LOOP
    scripted_model.add(reply_text("completion", loop), reply_json("completion", DONE))
    client = model(scripted_model, [], temperature=0)
    assert client.structured("completion", MESSAGES, CompletionReply).done is True
    again = scripted_model.requests[1].body
    assert "kept repeating itself" in again["messages"][-1]["content"]
    assert again["temperature"] == REPEAT_TEMPERATURE


def test_the_small_model_profile_stops_repeating_replies() -> None:
    assert load_config(None, env={"PLANNER_PROFILE": "small_model"}).llm.stop_repeating is True
    assert load_config(None, env={}).llm.stop_repeating is False
