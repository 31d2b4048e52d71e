"""The model adapter: OpenAI Chat Completions, which every OpenAI-compatible server speaks.

Structured documents use response_format json_schema (schema name = document kind) or, for
endpoints without structured outputs, plain JSON mode with extraction from code fences. A reply
that does not validate is re-asked once with the validation error; then ModelBehaviourError.
Retries (429, 5xx, connection errors) are ours, not the SDK's, so Retry-After is honoured, the
wait is bounded and every attempt is visible.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

import openai
import requests
from pydantic import BaseModel, ValidationError

from planner.config import LLMConfig, sizes_in_name
from planner.core.errors import ApiError, ConfigError, ModelBehaviourError
from planner.core.interfaces import ChatReply, DocT, ToolCall, ToolSpec
from planner.model.context_window import (
    discover_window,
    fit,
    overflow_limit,
    reply_room,
    request_tokens,
)
from planner.model.file_blocks import holds_code
from planner.model.streaming import read_stream
from planner.model.toolcalls import (
    CallProblem,
    call_schema,
    calls_in_text,
    checked_calls,
    lenient_calls,
    plain_messages,
    wire_messages,
)
from planner.outcome.deadline import bounded, expired, stop_if_expired
from planner.text.prompts import render
from planner.text.redaction import redact, redact_data, register_secret

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CallRecord:
    """One model request as recorded in history."""

    kind: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    attempts: int
    outcome: str

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


CallListener = Callable[[CallRecord], None]

REPEAT_TEMPERATURE = 0.7
"""The temperature of the call after a reply that repeats an earlier one word for word, was cut off
at the output limit or could not be used, when llm.temperature is lower: re-asked at temperature 0,
the 1.5B wrote the same unchanged file three times in a row, and the same plan looping on one
subtask until the output limit twice (Whisper's decoder falls back to a higher temperature the
same way)."""
MAX_SHRINKS = 3
"""Context-overflow errors one request is shrunk and re-sent after."""
ATTEMPT_TEMPERATURE = 0.5
"""The lowest temperature of the calls of a second or later attempt at the issue
(verification.attempts): at temperature 0 the model would make the failed attempt again."""
SHORT_REPLIES = {"issue_test": 768}
"""Output limits of call kinds whose reply is short by nature: the issue's test is a few
assertions (about 100 tokens from the 1.5B), and a longer reply was a loop of made-up
assertions until llm.max_output_tokens (2 minutes on two cores). What was written before the
cut is used; nothing re-asks it, so the cut does not warm the next call."""


class OpenAIModel:
    """A Model backed by any OpenAI-compatible Chat Completions endpoint."""

    def __init__(
        self,
        config: LLMConfig,
        *,
        on_call: CallListener | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        key = require_api_key(config)
        if key != KEYLESS:
            register_secret(key)  # endpoints echo it in errors
        self.name = config.model
        self.config = config
        self.on_call = on_call
        self._sleep = sleep
        self.tool_calling = config.tool_calling
        """The tool-call path of this pass: auto becomes json once the fallback is detected."""
        self._native_seen = False
        self._call_ids = 0
        self._replies: set[int] = set()
        """Hashes of this pass's replies (content and calls)."""
        self._stopped = False
        """The last reply was stopped for repeating itself (llm.stop_repeating)."""
        self._warmer = False
        """The last reply repeated an earlier one word for word, or was unusable: the next
        call samples at REPEAT_TEMPERATURE at least."""
        self._window: int | None = config.context_tokens
        """The context window requests are fitted to (planner.model.context_window)."""
        self._window_known = config.context_tokens is not None
        self._attempt = 1
        """The attempt at the issue these calls belong to (vary())."""
        self._client = openai.OpenAI(
            api_key=key,
            base_url=config.base_url,
            timeout=config.timeout_seconds,
            max_retries=0,
        )

    def vary(self, attempt: int) -> None:
        """Attempt `attempt` at the issue starts: from now on the calls carry it as their
        sampling seed and sample at ATTEMPT_TEMPERATURE at least, so the attempt does not
        repeat the one before."""
        self._attempt = attempt

    # -- the Model protocol ------------------------------------------------------------------

    def structured(
        self,
        kind: str,
        messages: Sequence[dict[str, Any]],
        schema: type[DocT],
        context: Any = None,
    ) -> DocT:
        conversation = [*messages]
        response_format = self._response_format(kind, schema)
        for attempt in (1, 2):
            text, cut_off = self._reply(kind, conversation, response_format)
            try:
                return parse_document(text, schema, context)
            except ModelBehaviourError as unusable:
                problem = self._cut_off(unusable) if cut_off else unusable
                if attempt == 2:
                    raise ModelBehaviourError(
                        f"the model's {kind} reply was unusable twice: {problem}",
                        kind=kind,
                        raw=text,
                        cut_off=cut_off,
                    ) from None
                log.warning("model %s reply unusable, asking again: %s", kind, problem)
                # The schema's grammar can force a reply shut: the 1.5B wrote a criterion
                # holding `parse_duration("1h30m")`, the grammar ended the string at its quote
                # and the document there, twice alike. The second asks for JSON without it,
                # unless the first was cut off (a loop): without the grammar, the 1.5B's
                # second plan had other keys than the schema's.
                if not cut_off:
                    response_format = {"type": "json_object"}
                conversation = _reasked(messages, kind, text, str(problem), cut_off)
                self._warmer = True  # the most likely reply was unusable: sample another
        raise AssertionError("unreachable")

    def structured_text(
        self, kind: str, messages: Sequence[dict[str, Any]], schema: type[BaseModel]
    ) -> str:
        """One request with the schema as response format; the raw reply, unparsed and never
        re-asked (replan decisions parse leniently and fall back to "no replan")."""
        return self._content(kind, messages, self._response_format(kind, schema))

    def chat(
        self,
        kind: str,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[ToolSpec],
        *,
        tools_on_wire: bool = True,
        retry: bool = False,
    ) -> ChatReply:
        self._warmer = self._warmer or retry
        if not tools_on_wire:
            reply = self._native_chat(kind, plain_messages(messages), [])
            if not tools or holds_code(reply.content):
                return reply  # files written as code blocks (planner.model.file_blocks)
            return self._written_calls(reply, tools)
        if tools and self.tool_calling == "json":
            return self._json_chat(kind, messages, tools)
        try:
            reply = self._native_chat(kind, messages, tools)
        except ApiError as error:
            if not (tools and self.tool_calling == "auto" and _rejects_tools(error)):
                raise
            self._switch_to_json(f"the endpoint refused the tools parameter ({error})")
            return self._json_chat(kind, messages, tools)
        if not tools or reply.tool_calls:
            return reply
        if self.tool_calling == "native":
            return self._written_calls(reply, tools)
        return self._recover(kind, messages, tools, reply)

    def _written_calls(self, reply: ChatReply, tools: Sequence[ToolSpec]) -> ChatReply:
        """native: a call written as text is still that call (the endpoint's chat template lost
        it, or the model never learnt the format); it runs like a native one, and a call naming
        no offered tool or with bad arguments fails as an action the model can correct."""
        if calls_in_text(reply.content) is None:
            return reply
        try:
            calls = self._checked(reply.content or "", tools)
        except CallProblem:
            calls = lenient_calls(reply.content, self._next_call_id())
            self._call_ids += len(calls)
        return ChatReply(content=None, tool_calls=calls)

    # -- tool calls without native support (llm.tool_calling json | auto) --------------------

    def _native_chat(
        self, kind: str, messages: Sequence[dict[str, Any]], tools: Sequence[ToolSpec]
    ) -> ChatReply:
        extra: dict[str, Any] = {"tools": [tool.to_openai() for tool in tools]} if tools else {}
        completion = self._create(kind, messages, extra)
        message = completion.choices[0].message
        calls = [_tool_call(call) for call in message.tool_calls or []]
        if calls:
            self._native_seen = True
        return ChatReply(content=message.content, tool_calls=calls)

    def _recover(
        self,
        kind: str,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[ToolSpec],
        reply: ChatReply,
    ) -> ChatReply:
        """auto: a reply without tool calls. A call written as text means the endpoint or
        model has no native tool calling: switch to json for the pass and use that call. Plain
        prose from a model never seen calling natively is asked once more in json; a valid call
        there proves the point and switches too."""
        if calls_in_text(reply.content) is not None:
            self._switch_to_json("the model wrote its tool call as text")
            return self._json_turns(kind, messages, tools, reply.content or "")
        if self._native_seen or holds_code(reply.content):
            return reply  # code blocks are files written whole (planner.model.file_blocks)
        try:
            calls = self._json_attempt(kind, messages, tools)
        except CallProblem:
            return reply
        self._switch_to_json("the model answered in prose but calls tools as JSON")
        return ChatReply(content=None, tool_calls=calls)

    def _switch_to_json(self, why: str) -> None:
        if self.tool_calling != "json":
            log.warning("llm.tool_calling auto: using json tool calls for this pass: %s", why)
            self.tool_calling = "json"

    def _json_chat(
        self, kind: str, messages: Sequence[dict[str, Any]], tools: Sequence[ToolSpec]
    ) -> ChatReply:
        text = self._content(kind, wire_messages(messages, tools), self._call_format(kind, tools))
        return self._json_turns(kind, messages, tools, text)

    def _json_turns(
        self,
        kind: str,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[ToolSpec],
        text: str,
    ) -> ChatReply:
        """Validate a json tool-call reply; re-ask once with the problem. A second unusable
        reply is passed on as written (an unknown tool or bad arguments then fail as an action,
        exactly as a native call would; prose is prose)."""
        try:
            return ChatReply(content=None, tool_calls=self._checked(text, tools))
        except CallProblem as problem:
            log.warning(
                "model %s tool call unusable, asking again: %s (reply: %s)",
                kind,
                problem,
                _short(text.strip(), 200),
            )
            retry = [
                *messages,
                {"role": "assistant", "content": text},
                {"role": "user", "content": render("reask.md.j2", kind=kind, problem=str(problem))},
            ]
        again = self._content(kind, wire_messages(retry, tools), self._call_format(kind, tools))
        try:
            return ChatReply(content=None, tool_calls=self._checked(again, tools))
        except CallProblem:
            calls = lenient_calls(again, self._next_call_id())
            self._call_ids += len(calls)
            return ChatReply(content=None if calls else again, tool_calls=calls)

    def _json_attempt(
        self, kind: str, messages: Sequence[dict[str, Any]], tools: Sequence[ToolSpec]
    ) -> list[ToolCall]:
        wire = wire_messages(messages, tools)
        return self._checked(self._content(kind, wire, self._call_format(kind, tools)), tools)

    def _checked(self, text: str, tools: Sequence[ToolSpec]) -> list[ToolCall]:
        calls = checked_calls(text, tools, self._next_call_id())
        self._call_ids += len(calls)
        return calls

    def _next_call_id(self) -> int:
        # ids unique within the pass: the conversation pairs results with calls by id
        return self._call_ids + 1

    def _call_format(self, kind: str, tools: Sequence[ToolSpec]) -> dict[str, Any]:
        if self.config.structured_output == "json_mode":
            return {"type": "json_object"}
        schema = {"name": kind, "schema": call_schema(tools), "strict": False}
        return {"type": "json_schema", "json_schema": schema}

    # -- requests ----------------------------------------------------------------------------

    def _response_format(self, kind: str, schema: type[BaseModel]) -> dict[str, Any]:
        if self.config.structured_output == "json_mode":
            return {"type": "json_object"}
        return {
            "type": "json_schema",
            "json_schema": {"name": kind, "schema": json_schema_of(schema), "strict": False},
        }

    def _content(
        self, kind: str, messages: Sequence[dict[str, Any]], response_format: dict[str, Any]
    ) -> str:
        return self._reply(kind, messages, response_format)[0]

    def _reply(
        self, kind: str, messages: Sequence[dict[str, Any]], response_format: dict[str, Any]
    ) -> tuple[str, bool]:
        """The reply's text, and whether the output limit cut it off (finish_reason length)."""
        completion = self._create(kind, messages, {"response_format": response_format})
        choice = completion.choices[0]
        if getattr(choice.message, "refusal", None):
            refusal = choice.message.refusal
            raise ModelBehaviourError(f"the model refused the {kind} request: {refusal}")
        return choice.message.content or "", choice.finish_reason == "length"

    def _cut_off(self, problem: ModelBehaviourError) -> ModelBehaviourError:
        """A reply cut off mid-document is not a malformed one: say so (to the model, which
        must answer shorter, and in the log, where llm.max_output_tokens is the fix)."""
        if self._stopped:
            return ModelBehaviourError(
                "the reply was stopped before the JSON ended: it kept repeating itself; "
                f"answer with a shorter document, each item once ({problem})"
            )
        limit = self.config.max_output_tokens
        where = f"llm.max_output_tokens = {limit}" if limit else "the endpoint's output limit"
        return ModelBehaviourError(
            f"the reply was cut off at the output limit ({where}) before the JSON ended; "
            f"answer with a shorter document ({problem})"
        )

    def _create(self, kind: str, messages: Sequence[dict[str, Any]], extra: dict[str, Any]) -> Any:
        check_prompt_size(kind, messages, self.config.max_prompt_bytes)
        started = time.monotonic()
        attempts = shrinks = 0
        sent = self._fitted(kind, messages, extra)
        while True:
            attempts += 1
            try:
                completion = self._request(kind, sent, extra)
            except (openai.APIStatusError, openai.APIConnectionError) as exc:
                if shrinks < MAX_SHRINKS and self._overflowed(kind, exc, sent, extra):
                    smaller = self._fitted(kind, messages, extra)
                    if smaller != sent:  # else nothing is left to cut: the error stands
                        shrinks, sent = shrinks + 1, smaller
                        continue
                error = _api_error(exc)
                if expired() or not error.retryable or attempts > self.config.max_retries:
                    self._record(kind, None, started, attempts, f"error {error.status}")
                    stop_if_expired()  # cut at the pass's deadline: it stops, it did not fail
                    raise error from None
                self._sleep(bounded(self._delay(error, attempts)))
                stop_if_expired()  # durable: no retry past the deadline
                continue
            self._record(kind, completion, started, attempts, "ok")
            if not completion.choices:
                raise ModelBehaviourError(f"the model returned no choices for {kind}", kind=kind)
            self._note_reply(kind, completion.choices[0])
            return completion

    def _context_window(self) -> int | None:
        if not self._window_known:
            self._window_known = True
            key = self.config.api_key.get_secret_value() if self.config.api_key else ""
            self._window = discover_window(self.config.base_url, self.config.model, key)
            log.info("context window of %s: %s tokens", self.config.model, self._window)
        return self._window

    def _fitted(
        self, kind: str, messages: Sequence[dict[str, Any]], extra: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """The request's messages, shrunk to fit the context window with room for the reply."""
        window = self._context_window()
        if window is None:
            return list(messages)
        fitted = fit(messages, extra, window, reply_room(window, self.config.max_output_tokens))
        if fitted.shrunk:
            log.warning(
                "model %s request shrunk from about %d to %d tokens to fit the %d-token "
                "context window",
                kind,
                fitted.tokens_before,
                fitted.tokens_after,
                window,
            )
        return fitted.messages

    def _overflowed(
        self, kind: str, exc: Exception, sent: list[dict[str, Any]], extra: dict[str, Any]
    ) -> bool:
        """A context-overflow error: the window becomes what the error names, and at most
        three quarters of what was sent, so the next fit is smaller."""
        if not isinstance(exc, openai.APIStatusError):
            return False
        limit = overflow_limit(str(exc.message), exc.body)
        if limit is None:
            return False
        window = self._context_window()
        reply = reply_room(window or limit or 8192, self.config.max_output_tokens)
        smaller = int(request_tokens(sent, extra) * 0.75) + reply
        self._window = min(value for value in (limit, window, smaller) if value)
        log.warning(
            "model %s request overflowed the context window (%s): fitting it to %d tokens",
            kind,
            _short(redact(str(exc.message)), 160),
            self._window,
        )
        return True

    def _request(self, kind: str, messages: Sequence[dict[str, Any]], extra: dict[str, Any]) -> Any:
        arguments: dict[str, Any] = {
            "model": self.config.model,
            "messages": redact_data(list(messages), patterns=False),
            "extra_headers": {"X-Planner-Kind": kind},
            "timeout": bounded(self.config.timeout_seconds),  # durable: the deadline
            **self._sampling(kind),
            **extra,
        }
        self._stopped = False
        if not self.config.stop_repeating:
            return self._client.chat.completions.create(**arguments)
        stream = self._client.chat.completions.create(
            **arguments, stream=True, stream_options={"include_usage": True}
        )
        deadline = time.monotonic() + arguments["timeout"]
        return self._read(kind, stream, deadline, estimated_prompt_tokens(arguments))

    def _read(self, kind: str, stream: Any, deadline: float, prompt_estimate: int) -> Any:
        """The streamed reply as one completion (planner.model.streaming); a stream that
        breaks off or outlasts the timeout is a connection error (retried like one)."""
        request = stream.response.request
        try:
            streamed = read_stream(
                stream,
                stream.close,
                model=self.config.model,
                deadline=deadline,
                prompt_estimate=prompt_estimate,
            )
        except TimeoutError as exc:
            raise openai.APITimeoutError(request=request) from exc
        except Exception as exc:
            stream.close()
            # An error event mid-stream, or (openai 1.x) a raw httpx error: a broken connection.
            broken = isinstance(exc, openai.APIError) or type(exc).__module__.startswith("httpx")
            if not broken or isinstance(exc, openai.APIStatusError | openai.APIConnectionError):
                raise
            raise openai.APIConnectionError(
                message=f"the stream broke off: {exc}", request=request
            ) from exc
        if streamed.stopped:
            log.warning("model %s reply stopped: it was repeating itself", kind)
        self._stopped = streamed.stopped
        return streamed.completion

    def _note_reply(self, kind: str, choice: Any) -> None:
        """A reply cut off at the output limit (mostly a loop) or repeating an earlier one makes
        the next call warmer."""
        message = choice.message
        calls = [(c.function.name, c.function.arguments) for c in message.tool_calls or []]
        fingerprint = hash(json.dumps([message.content or "", calls]))
        cut_off = choice.finish_reason == "length" and kind not in SHORT_REPLIES
        self._warmer = fingerprint in self._replies or cut_off
        self._replies.add(fingerprint)

    def _sampling(self, kind: str) -> dict[str, Any]:
        settings: dict[str, Any] = {}
        temperature = self.config.temperature
        if temperature is not None and self._warmer:
            temperature = max(temperature, REPEAT_TEMPERATURE)
        if temperature is not None and self._attempt > 1:
            temperature = max(temperature, ATTEMPT_TEMPERATURE)
        if self._attempt > 1:
            settings["seed"] = self._attempt
        if temperature is not None:
            settings["temperature"] = temperature
        limits = [self.config.max_output_tokens, SHORT_REPLIES.get(kind)]
        if any(limit is not None for limit in limits):
            settings["max_tokens"] = min(limit for limit in limits if limit is not None)
        return settings

    def _delay(self, error: ApiError, attempt: int) -> float:
        if error.retry_after is not None:
            return min(error.retry_after, self.config.max_retry_wait_seconds)
        backoff = min(2.0 ** (attempt - 1), self.config.max_retry_wait_seconds)
        return float(backoff * (0.5 + random.random() / 2))

    def _record(
        self, kind: str, completion: Any, started: float, attempts: int, outcome: str
    ) -> None:
        usage = getattr(completion, "usage", None)
        record = CallRecord(
            kind=kind,
            model=self.config.model,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            latency_ms=round((time.monotonic() - started) * 1000, 2),
            attempts=attempts,
            outcome=outcome,
        )
        if self.on_call is not None:
            self.on_call(record)


def estimated_prompt_tokens(arguments: dict[str, Any]) -> int:
    """A request's prompt at 4 characters per token (as the repository map estimates): the
    count of a reply stopped before the endpoint reported its usage, so that the token budget
    and the figures do not take its prompt for free."""
    text = [_message_text(message.get("content")) for message in arguments["messages"]]
    wire = [json.dumps(arguments[key]) for key in ("tools", "response_format") if key in arguments]
    return math.ceil(sum(map(len, text + wire)) / 4)


def _message_text(content: object) -> str:
    if isinstance(content, list):  # content parts: only text is sent to a chat model here
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


@functools.cache
def _schema_text(schema: type[BaseModel]) -> str:
    # Generating a schema costs milliseconds and the document classes never change.
    return json.dumps(compact_schema(schema.model_json_schema()))


NAME_MAPS = frozenset({"properties", "$defs", "patternProperties"})
SCHEMA_NOISE = frozenset({"title", "default", "description", "examples"})
"""Schema keywords that constrain nothing: pydantic's generated titles and the defaults cost
about half of a schema's tokens, and every request pays them. What fields mean is said once in
the prompts."""


def _reasked(
    messages: Sequence[dict[str, Any]], kind: str, text: str, problem: str, cut_off: bool
) -> list[dict[str, Any]]:
    """The conversation that asks again. A reply cut off at the output limit is left out: it is
    mostly a loop (the 1.5B repeated one subtask until the limit), which a model shown it
    continues; the request is asked again with the problem."""
    reask = {"role": "user", "content": render("reask.md.j2", kind=kind, problem=problem)}
    *earlier, request = messages
    if not cut_off or request.get("role") != "user" or not isinstance(request["content"], str):
        return [*messages, {"role": "assistant", "content": text}, reask]
    return [*earlier, {"role": "user", "content": f"{request['content']}\n\n{reask['content']}"}]


def compact_schema(node: Any) -> Any:
    """`node` without SCHEMA_NOISE, an optional field's `anyOf [X, null]` written as X (an
    absent field and null mean the same to the documents)."""
    if isinstance(node, list):
        return [compact_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    options = node.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        (kept,) = [option for option in options if option != {"type": "null"}]
        rest = {key: value for key, value in node.items() if key != "anyOf"}
        return compact_schema({**rest, **kept})
    compact: dict[str, Any] = {}
    for key, value in node.items():
        if key in NAME_MAPS and isinstance(value, dict):
            # field and definition names are data here, even one called "title" or "default"
            compact[key] = {name: compact_schema(child) for name, child in value.items()}
        elif key not in SCHEMA_NOISE:
            compact[key] = compact_schema(value)
    return compact


def json_schema_of(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a document class (a fresh copy: callers may not mutate the cache)."""
    loaded: dict[str, Any] = json.loads(_schema_text(schema))
    return loaded


def _tool_call(call: Any) -> ToolCall:
    raw = call.function.arguments or ""
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except UNPARSABLE:
        arguments = None
    if not isinstance(arguments, dict):
        return ToolCall(id=call.id, name=call.function.name, arguments={}, raw_arguments=raw or " ")
    return ToolCall(id=call.id, name=call.function.name, arguments=arguments)


SERVED_MODEL_TIMEOUT_SECONDS = 10.0


def served_model(config: LLMConfig) -> dict[str, float | None] | None:
    """The models the endpoint lists (GET /models), with the size in billions of parameters
    of the one that matters (the only one listed, else `config.model`) where the endpoint
    gives it: llama.cpp's `meta.n_params`, else Ollama's `details.parameter_size` (GET
    /api/tags, which also knows `llama3.2` as its `llama3.2:latest`). None when it does not
    answer (the first request then says what is wrong)."""
    key = config.api_key.get_secret_value() if config.api_key else "none"
    timeout = min(SERVED_MODEL_TIMEOUT_SECONDS, config.timeout_seconds)
    client = openai.OpenAI(api_key=key, base_url=config.base_url, timeout=timeout, max_retries=0)
    try:
        listed = {model.id: _n_params(model.model_extra) for model in client.models.list()}
    except openai.OpenAIError as exc:
        log.warning("%s did not list its models: %s", config.base_url, exc)
        return None
    wanted = next(iter(listed)) if len(listed) == 1 else config.model
    if listed.get(wanted) is None and (wanted in listed or f"{wanted}:latest" in listed):
        size = _tagged(_ollama_sizes(str(client.base_url), timeout), wanted)
        if size is not None:
            listed[wanted] = size
    return listed


def _n_params(extra: dict[str, Any] | None) -> float | None:
    meta = (extra or {}).get("meta")
    count = meta.get("n_params") if isinstance(meta, dict) else None
    return count / 1e9 if isinstance(count, int | float) and count > 0 else None


def _ollama_sizes(base_url: str, timeout: float) -> dict[str, float]:
    """Ollama's sizes by model name ({} from any other endpoint)."""
    root = re.sub(r"/v1/?$", "", base_url.rstrip("/"))
    try:
        reply = requests.get(f"{root}/api/tags", timeout=timeout, allow_redirects=False)
        models = reply.json().get("models") if reply.status_code == 200 else None
    except (requests.RequestException, ValueError, AttributeError):
        return {}
    sizes = {}
    for model in models if isinstance(models, list) else []:
        found = sizes_in_name(str(_dig(model, "details", "parameter_size")))
        if found and isinstance(model.get("name"), str):
            sizes[model["name"]] = max(found)
    return sizes


def _dig(value: Any, *keys: str) -> Any:
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _tagged(sizes: dict[str, float], name: str) -> float | None:
    """Ollama names a model without a tag as its `latest`."""
    return sizes.get(name) or (sizes.get(f"{name}:latest") if ":" not in name else None)


KEYLESS = "no-key"
"""Sent as the key to an endpoint of one's own when none is set: the OpenAI client needs one,
and a server that checks no key (llama.cpp, Ollama, vLLM without --api-key) ignores it."""


def require_api_key(config: LLMConfig) -> str:
    """The key; KEYLESS for an endpoint of one's own (llm.base_url set) without one; else
    ConfigError (exit 2) when none is set: callers check before anything is written."""
    if config.api_key is not None:
        return config.api_key.get_secret_value()
    if config.base_url:
        return KEYLESS
    raise ConfigError(
        "no model API key: set the environment variable OPENAI_API_KEY (the action's input "
        "openai_api_key), or set OPENAI_BASE_URL (openai_base_url) to an endpoint that needs none"
    )


def check_prompt_size(kind: str, messages: Sequence[dict[str, Any]], limit: int) -> None:
    """Refuse to send a prompt over `limit` bytes (before any token is spent on it)."""
    size = len(json.dumps(list(messages), ensure_ascii=False, default=str).encode())
    if size > limit:
        raise ApiError(
            f"the {kind} prompt is {size} bytes, over llm.max_prompt_bytes ({limit}); "
            "it was not sent",
            service="model",
        )


def _rejects_tools(error: ApiError) -> bool:
    """An error about the tools parameter: the endpoint has no tool calling (auto falls back).
    llama-server without --jinja answers 500 "tools param requires --jinja flag"; others 400."""
    return error.status in (400, 422, 500, 501) and "tool" in str(error).lower()


def _api_error(exc: openai.APIStatusError | openai.APIConnectionError) -> ApiError:
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        hint = " (check OPENAI_API_KEY)" if status in (401, 403) else ""
        return ApiError(
            f"model API answered HTTP {status}: {_short(redact(exc.message))}{hint}",
            status=status,
            retry_after=_retry_after(exc.response.headers),
            service="model",
        )
    return ApiError(f"model API unreachable: {type(exc).__name__}", service="model")


def _retry_after(headers: Any) -> float | None:
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


FENCE = re.compile(r"```(?:json|JSON)?\s*\n(.*?)\n\s*```", re.DOTALL)


def extract_json(text: str) -> Any:
    """The JSON value in a reply: the whole text, a fenced block, or the outermost object."""
    candidates = [text.strip(), *FENCE.findall(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    problem = "the reply is not JSON"
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
        except (ValueError, RecursionError) as exc:  # a 5,000-digit number, nesting too deep
            problem = f"the reply's JSON cannot be used ({_unusable(exc)})"
    raise ModelBehaviourError(f"{problem}: {_short(text.strip() or '(empty)', 200)}")


UNPARSABLE = (ValueError, RecursionError)
"""What json.loads raises on hostile input: JSONDecodeError is a ValueError, an integer over
Python's digit limit a plain ValueError, deep nesting a RecursionError."""


def _unusable(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return "a number with too many digits" if "digits" in str(exc) else str(exc)[:100]


def parse_document(text: str, schema: type[DocT], context: Any = None) -> DocT:
    value = extract_json(text)
    try:
        return schema.model_validate(value, context=context)
    except ValidationError as exc:
        raise ModelBehaviourError(_validation_summary(exc)) from None


def _validation_summary(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:8]:
        where = ".".join(str(p) for p in error["loc"]) or "(document)"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)
