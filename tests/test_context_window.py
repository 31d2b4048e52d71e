"""Every request fits the model's context window: fitted before it is sent, and shrunk and
sent again when a server answers that it overflowed (real sockets, the scripted server)."""

from __future__ import annotations

import copy
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from planner.config import LLMConfig
from planner.core.errors import ApiError
from planner.core.interfaces import ToolCall, ToolSpec
from planner.model.context_window import discover_window, fit, overflow_limit, request_tokens
from planner.model.conversation import assistant, tool_message, user
from planner.model.llm import OpenAIModel
from planner.testing.scripted_server import ScriptedModelServer
from planner.testing.steps import reply_error, reply_text

READ = ToolSpec(
    name="read_file",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}},
)
LLAMA_OVERFLOW = "the request exceeds the available context size, try increasing it"
OPENAI_OVERFLOW = (
    "This model's maximum context length is 8192 tokens. However, your messages resulted in "
    "30512 tokens. Please reduce the length of the messages."
)


def big_module(functions: int = 400) -> str:
    """A module of a few thousand lines; `divide` is one function deep inside it."""
    parts = []
    for number in range(functions):
        name = "divide" if number == functions * 3 // 4 else f"helper_{number}"
        parts.append(
            f"def {name}(items, n):\n    total = 0\n    for item in items:\n"
            f"        total += item * {number}\n    return total // n\n\n"
        )
    return "".join(parts)


def conversation() -> list[dict[str, Any]]:
    """A task that read a 2,800-line module whole, then asked about divide."""
    read = ToolCall(id="call_1", name="read_file", arguments={"path": "more.py"})
    search = ToolCall(id="call_2", name="read_file", arguments={"path": "more.py", "q": "divide"})
    return [
        {"role": "system", "content": "You are planner."},
        user("Task: fix divide() in more.py; it loses the last items."),
        assistant(None, [read]),
        tool_message("call_1", big_module()),
        assistant(None, [search]),
        tool_message("call_2", big_module()),
        user("Fix it now."),
    ]


def model(server: ScriptedModelServer, **settings: Any) -> OpenAIModel:
    config = LLMConfig.model_validate(
        {
            "api_key": "k",
            "base_url": server.base_url,
            "model": "m",
            "max_retries": 0,
            "tool_calling": "native",
            **settings,
        }
    )
    return OpenAIModel(config)


def sent_tokens(body: dict[str, Any]) -> int:
    return request_tokens(body["messages"], {"tools": body.get("tools")} if "tools" in body else {})


def test_a_request_is_fitted_to_the_window_llama_server_reports() -> None:
    messages = conversation()
    original = copy.deepcopy(messages)
    assert request_tokens(messages, {}) > 25_000
    with ScriptedModelServer([reply_text("execute", "done")], n_ctx=8192) as server:
        reply = model(server, max_output_tokens=1024).chat("execute", messages, [READ])
        body = server.requests[0].body
    assert reply.content == "done"
    assert sent_tokens(body) <= 8192 - 1024
    assert messages == original  # the pass's own conversation keeps everything
    sent = body["messages"]
    assert sent[0] == original[0] and sent[-1] == original[-1]  # system prompt, latest words
    assert "Task: fix divide() in more.py" in sent[1]["content"]
    text = json.dumps(sent)
    assert "cut to fit the model's context window" in text
    # The result cut around what its call asked for: the lines of divide are kept.
    assert "def divide(items, n):" in text


def test_an_overflow_error_from_llama_server_shrinks_the_request_and_sends_it_again() -> None:
    messages = conversation()
    steps = [
        reply_error(400, LLAMA_OVERFLOW, error_type="exceed_context_size_error"),
        reply_text("execute", "done"),
    ]
    with ScriptedModelServer(steps) as server:  # no /props: the window is unknown
        reply = model(server).chat("execute", messages, [READ])
        first, second = (request.body for request in server.requests)
    assert reply.content == "done"
    assert sent_tokens(second) < 0.8 * sent_tokens(first)


def test_openai_context_length_exceeded_gives_the_window() -> None:
    steps = [
        reply_error(400, OPENAI_OVERFLOW, code="context_length_exceeded"),
        reply_text("execute", "done"),
    ]
    with ScriptedModelServer(steps) as server:
        llm = model(server, max_output_tokens=1000)
        assert llm.chat("execute", conversation(), [READ]).content == "done"
        assert sent_tokens(server.requests[1].body) <= 8192 - 1000
        # The window is known from then on: the next request is fitted before it is sent.
        server.add(reply_text("execute", "again"))
        assert llm.chat("execute", conversation(), [READ]).content == "again"
        assert len(server.requests) == 3
        assert sent_tokens(server.requests[2].body) <= 8192 - 1000


