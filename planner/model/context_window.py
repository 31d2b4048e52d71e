"""Every request fits the model's context window.

The window is `llm.context_tokens` when set; else what the endpoint says (llama.cpp's
`GET /props` n_ctx; Ollama's `POST /api/show`, the model's `num_ctx` parameter or Ollama's
default), else the published limit of a known hosted model; unknown, only an overflow error
shrinks a request. A request is fitted on the wire, never in the pass's own conversation:
estimated over the window less the room kept for the reply, it is shrunk, cheapest loss first —

1. long tool results (and long replies) of earlier turns are cut to a window of their lines,
   around the first line that holds a word of the call that asked for them;
2. older turns are summarised, one line per call, into the task's first request;
3. the longest messages left are cut the same way, the latest result last.

A server's context-overflow error (llama.cpp's HTTP 400 "exceeds the available context size",
OpenAI's `context_length_exceeded`, vLLM's "maximum context length") gives the window where it
names it (else three quarters of the estimate), and the request is fitted again and re-sent:
an overflow never ends the pass by itself.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import openai
import requests

from planner.config import LLMConfig
from planner.model.replies import short
from planner.text.budget import estimate
from planner.text.redaction import redact

log = logging.getLogger(__name__)

MESSAGE_OVERHEAD_TOKENS = 6
"""The chat template's tokens around each message (`<|im_start|>role\\n … <|im_end|>\\n`)."""
REPLY_SHARE = 4
"""Without llm.max_output_tokens, a quarter of the window (at most DEFAULT_REPLY_TOKENS) is
kept for the reply."""
DEFAULT_REPLY_TOKENS = 4096
SAFETY = 0.9
"""The estimate is not the server's count: a request is fitted to 90% of what is left."""
KEEP_RECENT = 4
"""Messages at the end of a conversation never summarised (the latest turns)."""
MIN_CUT_LINES = 8
MAX_LINE_CHARS = 400
"""A line of a cut message is kept to this many characters (a minified file is one line)."""
OLLAMA_DEFAULT_NUM_CTX = 4096
"""Ollama's context length for a model whose Modelfile sets no num_ctx (OLLAMA_CONTEXT_LENGTH
on the server may raise it; set llm.context_tokens then)."""
PUBLISHED_WINDOWS: tuple[tuple[str, int], ...] = (
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-5", 400_000),
    ("o4-mini", 200_000),
    ("o3", 200_000),
    ("o1", 200_000),
    ("gpt-3.5-turbo", 16_385),
)
"""Published context windows of hosted models, by name prefix (the longest match wins)."""
OVERFLOW = re.compile(
    r"exceeds? the available context size|context_length_exceeded|maximum context length|"
    r"context length exceeded|exceed_context_size|prompt is too long|context window",
    re.IGNORECASE,
)
NUMBERS = re.compile(r"maximum context length is (\d+)|n_ctx\D{0,4}(\d+)", re.IGNORECASE)
DISCOVERY_TIMEOUT_SECONDS = 5.0


def message_tokens(message: dict[str, Any]) -> int:
    calls = message.get("tool_calls") or []
    text = _text(message.get("content")) + "".join(json.dumps(c) for c in calls)
    return estimate(text) + MESSAGE_OVERHEAD_TOKENS


def request_tokens(messages: Sequence[dict[str, Any]], extra: dict[str, Any]) -> int:
    wire = sum(estimate(json.dumps(extra[k])) for k in ("tools", "response_format") if k in extra)
    return wire + sum(message_tokens(message) for message in messages)


def overflow_limit(message: str, body: object) -> int | None:
    """The window a context-overflow error names, 0 when it names none; None when the error
    is not a context overflow."""
    text = f"{message} {json.dumps(body, default=str) if body else ''}"
    if not OVERFLOW.search(text):
        return None
    if isinstance(body, dict) and isinstance(body.get("n_ctx"), int):
        return int(body["n_ctx"])
    found = NUMBERS.search(text)
    return int(next(group for group in found.groups() if group)) if found else 0


def published_window(model: str) -> int | None:
    name = model.lower().rsplit("/", 1)[-1]
    matches = [(len(prefix), size) for prefix, size in PUBLISHED_WINDOWS if name.startswith(prefix)]
    return max(matches)[1] if matches else None


def discover_window(base_url: str | None, model: str, api_key: str) -> int | None:
    """The endpoint's context window: llama.cpp's /props, then Ollama's /api/show, then the
    published limit of a known model. OpenAI's own API is never asked (its limits are
    published)."""
    if base_url is None or "api.openai.com" in base_url:
        return published_window(model)
    root = re.sub(r"/v1/?$", "", base_url.rstrip("/"))
    headers = {"Authorization": f"Bearer {api_key}"}
    return _llama_cpp(root, headers) or _ollama(root, model, headers) or published_window(model)


