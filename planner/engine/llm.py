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
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

import openai
from pydantic import BaseModel, ValidationError

from planner.engine.config import LLMConfig
from planner.engine.deadline import bounded, stop_if_expired
from planner.engine.errors import ApiError, ConfigError, ModelBehaviourError
from planner.engine.interfaces import ChatReply, DocT, ToolCall, ToolSpec
from planner.engine.prompts import render

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


class OpenAIModel:
    """A Model backed by any OpenAI-compatible Chat Completions endpoint."""

    def __init__(
        self,
        config: LLMConfig,
        *,
        on_call: CallListener | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if config.api_key is None:
            raise ConfigError(
                "no model API key: set the environment variable OPENAI_API_KEY "
                "(any non-empty value for local servers such as Ollama)"
            )
        self.name = config.model
        self.config = config
        self.on_call = on_call
        self._sleep = sleep
        self._client = openai.OpenAI(
            api_key=config.api_key.get_secret_value(),
            base_url=config.base_url,
            timeout=config.timeout_seconds,
            max_retries=0,
        )

    # -- the Model protocol ------------------------------------------------------------------

    def structured(
        self,
        kind: str,
        messages: Sequence[dict[str, Any]],
        schema: type[DocT],
        context: Any = None,
    ) -> DocT:
        conversation = [*messages]
        for attempt in (1, 2):
            text = self._content(kind, conversation, self._response_format(kind, schema))
            try:
                return parse_document(text, schema, context)
            except ModelBehaviourError as problem:
                if attempt == 2:
                    raise ModelBehaviourError(
                        f"the model's {kind} reply was unusable twice: {problem}",
                        kind=kind,
                        raw=text,
                    ) from None
                log.warning("model %s reply unusable, asking again: %s", kind, problem)
                conversation += [
                    {"role": "assistant", "content": text},
                    {
                        "role": "user",
                        "content": render("reask.md.j2", kind=kind, problem=str(problem)),
                    },
                ]
        raise AssertionError("unreachable")

    def structured_text(
        self, kind: str, messages: Sequence[dict[str, Any]], schema: type[BaseModel]
    ) -> str:
        """One request with the schema as response format; the raw reply, unparsed and never
        re-asked (replan decisions parse leniently and fall back to "no replan")."""
        return self._content(kind, messages, self._response_format(kind, schema))

    def chat(
        self, kind: str, messages: Sequence[dict[str, Any]], tools: Sequence[ToolSpec]
    ) -> ChatReply:
        extra: dict[str, Any] = {"tools": [tool.to_openai() for tool in tools]} if tools else {}
        completion = self._create(kind, messages, extra)
        message = completion.choices[0].message
        calls = [_tool_call(call) for call in message.tool_calls or []]
        return ChatReply(content=message.content, tool_calls=calls)

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
        completion = self._create(kind, messages, {"response_format": response_format})
        message = completion.choices[0].message
        if getattr(message, "refusal", None):
            raise ModelBehaviourError(f"the model refused the {kind} request: {message.refusal}")
        return message.content or ""

    def _create(self, kind: str, messages: Sequence[dict[str, Any]], extra: dict[str, Any]) -> Any:
        started = time.monotonic()
        attempts = 0
        while True:
            attempts += 1
            try:
                completion = self._client.chat.completions.create(
                    model=self.config.model,
                    messages=list(messages),  # type: ignore[arg-type]
                    extra_headers={"X-Planner-Kind": kind},
                    timeout=bounded(self.config.timeout_seconds),  # durable: the deadline
                    **self._sampling(),
                    **extra,
                )
            except (openai.APIStatusError, openai.APIConnectionError) as exc:
                error = _api_error(exc)
                if not error.retryable or attempts > self.config.max_retries:
                    self._record(kind, None, started, attempts, f"error {error.status}")
                    raise error from None
                self._sleep(bounded(self._delay(error, attempts)))
                stop_if_expired()  # durable: no retry past the deadline
                continue
            self._record(kind, completion, started, attempts, "ok")
            if not completion.choices:
                raise ModelBehaviourError(f"the model returned no choices for {kind}", kind=kind)
            return completion

    def _sampling(self) -> dict[str, Any]:
        temperature = self.config.temperature
        return {} if temperature is None else {"temperature": temperature}

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


@functools.cache
def _schema_text(schema: type[BaseModel]) -> str:
    # Generating a schema costs milliseconds and the document classes never change.
    return json.dumps(schema.model_json_schema())


def json_schema_of(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a document class (a fresh copy: callers may not mutate the cache)."""
    loaded: dict[str, Any] = json.loads(_schema_text(schema))
    return loaded


def _tool_call(call: Any) -> ToolCall:
    raw = call.function.arguments or ""
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        arguments = None
    if not isinstance(arguments, dict):
        return ToolCall(id=call.id, name=call.function.name, arguments={}, raw_arguments=raw or " ")
    return ToolCall(id=call.id, name=call.function.name, arguments=arguments)


def _api_error(exc: openai.APIStatusError | openai.APIConnectionError) -> ApiError:
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        hint = " (check OPENAI_API_KEY)" if status in (401, 403) else ""
        return ApiError(
            f"model API answered HTTP {status}: {_short(exc.message)}{hint}",
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
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    raise ModelBehaviourError(f"the reply is not JSON: {_short(text.strip() or '(empty)', 200)}")


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
