"""What each model request cost: the record every call leaves (tokens, latency, attempts,
outcome) for the history, the budget and the cost footer."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


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


def call_record(
    kind: str, model: str, completion: Any, started: float, attempts: int, outcome: str
) -> CallRecord:
    """The record of one request that started at `started` (time.monotonic) and ended with
    `completion` (None: no reply), from the usage the endpoint reported."""
    usage = getattr(completion, "usage", None)
    return CallRecord(
        kind=kind,
        model=model,
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        latency_ms=round((time.monotonic() - started) * 1000, 2),
        attempts=attempts,
        outcome=outcome,
    )


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