def test_other_client_errors_are_not_taken_for_an_overflow() -> None:
    with ScriptedModelServer([reply_error(400, "messages[1].role is invalid")]) as server:
        with pytest.raises(ApiError, match="HTTP 400"):
            model(server).chat("execute", conversation(), [READ])
        assert len(server.requests) == 1


def test_llm_context_tokens_wins_over_what_the_server_says() -> None:
    with ScriptedModelServer([reply_text("execute", "done")], n_ctx=131_072) as server:
        model(server, context_tokens=6000, max_output_tokens=500).chat(
            "execute", conversation(), [READ]
        )
        assert sent_tokens(server.requests[0].body) <= 6000 - 500


def test_a_request_that_fits_is_sent_as_it_is() -> None:
    messages = [user("Fix the typo in README.md.")]
    with ScriptedModelServer([reply_text("execute", "done")], n_ctx=4096) as server:
        model(server).chat("execute", messages, [READ])
        assert server.requests[0].body["messages"] == messages


def test_older_turns_are_summarised_when_cutting_results_is_not_enough() -> None:
    messages: list[dict[str, Any]] = [user("Task: fix divide.")]
    for number in range(60):
        call = ToolCall(id=f"c{number}", name="read_file", arguments={"path": f"f{number}.py"})
        messages += [assistant(None, [call]), tool_message(f"c{number}", "x = 1\n" * 30)]
    messages.append(user("Decide now."))
    fitted = fit(messages, {}, window=2500, reply=500)
    assert fitted.tokens_after <= 2000
    first = fitted.messages[0]["content"]
    assert "Earlier turns, summarised" in first and 'read_file({"path": "f0.py"})' in first
    assert fitted.messages[-1] == messages[-1]
    # every tool result still follows the call it answers
    calls = {c["id"] for m in fitted.messages for c in m.get("tool_calls") or []}
    assert all(m["tool_call_id"] in calls for m in fitted.messages if m["role"] == "tool")


@pytest.mark.parametrize(
    ("message", "body", "limit"),
    [
        (LLAMA_OVERFLOW, {"n_prompt_tokens": 49_451, "n_ctx": 32_768}, 32_768),
        (OPENAI_OVERFLOW, {"code": "context_length_exceeded"}, 8192),
        ("prompt is too long", None, 0),
        ("Invalid 'messages[2].content'", {"code": "invalid_value"}, None),
    ],
)
def test_overflow_errors_are_recognised(message: str, body: Any, limit: int | None) -> None:
    assert overflow_limit(message, body) == limit


def test_a_fitted_request_fits_by_the_real_tokenizers_count() -> None:
    # The estimate is not the server's count; what matters is that the fitted request, counted
    # by Qwen's own tokenizer as its chat template lays it out, leaves the reply its room.
    from planner.evaluation.tokens import message_tokens, qwen_encoder

    encode = qwen_encoder()
    for window, reply in ((8192, 1024), (4096, 2048), (32_768, 2048)):
        fitted = fit(conversation(), {}, window=window, reply=reply)
        assert message_tokens(fitted.messages, encode) <= window - reply, window


def test_an_overflow_with_nothing_left_to_cut_is_reported_not_repeated() -> None:
    with ScriptedModelServer([reply_error(400, LLAMA_OVERFLOW)]) as server:
        with pytest.raises(ApiError, match="exceeds the available context size"):
            model(server).chat("execute", [user("Fix it.")], [READ])
        assert len(server.requests) == 1


class _Ollama(BaseHTTPRequestHandler):
    """Ollama's POST /api/show, as `ollama show` answers it (no /props)."""

    parameters = "num_ctx                        8192\ntemperature                    0.2"

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        asked = json.loads(self.rfile.read(length) or b"{}")
        if self.path != "/api/show" or asked.get("model") != "qwen2.5-coder:7b":
            self.send_error(404)
            return
        body = json.dumps({"modelfile": "FROM x", "parameters": self.parameters}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.send_error(404)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.mark.parametrize(("parameters", "window"), [(_Ollama.parameters, 8192), ("", 4096)])
def test_ollamas_num_ctx_is_the_window(parameters: str, window: int) -> None:
    handler = type("Handler", (_Ollama,), {"parameters": parameters})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        assert discover_window(url, "qwen2.5-coder:7b", "k") == window
    finally:
        server.shutdown()
        server.server_close()


def test_hosted_models_use_their_published_window_and_are_never_asked() -> None:
    assert discover_window(None, "gpt-4.1-mini", "k") == 1_047_576
    assert discover_window("https://api.openai.com/v1", "gpt-4o", "k") == 128_000
    assert discover_window(None, "some-unknown-model", "k") is None
