"""A scripted, OpenAI-compatible Chat Completions server for tests and demos.

The server speaks the real wire protocol over a real socket, so the production
code path (the ``openai`` client, its retries, its response parsing) is exercised
exactly as it would be against the real API, only the "model" is a queue of
scripted replies::

    from planner.testing.scripted_server import ScriptedModelServer
    from planner.testing.steps import reply_error, reply_json, reply_tool_calls

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
pairing, tool and response-format shapes: planner.testing.protocol), because a
test that passes against a lenient fake but fails against the real API is worse
than no test. The steps are planner.testing.steps; the replies, whole or streamed,
planner.testing.completions.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

from planner.testing.completions import Reply, check_step, error_reply, stream_chunks, usage_of
from planner.testing.protocol import (
    KIND_HEADER,
    ProtocolError,
    parse_body,
    request_kind,
    validate_request,
)
from planner.testing.steps import JsonDict, Step

__all__ = ["DEFAULT_MODEL_ID", "RecordedRequest", "ScriptedModelServer"]

Responder = Callable[[str | None, JsonDict], Step]

DEFAULT_MODEL_ID = "scripted-model"

_CHAT_PATH = "/v1/chat/completions"
_MODELS_PATH = "/v1/models"


@dataclass(frozen=True)
class RecordedRequest:
    """One chat-completions call as the server saw it."""

    kind: str | None
    body: JsonDict
    headers: dict[str, str]  # names lower-cased, like HTTP/2 and httpx
    step_index: int | None  # None when the request never reached a step


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
        self._send(error_reply(404, f"Invalid URL ({self.command} {self.path})"))

    def _send(self, reply: Reply) -> None:
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

    def _send_stream(self, reply: Reply) -> None:
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
            for chunk in stream_chunks(reply):
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

    def _props_reply(self) -> Reply:
        """llama-server's GET /props (the part planner reads)."""
        settings = {"n_ctx": self.n_ctx, "temperature": 0.8}
        return Reply(200, {"default_generation_settings": settings, "total_slots": 1})

    def _models_reply(self) -> Reply:
        model = {"id": self._model, "object": "model", "created": 0, "owned_by": "scripted"}
        return Reply(200, {"object": "list", "data": [model]})

    def _handle_chat(self, raw: bytes, headers: dict[str, str]) -> Reply:
        try:
            body = parse_body(raw)
        except ProtocolError as exc:
            return self._reject(headers.get(KIND_HEADER.lower()), {}, headers, exc)
        kind = request_kind(body, headers)
        try:
            validate_request(body)
        except ProtocolError as exc:
            return self._reject(kind, body, headers, exc)
        index, step = self._take_step(kind, body, headers)
        if step is None:
            message = f"scripted model: no step left for request kind={kind}"
            self._note_mismatch(message)
            return error_reply(500, message)
        if step.delay_seconds:
            time.sleep(step.delay_seconds)
        problem = check_step(index, step, kind, body)
        if problem is not None:
            self._note_mismatch(problem)
            return error_reply(400, problem)
        if step.is_error:
            return self._step_error(step)
        return self._completion(step, body)

    def _reject(
        self, kind: str | None, body: JsonDict, headers: dict[str, str], exc: ProtocolError
    ) -> Reply:
        with self._lock:
            self._requests.append(RecordedRequest(kind, body, headers, None))
            self._protocol_errors.append(f"kind={kind}: {exc.message} (param={exc.param})")
        return error_reply(400, exc.message, param=exc.param, code=exc.code)

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

    def _step_error(self, step: Step) -> Reply:
        return error_reply(
            step.status,
            step.error_message,
            error_type=step.error_type,
            code=step.error_code,
            headers=step.headers,
        )

    def _completion(self, step: Step, body: JsonDict) -> Reply:
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
            "usage": usage_of(step, body["messages"], completion_text),
        }
        options = body.get("stream_options")
        return Reply(
            200,
            payload,
            (("x-request-id", f"req_scripted_{serial}"),),
            stream=body.get("stream") is True,
            usage_chunk=isinstance(options, dict) and options.get("include_usage") is True,
            chunk_delay=step.chunk_delay_seconds,
        )
