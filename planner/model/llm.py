"""The model adapter: OpenAI Chat Completions, which every OpenAI-compatible server speaks.

Structured documents use response_format json_schema (schema name = document kind) or, for
endpoints without structured outputs, plain JSON mode with extraction from code fences. A reply
that does not validate is re-asked once with the validation error; then ModelBehaviourError.
Retries (429, 5xx, connection errors) are ours, not the SDK's, so Retry-After is honoured, the
wait is bounded and every attempt is visible.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

import openai
import requests
from pydantic import BaseModel

from planner.config import LLMConfig, sizes_in_name
from planner.core.errors import ApiError, ConfigError, ModelBehaviourError
from planner.core.interfaces import ChatReply, DocT, ToolCall, ToolSpec
from planner.model.context_window import Window
from planner.model.file_blocks import holds_code
from planner.model.replies import native_call, parse_document, reasked, short
from planner.model.retries import api_error, check_prompt_size, rejects_tools, retry_delay
from planner.model.sampling import SHORT_REPLIES, sampling
from planner.model.schemas import call_format, response_format
from planner.model.streaming import read_completion
from planner.model.toolcalls import (
    CallProblem,
    calls_in_text,
    checked_calls,
    lenient_calls,
    plain_messages,
    wire_messages,
)
from planner.model.usage import CallListener, call_record, estimated_prompt_tokens
from planner.outcome.deadline import bounded, expired, stop_if_expired
from planner.text.prompts import render
from planner.text.redaction import redact_data, register_secret

log = logging.getLogger(__name__)

MAX_SHRINKS = 3
"""Context-overflow errors one request is shrunk and re-sent after."""


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
        self._window = Window(config)
        """The context window requests are fitted to (planner.model.context_window)."""
        self._attempt = 1
        """The attempt at the issue these calls belong to (vary())."""
        self._warm_calls = 0
        """Warmer calls made so far: each gets a seed of its own (sampling.WARM_SEEDS)."""
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
        answer_format = response_format(self.config, kind, schema)
        for attempt in (1, 2):
            text, cut_off = self._reply(kind, conversation, answer_format)
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
                    answer_format = {"type": "json_object"}
                conversation = reasked(messages, kind, text, str(problem), cut_off)
                self._warmer = True  # the most likely reply was unusable: sample another
        raise AssertionError("unreachable")

    def structured_text(
        self, kind: str, messages: Sequence[dict[str, Any]], schema: type[BaseModel]
    ) -> str:
        """One request with the schema as response format; the raw reply, unparsed and never
        re-asked (replan decisions parse leniently and fall back to "no replan")."""
        return self._content(kind, messages, response_format(self.config, kind, schema))

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
            if not (tools and self.tool_calling == "auto" and rejects_tools(error)):
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
        calls = [native_call(call) for call in message.tool_calls or []]
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
        text = self._content(
            kind, wire_messages(messages, tools), call_format(self.config, kind, tools)
        )
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
                short(text.strip(), 200),
            )
            retry = [
                *messages,
                {"role": "assistant", "content": text},
                {"role": "user", "content": render("reask.md.j2", kind=kind, problem=str(problem))},
            ]
        again = self._content(
            kind, wire_messages(retry, tools), call_format(self.config, kind, tools)
        )
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
        return self._checked(
            self._content(kind, wire, call_format(self.config, kind, tools)), tools
        )

    def _checked(self, text: str, tools: Sequence[ToolSpec]) -> list[ToolCall]:
        calls = checked_calls(text, tools, self._next_call_id())
        self._call_ids += len(calls)
        return calls

    def _next_call_id(self) -> int:
        # ids unique within the pass: the conversation pairs results with calls by id
        return self._call_ids + 1

    # -- requests ----------------------------------------------------------------------------

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
        sent = self._window.fitted(kind, messages, extra)
        while True:
            attempts += 1
            try:
                completion = self._request(kind, sent, extra)
            except (openai.APIStatusError, openai.APIConnectionError) as exc:
                if shrinks < MAX_SHRINKS and self._window.overflowed(kind, exc, sent, extra):
                    smaller = self._window.fitted(kind, messages, extra)
                    if smaller != sent:  # else nothing is left to cut: the error stands
                        shrinks, sent = shrinks + 1, smaller
                        continue
                error = api_error(exc)
                if expired() or not error.retryable or attempts > self.config.max_retries:
                    self._record(kind, None, started, attempts, f"error {error.status}")
                    stop_if_expired()  # cut at the pass's deadline: it stops, it did not fail
                    raise error from None
                self._sleep(
                    bounded(retry_delay(error, attempts, self.config.max_retry_wait_seconds))
                )
                stop_if_expired()  # durable: no retry past the deadline
                continue
            self._record(kind, completion, started, attempts, "ok")
            if not completion.choices:
                raise ModelBehaviourError(f"the model returned no choices for {kind}", kind=kind)
            self._note_reply(kind, completion.choices[0])
            return completion

    def _request(self, kind: str, messages: Sequence[dict[str, Any]], extra: dict[str, Any]) -> Any:
        arguments: dict[str, Any] = {
            "model": self.config.model,
            "messages": redact_data(list(messages), patterns=False),
            "extra_headers": {"X-Planner-Kind": kind},
            "timeout": bounded(self.config.timeout_seconds),  # durable: the deadline
            **sampling(self.config, kind, self._warmer, self._attempt, self._warm_calls),
            **extra,
        }
        self._warm_calls += self._warmer
        self._stopped = False
        if not self.config.stop_repeating:
            return self._client.chat.completions.create(**arguments)
        stream = self._client.chat.completions.create(
            **arguments, stream=True, stream_options={"include_usage": True}
        )
        deadline = time.monotonic() + arguments["timeout"]
        streamed = read_completion(
            kind, stream, self.config.model, deadline, estimated_prompt_tokens(arguments)
        )
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

    def _record(
        self, kind: str, completion: Any, started: float, attempts: int, outcome: str
    ) -> None:
        if self.on_call is not None:
            record = call_record(kind, self.config.model, completion, started, attempts, outcome)
            self.on_call(record)


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