def _llama_cpp(root: str, headers: dict[str, str]) -> int | None:
    props = _json(requests.get, f"{root}/props", headers=headers)
    settings = props.get("default_generation_settings") if isinstance(props, dict) else None
    n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
    return n_ctx if isinstance(n_ctx, int) and n_ctx > 0 else None


def _ollama(root: str, model: str, headers: dict[str, str]) -> int | None:
    shown = _json(requests.post, f"{root}/api/show", headers=headers, json={"model": model})
    if not isinstance(shown, dict) or ("modelfile" not in shown and "parameters" not in shown):
        return None
    found = re.search(r"^\s*num_ctx\s+(\d+)", str(shown.get("parameters") or ""), re.MULTILINE)
    return int(found.group(1)) if found else OLLAMA_DEFAULT_NUM_CTX


def _json(method: Any, url: str, **arguments: Any) -> Any:
    try:
        reply = method(url, timeout=DISCOVERY_TIMEOUT_SECONDS, allow_redirects=False, **arguments)
        return reply.json() if reply.status_code == 200 else None
    except (requests.RequestException, ValueError):
        return None


@dataclass(frozen=True)
class Fitted:
    messages: list[dict[str, Any]]
    tokens_before: int
    tokens_after: int

    @property
    def shrunk(self) -> bool:
        return self.tokens_after < self.tokens_before


