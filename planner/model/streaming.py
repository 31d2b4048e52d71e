"""A reply read as a stream, stopped once it repeats itself (llm.stop_repeating).

At temperature 0 a small model sometimes falls into a loop: the same sentence, the same
`run_tests` snippet, subtask 31, 32, 33 "Read the `durations` section" until the output
limit. On two CPU cores each such reply cost the 1.5B about two minutes of a five-minute task.
Read as a stream, the reply is measured as it grows and the connection is closed once its
tail is a loop (the server stops generating then); what came before is the reply, marked cut
off as at the output limit, so the next call samples warmer.

A loop is told from text that merely repeats a pattern (JSON keys, code, tables) by two
measures of the last REPEAT_WINDOW characters together: they compress to under
REPEAT_COMPRESSION of their size, and under REPEAT_DISTINCT of the six-word runs of the
last 300 words are distinct. Over 925 distinct captured replies of the 0.5B and 1.5B (plans,
decisions, files, tests) no finished reply met both; of the 20 cut at the output limit, 16
did, at about half their length. A reply whose last three code blocks are the same block of
several lines is a loop too, whatever its length: the 0.5B wrote temperature.py unchanged eleven
times in one reply, about 80 seconds of a CPU's time.
"""

from __future__ import annotations

import logging
import re
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk

log = logging.getLogger(__name__)

REPEAT_WINDOW = 3000
REPEAT_STEP = 256
"""How often (in characters) the tail is measured."""
REPEAT_COMPRESSION = 0.09
REPEAT_DISTINCT = 0.6
RUN_WORDS = 6
TAIL_WORDS = 300


FENCED = re.compile(r"^[ \t]*```[^\n`]*\n(.*?)^[ \t]*```[ \t]*$", re.MULTILINE | re.DOTALL)
SAME_BLOCKS = 3
"""This many closed code blocks in a row with the same lines are a loop."""


def repeating(text: str) -> bool:
    """The tail of `text` is a loop (see the module's docstring)."""
    if _same_blocks(text):
        return True
    if len(text) < REPEAT_WINDOW:
        return False
    tail = text[-REPEAT_WINDOW:].encode()
    if len(zlib.compress(tail, 6)) >= REPEAT_COMPRESSION * len(tail):
        return False
    words = text[-2 * REPEAT_WINDOW :].split()[-TAIL_WORDS:]
    runs = [tuple(words[i : i + RUN_WORDS]) for i in range(len(words) - RUN_WORDS + 1)]
    return bool(runs) and len(set(runs)) < REPEAT_DISTINCT * len(runs)


def _same_blocks(text: str) -> bool:
    """The last SAME_BLOCKS code blocks are one block of at least two lines, over and over."""
    last = [body.strip() for body in FENCED.findall(text)[-SAME_BLOCKS:]]
    return len(last) == SAME_BLOCKS and len(set(last)) == 1 and "\n" in last[0]


@dataclass
class _ToolCallParts:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class Streamed:
    """What a stream held: the completion it amounts to, and whether it was stopped."""

    completion: ChatCompletion
    stopped: bool


@dataclass
class _Reader:
    content: list[str] = field(default_factory=list)
    calls: dict[int, _ToolCallParts] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Any = None
    tokens: int = 0
    """Chunks that carried text: a token each on llama.cpp and OpenAI."""
    last: ChatCompletionChunk | None = None
    size: int = 0
    """Characters of text so far."""
    measured: int = 0
    """`size` when the tail was last measured."""

    def take(self, chunk: ChatCompletionChunk) -> None:
        self.last = chunk
        self.usage = chunk.usage or self.usage
        for choice in chunk.choices[:1]:
            self.finish_reason = choice.finish_reason or self.finish_reason
            delta = choice.delta
            pieces = [delta.content] if delta.content else []
            self.content += pieces
            for call in delta.tool_calls or []:
                parts = self.calls.setdefault(call.index, _ToolCallParts())
                parts.id = call.id or parts.id
                function = call.function
                parts.name += (function.name or "") if function else ""
                if function is not None and function.arguments:
                    parts.arguments.append(function.arguments)
                    pieces.append(function.arguments)
            self.size += sum(map(len, pieces))
            self.tokens += bool(pieces)

    def text(self) -> str:
        return "".join(self.content) + "".join("".join(c.arguments) for c in self.calls.values())

    def looping(self) -> bool:
        """Measured every REPEAT_STEP characters: zlib over 3 kB per token would be waste."""
        if self.size - self.measured < REPEAT_STEP:
            return False
        self.measured = self.size
        return repeating(self.text())


def read_stream(
    chunks: Iterable[ChatCompletionChunk],
    close: Callable[[], None],
    *,
    model: str,
    deadline: float,
    prompt_estimate: int,
) -> Streamed:
    """Read `chunks` into one completion; close the stream once the reply repeats itself.
    Past `deadline` (time.monotonic) the stream is closed and TimeoutError raised. A stopped
    stream ends before the endpoint's usage chunk: its prompt counts `prompt_estimate`."""
    reader = _Reader()
    stopped = False
    for chunk in chunks:
        reader.take(chunk)
        if time.monotonic() > deadline:
            close()
            raise TimeoutError("the reply did not end within llm.timeout_seconds")
        if reader.finish_reason is None and reader.looping():
            close()
            stopped = True
            break
    return Streamed(_completion(reader, model, stopped, prompt_estimate), stopped)


def read_completion(
    kind: str, stream: Any, model: str, deadline: float, prompt_estimate: int
) -> Streamed:
    """The streamed reply to a `kind` request as one completion (read_stream); a stream that
    breaks off or outlasts the timeout is a connection error (retried like one)."""
    request = stream.response.request
    try:
        streamed = read_stream(
            stream,
            stream.close,
            model=model,
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
    return streamed


def _completion(reader: _Reader, model: str, stopped: bool, prompt_estimate: int) -> ChatCompletion:
    calls = [
        {
            "id": parts.id or f"call_{index}",
            "type": "function",
            "function": {"name": parts.name, "arguments": "".join(parts.arguments)},
        }
        for index, parts in sorted(reader.calls.items())
    ]
    message: dict[str, Any] = {"role": "assistant", "content": "".join(reader.content) or None}
    if calls:
        message["tool_calls"] = calls
    finish = "length" if stopped else reader.finish_reason or "stop"
    usage = reader.usage.model_dump() if reader.usage is not None else None
    if usage is None:  # a stopped stream ends before the usage chunk: its text is counted
        usage = {
            "prompt_tokens": prompt_estimate,
            "completion_tokens": reader.tokens,
            "total_tokens": prompt_estimate + reader.tokens,
        }
    last = reader.last
    return ChatCompletion.model_validate(
        {
            "id": last.id if last else "stream",
            "object": "chat.completion",
            "created": last.created if last else 0,
            "model": last.model if last else model,
            "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            "usage": usage,
        }
    )
