"""What the scripted server answers: a completion in the API's shape (whole, or streamed as
server-sent events), an error in OpenAI's error shape, the usage it reports, and whether a
request fits the step it consumed."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from planner.testing.steps import JsonDict, Step


@dataclass(frozen=True)
class Reply:
    """One answer of the server: its HTTP status, JSON payload and headers."""

    status: int
    payload: JsonDict
    headers: tuple[tuple[str, str], ...] = ()
    stream: bool = False
    """Sent as server-sent events, as the API streams (`stream: true`)."""
    usage_chunk: bool = False
    """The stream ends with the usage chunk (`stream_options.include_usage`)."""
    chunk_delay: float = 0.0
    """Seconds before each streamed chunk (Step.chunk_delay_seconds)."""


def error_reply(
    status: int,
    message: str,
    *,
    error_type: str | None = None,
    param: str | None = None,
    code: str | None = None,
    headers: tuple[tuple[str, str], ...] = (),
) -> Reply:
    default_type, default_code = _default_error_type(status)
    error = {
        "message": message,
        "type": error_type or default_type,
        "param": param,
        "code": code if code is not None else default_code,
    }
    return Reply(status, {"error": error}, headers)


def _default_error_type(status: int) -> tuple[str, str | None]:
    # Mirrors what api.openai.com returns, so client-side error mapping is realistic.
    if status == 429:
        return "requests", "rate_limit_exceeded"
    if status >= 500:
        return "server_error", None
    return "invalid_request_error", None


def content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def usage_of(step: Step, messages: list[JsonDict], completion_text: str) -> dict[str, int]:
    # ~4 characters per token is the usual rule of thumb; it only needs to be
    # deterministic and proportional so budget accounting can be tested.
    prompt = math.ceil(sum(len(content_text(m.get("content"))) for m in messages) / 4)
    completion = math.ceil(len(completion_text) / 4)
    usage = {"prompt_tokens": prompt, "completion_tokens": completion}
    usage.update(step.usage or {})
    if step.usage is None or "total_tokens" not in step.usage:
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return usage


STREAM_PIECE = 16
"""Characters of text per streamed chunk (a real endpoint sends one token each)."""


def stream_chunks(reply: Reply) -> Iterator[JsonDict]:
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


def check_step(index: int | None, step: Step, kind: str | None, body: JsonDict) -> str | None:
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