def reply_room(window: int, max_output_tokens: int | None) -> int:
    if max_output_tokens is not None:
        return min(max_output_tokens, window // 2)
    return min(DEFAULT_REPLY_TOKENS, window // REPLY_SHARE)


def fit(
    messages: Sequence[dict[str, Any]], extra: dict[str, Any], window: int, reply: int
) -> Fitted:
    """`messages` shrunk until the request (with `extra`: tools, response format) is estimated
    to leave `reply` tokens of `window`; the messages as they were when they fit already."""
    room = int((window - reply) * SAFETY) - request_tokens([], extra)
    before = request_tokens(messages, {})
    if before <= room:
        return Fitted(list(messages), before, before)
    fitted = [dict(message) for message in messages]
    for step in (_cut_results, _summarise_turns, _cut_longest):
        if request_tokens(fitted, {}) <= room:
            break
        fitted = step(fitted, room)
    return Fitted(fitted, before, request_tokens(fitted, {}))


def _cut_results(messages: list[dict[str, Any]], room: int) -> list[dict[str, Any]]:
    """Earlier turns' long tool results and replies, cut to windows of their lines, oldest
    first, until the request fits; the latest result and the first request are left."""
    earlier = _earlier(messages)
    for index in earlier:
        over = request_tokens(messages, {}) - room
        if over <= 0:
            break
        message = messages[index]
        size = estimate(_text(message.get("content")))
        if size > 200 and message["role"] in ("tool", "assistant", "user"):
            keep = max(100, min(size // 4, size - over))
            messages[index] = {**message, "content": cut(message, messages, keep)}
    return messages


def _earlier(messages: list[dict[str, Any]]) -> list[int]:
    """Indexes of the messages after the first request and before the latest turn."""
    first = _first_request(messages)
    last = _latest_turn(messages)
    return [i for i in range(first + 1, last) if messages[i]["role"] != "system"]


def _first_request(messages: list[dict[str, Any]]) -> int:
    return next((i for i, m in enumerate(messages) if m["role"] == "user"), 0)


def _latest_turn(messages: list[dict[str, Any]]) -> int:
    """Where the latest turn starts: the last assistant message (with the results after it)."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index]["role"] == "assistant":
            return index
    return len(messages)


def _summarise_turns(messages: list[dict[str, Any]], room: int) -> list[dict[str, Any]]:
    """Turns between the first request and the last KEEP_RECENT messages become one line each
    at the end of the first request: what was called, and how it went."""
    first = _first_request(messages)
    end = _summary_end(messages, first)
    if end <= first + 1:
        return messages
    lines = [line for message in messages[first + 1 : end] if (line := _summary_line(message))]
    note = "\n\n[Earlier turns, summarised to fit the model's context window:\n"
    request = messages[first]
    joined = {**request, "content": _text(request.get("content")) + note + "\n".join(lines) + "]"}
    return [*messages[:first], joined, *messages[end:]]


def _summary_end(messages: list[dict[str, Any]], first: int) -> int:
    """The first kept message: at least KEEP_RECENT from the end, never a tool result (its
    call would be summarised away)."""
    end = max(first + 1, len(messages) - KEEP_RECENT)
    while end < len(messages) and messages[end]["role"] == "tool":
        end += 1
    return end


def _summary_line(message: dict[str, Any]) -> str:
    text = _text(message.get("content")).strip()
    first = text.splitlines()[0][:160] if text else ""
    if message["role"] == "assistant":
        calls = [_call_line(call) for call in message.get("tool_calls") or []]
        return "; ".join(calls) if calls else f"- you replied: {first}"
    if message["role"] == "tool":
        lines = text.count("\n") + 1 if text else 0
        return f"  → {first} ({lines} lines)" if lines > 1 else f"  → {first}"
    return f"- told: {first}"


def _call_line(call: dict[str, Any]) -> str:
    function = call.get("function") or {}
    return f"- called {function.get('name')}({str(function.get('arguments', ''))[:160]})"


def _cut_longest(messages: list[dict[str, Any]], room: int) -> list[dict[str, Any]]:
    """The longest messages cut until the request fits (the system prompt last)."""
    for _ in range(len(messages) * 2):
        over = request_tokens(messages, {}) - room
        if over <= 0:
            break
        sizes = [
            (message["role"] != "system", estimate(_text(message.get("content"))), index)
            for index, message in enumerate(messages)
        ]
        _, size, index = max(sizes)
        if size <= 100:
            break
        keep = max(50, size - over - 20)
        messages[index] = {**messages[index], "content": cut(messages[index], messages, keep)}
    return messages


def cut(message: dict[str, Any], messages: Sequence[dict[str, Any]], keep: int) -> str:
    """The message's text within about `keep` tokens: the lines around the first one holding
    a word of the call it answers (a tool result), else its first lines, and its last line,
    with the cut said in place."""
    lines = [_short(line) for line in _text(message.get("content")).splitlines()]
    centre = _asked_line(lines, _asked_words(message, messages))
    start, end = _window(lines, centre, keep)
    kept = lines[start:end]
    note = "cut to fit the model's context window"
    before = [f"[… lines 1-{start} of {len(lines)} {note} …]"] if start else []
    rest = f"[… lines {end + 1}-{len(lines)} of {len(lines)} {note} …]"
    after = [rest] if end < len(lines) else []
    return "\n".join([*before, *kept, *after])


def _window(lines: list[str], centre: int, keep: int) -> tuple[int, int]:
    """The run of lines from a few before `centre` on, within `keep` tokens (at least
    MIN_CUT_LINES lines)."""
    costs = [estimate(line) + 1 for line in lines]
    start = end = centre
    used = 0
    while start > 0 and centre - start < 3 and used + costs[start - 1] <= keep // 4:
        start -= 1
        used += costs[start]
    while end < len(lines) and (used + costs[end] <= keep or end - start < MIN_CUT_LINES):
        used += costs[end]
        end += 1
    return start, max(end, min(len(lines), start + 1))


def _asked_words(message: dict[str, Any], messages: Sequence[dict[str, Any]]) -> list[str]:
    """The words of the arguments of the call a tool result answers (a symbol, a pattern)."""
    call_id = message.get("tool_call_id")
    if not call_id:
        return []
    for other in messages:
        for call in other.get("tool_calls") or []:
            if call.get("id") == call_id:
                arguments = str((call.get("function") or {}).get("arguments", ""))
                words = re.findall(r"[A-Za-z_][A-Za-z0-9_]{3,}", arguments)
                return [w for w in words if w not in ("path", "pattern", "start_line")]
    return []


def _asked_line(lines: list[str], words: list[str]) -> int:
    for word in words:
        for index, line in enumerate(lines):
            if word in line:
                return max(0, index - 2)
    return 0


def _short(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + " …"


def _text(content: object) -> str:
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


class Window:
    """The context window one client's requests are fitted to: llm.context_tokens, else what
    the endpoint says (asked once), narrowed by each context-overflow error."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.tokens: int | None = config.context_tokens
        self.known = config.context_tokens is not None

    def size(self) -> int | None:
        if not self.known:
            self.known = True
            key = self.config.api_key.get_secret_value() if self.config.api_key else ""
            self.tokens = discover_window(self.config.base_url, self.config.model, key)
            log.info("context window of %s: %s tokens", self.config.model, self.tokens)
        return self.tokens

    def fitted(
        self, kind: str, messages: Sequence[dict[str, Any]], extra: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """The request's messages, shrunk to fit the context window with room for the reply."""
        window = self.size()
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

    def overflowed(
        self, kind: str, exc: Exception, sent: list[dict[str, Any]], extra: dict[str, Any]
    ) -> bool:
        """A context-overflow error: the window becomes what the error names, and at most
        three quarters of what was sent, so the next fit is smaller."""
        if not isinstance(exc, openai.APIStatusError):
            return False
        limit = overflow_limit(str(exc.message), exc.body)
        if limit is None:
            return False
        window = self.size()
        reply = reply_room(window or limit or 8192, self.config.max_output_tokens)
        smaller = int(request_tokens(sent, extra) * 0.75) + reply
        self.tokens = min(value for value in (limit, window, smaller) if value)
        log.warning(
            "model %s request overflowed the context window (%s): fitting it to %d tokens",
            kind,
            short(redact(str(exc.message)), 160),
            self.tokens,
        )
        return True
