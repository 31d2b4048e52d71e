"""Errors from the endpoint and the retries they get: which are retried and after how long
(Retry-After honoured, the wait bounded), an endpoint that refuses the tools parameter, and a
prompt too large to send at all."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from email.utils import parsedate_to_datetime
from typing import Any

import openai

from planner.core.errors import ApiError
from planner.model.replies import short
from planner.text.redaction import redact


def check_prompt_size(kind: str, messages: Sequence[dict[str, Any]], limit: int) -> None:
    """Refuse to send a prompt over `limit` bytes (before any token is spent on it)."""
    size = len(json.dumps(list(messages), ensure_ascii=False, default=str).encode())
    if size > limit:
        raise ApiError(
            f"the {kind} prompt is {size} bytes, over llm.max_prompt_bytes ({limit}); "
            "it was not sent",
            service="model",
        )


def retry_delay(error: ApiError, attempt: int, max_wait: float) -> float:
    """Seconds to wait before retry `attempt`: what the endpoint asked for (Retry-After), else
    an exponential backoff with jitter; never more than `max_wait`."""
    if error.retry_after is not None:
        return min(error.retry_after, max_wait)
    backoff = min(2.0 ** (attempt - 1), max_wait)
    return float(backoff * (0.5 + random.random() / 2))


def rejects_tools(error: ApiError) -> bool:
    """An error about the tools parameter: the endpoint has no tool calling (auto falls back).
    llama-server without --jinja answers 500 "tools param requires --jinja flag"; others 400."""
    return error.status in (400, 422, 500, 501) and "tool" in str(error).lower()


def api_error(exc: openai.APIStatusError | openai.APIConnectionError) -> ApiError:
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        hint = " (check OPENAI_API_KEY)" if status in (401, 403) else ""
        return ApiError(
            f"model API answered HTTP {status}: {short(redact(exc.message))}{hint}",
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
