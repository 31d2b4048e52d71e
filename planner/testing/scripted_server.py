"""A scripted, OpenAI-compatible Chat Completions server for tests and demos.

The server speaks the real wire protocol over a real socket, so the production
code path (the ``openai`` client, its retries, its response parsing) is exercised
exactly as it would be against the real API, only the "model" is a queue of
scripted replies::

    from planner.testing.scripted_server import (
        ScriptedModelServer, reply_error, reply_json, reply_tool_calls,
    )

    with ScriptedModelServer() as server:
        server.add(
            reply_tool_calls("explore", [("read_file", {"path": "README.md"})]),
            reply_json("planning", {"steps": ["edit README.md"]}),
        )
        client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        ...  # run the code under test against ``client``
        server.assert_consumed()  # leftover steps or mismatches fail here

Each request consumes the next step in order. A step may name the *kind* of call
it expects: the request's kind is ``response_format.json_schema.name`` for
structured output, otherwise the ``X-Planner-Kind`` request header. A kind
mismatch, a failing ``expect`` callable or a malformed request is answered with
HTTP 400 (so the client raises ``openai.BadRequestError``) and is also recorded,
so ``assert_consumed()`` reports it even when the code under test swallows the
error. Every call is recorded in ``server.requests`` for later assertions.

Requests are validated the way the real API validates them (roles, tool-call
pairing, tool and response-format shapes), because a test that passes against a
lenient fake but fails against the real API is worse than no test.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import MappingProxyType, TracebackType
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "KIND_HEADER",
    "RecordedRequest",
    "ScriptedModelServer",
    "Step",
    "reply_error",
    "reply_json",
    "reply_text",
    "reply_tool_calls",
]

JsonDict = dict[str, Any]
Expectation = Callable[[JsonDict], None]
ToolCallSpec = tuple[str, Mapping[str, Any] | str]
Responder = Callable[[str | None, JsonDict], "Step"]

KIND_HEADER = "X-Planner-Kind"
DEFAULT_MODEL_ID = "scripted-model"

_ROLES = ("system", "user", "assistant", "tool", "developer")
_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_CHAT_PATH = "/v1/chat/completions"
_MODELS_PATH = "/v1/models"


# --------------------------------------------------------------------------- steps


@dataclass(frozen=True)
class Step:
    """One scripted model turn: a completion to return, or an HTTP error.

    Build steps with the ``reply_*`` helpers; use ``dataclasses.replace`` to
    tweak rarer fields (for example ``finish_reason="length"``).
    """

    kind: str | None = None
    content: str | None = None
    # (function name, arguments already encoded as the JSON string sent on the wire)
    tool_calls: tuple[tuple[str, str], ...] = ()
    finish_reason: str = "stop"
    status: int = 200
    error_message: str = ""
    error_type: str | None = None
    error_code: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    usage: Mapping[str, int] | None = None
    expect: Expectation | None = None
    delay_seconds: float = 0.0
    chunk_delay_seconds: float = 0.0
    """Streamed (`stream: true`), the pause before each chunk: a slow generation."""

    def __post_init__(self) -> None:
        if self.status != 200 and not 400 <= self.status <= 599:
            raise ValueError(f"step status must be 200 or 4xx/5xx, got {self.status}")
        if self.delay_seconds < 0:
            raise ValueError("delay_seconds must not be negative")

    @property
    def is_error(self) -> bool:
        return self.status >= 400

    def describe(self) -> str:
        """Short human description used in failure reports."""
        if self.is_error:
            return f"error {self.status}: {self.error_message}"
        if self.tool_calls:
            names = ", ".join(name for name, _ in self.tool_calls)
            return f"tool_calls [{names}]"
        return f"content {_shorten(self.content or '')}"


def _frozen_usage(usage: Mapping[str, int] | None) -> Mapping[str, int] | None:
    # Steps are frozen; a read-only copy stops a test from mutating a shared dict later.
    return None if usage is None else MappingProxyType(dict(usage))


def reply_json(
    kind: str | None,
    document: Mapping[str, Any],
    usage: Mapping[str, int] | None = None,
    *,
    expect: Expectation | None = None,
    delay_seconds: float = 0.0,
) -> Step:
    """Assistant message whose content is ``json.dumps(document)``."""
    return Step(
        kind=kind,
        content=json.dumps(document),
        usage=_frozen_usage(usage),
        expect=expect,
        delay_seconds=delay_seconds,
    )


def reply_text(
    kind: str | None,
    text: str,
    usage: Mapping[str, int] | None = None,
    *,
    expect: Expectation | None = None,
    delay_seconds: float = 0.0,
    chunk_delay_seconds: float = 0.0,
) -> Step:
    """Assistant message with verbatim content (handy for scripting garbage output)."""
    return Step(
        kind=kind,
        content=text,
        usage=_frozen_usage(usage),
        expect=expect,
        delay_seconds=delay_seconds,
        chunk_delay_seconds=chunk_delay_seconds,
    )


def reply_tool_calls(
    kind: str | None,
    calls: Sequence[ToolCallSpec],
    content: str | None = None,
    usage: Mapping[str, int] | None = None,
    *,
    expect: Expectation | None = None,
    delay_seconds: float = 0.0,
) -> Step:
    """Assistant message with ``tool_calls``.

    Dict arguments are JSON-encoded; a string is sent verbatim so tests can script
    malformed arguments.
    """
    if not calls:
        raise ValueError("reply_tool_calls needs at least one call")
    encoded = tuple(
        (name, args if isinstance(args, str) else json.dumps(dict(args))) for name, args in calls
    )
    return Step(
        kind=kind,
        content=content,
        tool_calls=encoded,
        finish_reason="tool_calls",
        usage=_frozen_usage(usage),
        expect=expect,
        delay_seconds=delay_seconds,
    )


def reply_error(
    status: int,
    message: str = "scripted error",
    headers: Mapping[str, str] | None = None,
    kind: str | None = None,
    *,
    error_type: str | None = None,
    code: str | None = None,
    expect: Expectation | None = None,
    delay_seconds: float = 0.0,
) -> Step:
    """HTTP error in OpenAI's error shape.

    Example: ``reply_error(429, headers={"Retry-After": "0"})`` for rate limiting.
    """
    if status < 400:
        raise ValueError(f"reply_error needs a 4xx/5xx status, got {status}")
    return Step(
        kind=kind,
        status=status,
        error_message=message,
        error_type=error_type,
        error_code=code,
        headers=tuple((headers or {}).items()),
        expect=expect,
        delay_seconds=delay_seconds,
    )


# --------------------------------------------------------------------- recording


@dataclass(frozen=True)
class RecordedRequest:
    """One chat-completions call as the server saw it."""

    kind: str | None
    body: JsonDict
    headers: dict[str, str]  # names lower-cased, like HTTP/2 and httpx
    step_index: int | None  # None when the request never reached a step


@dataclass(frozen=True)
class _Reply:
    status: int
    payload: JsonDict
    headers: tuple[tuple[str, str], ...] = ()
    stream: bool = False
    """Sent as server-sent events, as the API streams (`stream: true`)."""
    usage_chunk: bool = False
    """The stream ends with the usage chunk (`stream_options.include_usage`)."""
    chunk_delay: float = 0.0
    """Seconds before each streamed chunk (Step.chunk_delay_seconds)."""


class _ProtocolError(Exception):
    """A request the real API would reject with HTTP 400."""

    def __init__(self, message: str, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code


def _error_reply(
    status: int,
    message: str,
    *,
    error_type: str | None = None,
    param: str | None = None,
    code: str | None = None,
    headers: tuple[tuple[str, str], ...] = (),
) -> _Reply:
    default_type, default_code = _default_error_type(status)
    error = {
        "message": message,
        "type": error_type or default_type,
        "param": param,
        "code": code if code is not None else default_code,
    }
    return _Reply(status, {"error": error}, headers)


def _default_error_type(status: int) -> tuple[str, str | None]:
    # Mirrors what api.openai.com returns, so client-side error mapping is realistic.
    if status == 429:
        return "requests", "rate_limit_exceeded"
    if status >= 500:
        return "server_error", None
    return "invalid_request_error", None


# -------------------------------------------------------------------- validation


def _parse_body(raw: bytes) -> JsonDict:
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        body = None
    if not isinstance(body, dict):
        raise _ProtocolError(
            "We could not parse the JSON body of your request. The OpenAI API expects "
            "a JSON payload."
        )
    return body


def _validate_request(body: JsonDict) -> None:
    options = body.get("stream_options")
    if options is not None and body.get("stream") is not True:
        raise _ProtocolError(
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            "stream_options",
        )
    if not isinstance(body.get("model"), str):
        raise _ProtocolError("you must provide a model parameter", "model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _ProtocolError("'messages' must be a non-empty array", "messages")
    for index, message in enumerate(messages):
        _validate_message(index, message)
    _validate_tool_pairing(messages)
    if "tools" in body:
        _validate_tools(body["tools"])
    if "response_format" in body:
        _validate_response_format(body["response_format"])


def _validate_message(index: int, message: object) -> None:
    where = f"messages[{index}]"
    if not isinstance(message, dict):
        raise _ProtocolError(f"Invalid type for '{where}': expected an object.", where)
    role = message.get("role")
    if role not in _ROLES:
        supported = ", ".join(repr(r) for r in _ROLES)
        raise _ProtocolError(
            f"Invalid value: {role!r}. Supported values are: {supported}.",
            f"{where}.role",
            "invalid_value",
        )
    content = message.get("content")
    if content is not None and not isinstance(content, str | list):
        raise _ProtocolError(f"Invalid type for '{where}.content'.", f"{where}.content")
    if role == "assistant":
        _validate_assistant(where, message)
    elif content is None:
        raise _ProtocolError(f"Missing required parameter: '{where}.content'.", f"{where}.content")


def _validate_assistant(where: str, message: JsonDict) -> None:
    tool_calls = message.get("tool_calls")
    if tool_calls is None:
        if message.get("content") is None:
            raise _ProtocolError(
                f"Invalid value for '{where}.content': expected a string, got null.",
                f"{where}.content",
            )
        return
    if not isinstance(tool_calls, list) or not tool_calls:
        raise _ProtocolError(
            f"Invalid '{where}.tool_calls': expected a non-empty array.", f"{where}.tool_calls"
        )
    for position, call in enumerate(tool_calls):
        _validate_tool_call(f"{where}.tool_calls[{position}]", call)


def _validate_tool_call(where: str, call: object) -> None:
    if not isinstance(call, dict) or not isinstance(call.get("id"), str):
        raise _ProtocolError(f"Missing required parameter: '{where}.id'.", f"{where}.id")
    if call.get("type") != "function":
        raise _ProtocolError(f"Invalid value for '{where}.type'.", f"{where}.type")
    function = call.get("function")
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise _ProtocolError(
            f"Missing required parameter: '{where}.function.name'.", f"{where}.function"
        )
    # The API only accepts the arguments as the string it produced, not a decoded object.
    if not isinstance(function.get("arguments"), str):
        raise _ProtocolError(
            f"Invalid type for '{where}.function.arguments': expected a string.",
            f"{where}.function.arguments",
        )


def _validate_tool_pairing(messages: list[JsonDict]) -> None:
    # Ids of the latest assistant tool_calls that still await a tool message, by the
    # index of that assistant message; the API rejects any gap in this pairing.
    pending: dict[str, int] = {}
    for index, message in enumerate(messages):
        if message["role"] == "tool":
            _answer_tool_call(index, message, pending)
            continue
        _require_answered(pending)
        if message["role"] == "assistant" and message.get("tool_calls"):
            pending = {call["id"]: index for call in message["tool_calls"]}
    _require_answered(pending)


def _answer_tool_call(index: int, message: JsonDict, pending: dict[str, int]) -> None:
    call_id = message.get("tool_call_id")
    if not isinstance(call_id, str):
        raise _ProtocolError(
            f"Missing required parameter: 'messages[{index}].tool_call_id'.",
            f"messages[{index}].tool_call_id",
        )
    if call_id not in pending:
        raise _ProtocolError(
            "Invalid parameter: messages with role 'tool' must be a response to a preceding "
            f"message with 'tool_calls' (unknown or already answered tool_call_id {call_id!r}).",
            f"messages[{index}].role",
        )
    del pending[call_id]


def _require_answered(pending: dict[str, int]) -> None:
    if not pending:
        return
    index = next(iter(pending.values()))
    missing = ", ".join(sorted(pending))
    raise _ProtocolError(
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        f"to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        f"{missing}",
        f"messages[{index}].role",
    )


def _validate_tools(tools: object) -> None:
    if not isinstance(tools, list):
        raise _ProtocolError("Invalid type for 'tools': expected an array.", "tools")
    for index, tool in enumerate(tools):
        where = f"tools[{index}]"
        if not isinstance(tool, dict) or tool.get("type") != "function":
            raise _ProtocolError(f"Invalid value for '{where}.type'.", f"{where}.type")
        function = tool.get("function")
        if not isinstance(function, dict):
            raise _ProtocolError(
                f"Missing required parameter: '{where}.function'.", f"{where}.function"
            )
        _validate_name(function.get("name"), f"{where}.function.name")
        # The real API lets "parameters" be omitted (no-argument function), so only
        # its type is checked.
        if "parameters" in function and not isinstance(function["parameters"], dict):
            raise _ProtocolError(
                f"Invalid type for '{where}.function.parameters': expected an object.",
                f"{where}.function.parameters",
            )


def _validate_response_format(response_format: object) -> None:
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    if kind in ("text", "json_object"):
        return
    if kind != "json_schema":
        raise _ProtocolError(
            "Invalid value for 'response_format.type': supported values are 'text', "
            "'json_object' and 'json_schema'.",
            "response_format.type",
            "invalid_value",
        )
    assert isinstance(response_format, dict)  # narrowed by the kind check above
    spec = response_format.get("json_schema")
    if not isinstance(spec, dict):
        raise _ProtocolError(
            "Missing required parameter: 'response_format.json_schema'.",
            "response_format.json_schema",
        )
    _validate_name(spec.get("name"), "response_format.json_schema.name")
    if not isinstance(spec.get("schema"), dict):
        raise _ProtocolError(
            "Invalid type for 'response_format.json_schema.schema': expected an object.",
            "response_format.json_schema.schema",
        )


def _validate_name(name: object, param: str) -> None:
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise _ProtocolError(
            f"Invalid '{param}': string does not match pattern. Expected a string that "
            f"matches the pattern '^[a-zA-Z0-9_-]{{1,64}}$', got {name!r}.",
            param,
            "invalid_value",
        )


def _request_kind(body: JsonDict, headers: Mapping[str, str]) -> str | None:
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        spec = response_format.get("json_schema")
        name = spec.get("name") if isinstance(spec, dict) else None
        if isinstance(name, str):
            return name
    return headers.get(KIND_HEADER.lower())


# ------------------------------------------------------------------ completions


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def _usage(step: Step, messages: list[JsonDict], completion_text: str) -> dict[str, int]:
    # ~4 characters per token is the usual rule of thumb; it only needs to be
    # deterministic and proportional so budget accounting can be tested.
    prompt = math.ceil(sum(len(_content_text(m.get("content"))) for m in messages) / 4)
    completion = math.ceil(len(completion_text) / 4)
    usage = {"prompt_tokens": prompt, "completion_tokens": completion}
    usage.update(step.usage or {})
    if step.usage is None or "total_tokens" not in step.usage:
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return usage


def _shorten(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


STREAM_PIECE = 16
"""Characters of text per streamed chunk (a real endpoint sends one token each)."""


def _stream_chunks(reply: _Reply) -> Iterator[JsonDict]:
    payload = reply.payload
    choice = payload["choices"][0]
    message = choice["message"]
    head = {k: payload[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}

    def chunk(delta: JsonDict, finish: str | None = None) -> JsonDict:
        return head | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": None})
    text = message.get("content") or ""
    for start in range(0, len(text), STREAM_PIECE):
        yield chunk({"content": text[start : start + STREAM_PIECE]})
    for index, call in enumerate(message.get("tool_calls") or []):
        yield chunk({"tool_calls": [{"index": index, **call}]})
    yield chunk({}, choice["finish_reason"])
    if reply.usage_chunk:
        yield head | {"choices": [], "usage": payload["usage"]}


# ----------------------------------------------------------------------- server


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    scripted: ScriptedModelServer


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        path = urlsplit(self.path).path.rstrip("/")
        if path == _MODELS_PATH:
            self._send(self.server.scripted._models_reply())
        elif path == "/props" and self.server.scripted.n_ctx is not None:
            self._send(self.server.scripted._props_reply())
        else:
            self._send_not_found()

    def do_POST(self) -> None:
        raw = self._read_body()
        path = urlsplit(self.path).path.rstrip("/")
        if path == _CHAT_PATH:
            headers = {name.lower(): value for name, value in self.headers.items()}
            self._send(self.server.scripted._handle_chat(raw, headers))
        else:
            self._send_not_found()

    def do_PUT(self) -> None:
        self._read_body()
        self._send_not_found()

    def do_PATCH(self) -> None:
        self.do_PUT()

    def do_DELETE(self) -> None:
        self.do_PUT()

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send_not_found(self) -> None:
        self._send(_error_reply(404, f"Invalid URL ({self.command} {self.path})"))

    def _send(self, reply: _Reply) -> None:
        if reply.stream:
            self._send_stream(reply)
            return
        data = json.dumps(reply.payload).encode()
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        # One request per connection: no idle keep-alive threads to outlive stop().
        self.send_header("Connection", "close")
        for name, value in reply.headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def _send_stream(self, reply: _Reply) -> None:
        """The completion as the API streams it: a chunk per few characters of text, a chunk
        per tool call, the finish reason, the usage chunk when asked, then [DONE]."""
        self.send_response(reply.status)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        for name, value in reply.headers:
            self.send_header(name, value)
        self.end_headers()
        self.close_connection = True
        try:
            for chunk in _stream_chunks(reply):
                time.sleep(reply.chunk_delay)
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return  # the client stopped reading (llm.stop_repeating closes a looping reply)

    def log_message(self, format: str, *args: Any) -> None:
        # Access logs would drown pytest's captured output; failures are recorded instead.
        return


class ScriptedModelServer:
    """OpenAI-compatible HTTP server answering from a queue of scripted ``Step``s."""

    def __init__(
        self,
        steps: Iterable[Step] | None = None,
        *,
        model: str = DEFAULT_MODEL_ID,
        responder: Responder | None = None,
        n_ctx: int | None = None,
    ):
        self._steps: list[Step] = list(steps or ())
        # The context window llama-server reports at GET /props (None: no /props, as OpenAI).
        self.n_ctx = n_ctx
        # Answers requests once the queue is empty (a model that replies by kind, for evals).
        self._responder = responder
        self._cursor = 0
        self._model = model
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._mismatches: list[str] = []
        self._protocol_errors: list[str] = []
        self._serial = 0
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        # Lets a test opt out of the leftover-steps check (mismatches still fail).
        self.allow_leftovers = False

    # -- lifecycle

    def start(self) -> ScriptedModelServer:
        if self._httpd is not None:
            raise RuntimeError("scripted model server already started")
        httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        httpd.scripted = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"scripted-model-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("scripted model server is not running")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- script and records

    def add(self, *steps: Step) -> None:
        with self._lock:
            self._steps.extend(steps)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def mismatches(self) -> list[str]:
        with self._lock:
            return list(self._mismatches)

    @property
    def protocol_errors(self) -> list[str]:
        with self._lock:
            return list(self._protocol_errors)

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._steps) - self._cursor

    def assert_consumed(self) -> None:
        """Fail if steps were left over or any request was rejected or mismatched."""
        with self._lock:
            leftovers = list(enumerate(self._steps))[self._cursor :]
            mismatches = list(self._mismatches)
            protocol_errors = list(self._protocol_errors)
        problems: list[str] = []
        if leftovers and not self.allow_leftovers:
            problems.append(f"{len(leftovers)} scripted step(s) never requested:")
            problems += [f"  step {i}: kind={s.kind!r} {s.describe()}" for i, s in leftovers]
        if mismatches:
            problems.append(f"{len(mismatches)} mismatch(es):")
            problems += [f"  {m}" for m in mismatches]
        if protocol_errors:
            problems.append(f"{len(protocol_errors)} protocol error(s):")
            problems += [f"  {e}" for e in protocol_errors]
        if problems:
            raise AssertionError("scripted model server:\n" + "\n".join(problems))

    # -- request handling (runs on server threads)

    def _props_reply(self) -> _Reply:
        """llama-server's GET /props (the part planner reads)."""
        settings = {"n_ctx": self.n_ctx, "temperature": 0.8}
        return _Reply(200, {"default_generation_settings": settings, "total_slots": 1})

    def _models_reply(self) -> _Reply:
        model = {"id": self._model, "object": "model", "created": 0, "owned_by": "scripted"}
        return _Reply(200, {"object": "list", "data": [model]})

    def _handle_chat(self, raw: bytes, headers: dict[str, str]) -> _Reply:
        try:
            body = _parse_body(raw)
        except _ProtocolError as exc:
            return self._reject(headers.get(KIND_HEADER.lower()), {}, headers, exc)
        kind = _request_kind(body, headers)
        try:
            _validate_request(body)
        except _ProtocolError as exc:
            return self._reject(kind, body, headers, exc)
        index, step = self._take_step(kind, body, headers)
        if step is None:
            message = f"scripted model: no step left for request kind={kind}"
            self._note_mismatch(message)
            return _error_reply(500, message)
        if step.delay_seconds:
            time.sleep(step.delay_seconds)
        problem = _check_step(index, step, kind, body)
        if problem is not None:
            self._note_mismatch(problem)
            return _error_reply(400, problem)
        if step.is_error:
            return self._step_error(step)
        return self._completion(step, body)

    def _reject(
        self, kind: str | None, body: JsonDict, headers: dict[str, str], exc: _ProtocolError
    ) -> _Reply:
        with self._lock:
            self._requests.append(RecordedRequest(kind, body, headers, None))
            self._protocol_errors.append(f"kind={kind}: {exc.message} (param={exc.param})")
        return _error_reply(400, exc.message, param=exc.param, code=exc.code)

    def _take_step(
        self, kind: str | None, body: JsonDict, headers: dict[str, str]
    ) -> tuple[int | None, Step | None]:
        # Record and pop under one lock so request order always matches step order.
        with self._lock:
            if self._cursor >= len(self._steps) and self._responder is not None:
                self._steps.append(self._responder(kind, body))
            if self._cursor >= len(self._steps):
                self._requests.append(RecordedRequest(kind, body, headers, None))
                return None, None
            index = self._cursor
            self._cursor += 1
            self._requests.append(RecordedRequest(kind, body, headers, index))
            return index, self._steps[index]

    def _note_mismatch(self, message: str) -> None:
        with self._lock:
            self._mismatches.append(message)

    def _next_serial(self) -> int:
        with self._lock:
            self._serial += 1
            return self._serial

    def _step_error(self, step: Step) -> _Reply:
        return _error_reply(
            step.status,
            step.error_message,
            error_type=step.error_type,
            code=step.error_code,
            headers=step.headers,
        )

    def _completion(self, step: Step, body: JsonDict) -> _Reply:
        # Globally unique ids, so later turns never reuse an id the conversation already holds.
        tool_calls = [
            {
                "id": f"call_{self._next_serial()}",
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
            for name, arguments in step.tool_calls
        ]
        message: JsonDict = {"role": "assistant", "content": step.content, "refusal": None}
        if tool_calls:
            message["tool_calls"] = tool_calls
        completion_text = (step.content or "") + (json.dumps(tool_calls) if tool_calls else "")
        serial = self._next_serial()
        payload = {
            "id": f"chatcmpl-scripted-{serial}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": step.finish_reason,
                    "logprobs": None,
                }
            ],
            "usage": _usage(step, body["messages"], completion_text),
        }
        options = body.get("stream_options")
        return _Reply(
            200,
            payload,
            (("x-request-id", f"req_scripted_{serial}"),),
            stream=body.get("stream") is True,
            usage_chunk=isinstance(options, dict) and options.get("include_usage") is True,
            chunk_delay=step.chunk_delay_seconds,
        )


def _check_step(index: int | None, step: Step, kind: str | None, body: JsonDict) -> str | None:
    """Why the request does not fit the step, or None when it does."""
    if step.kind is not None and step.kind != kind:
        return (
            f"scripted model: step {index} expected kind={step.kind!r} "
            f"but the request has kind={kind!r}"
        )
    if step.expect is None:
        return None
    try:
        step.expect(body)
    except AssertionError as exc:
        return f"scripted model: step {index} (kind={step.kind!r}) expectation failed: {exc}"
    except Exception as exc:
        # A buggy expectation must still surface as a clear test failure, not a dead thread.
        return (
            f"scripted model: step {index} (kind={step.kind!r}) expectation raised "
            f"{type(exc).__name__}: {exc}"
        )
    return None
