"""The script of the scripted model server: each Step is one model turn (a completion to return,
or an HTTP error), built with the ``reply_*`` helpers; a step may name the kind of request it
answers and check the request with ``expect``."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

JsonDict = dict[str, Any]
Expectation = Callable[[JsonDict], None]
ToolCallSpec = tuple[str, Mapping[str, Any] | str]


@dataclass(frozen=True)
class Step:
    """One scripted model turn: a completion to return, or an HTTP error.

    Build steps with the ``reply_*`` helpers; use ``dataclasses.replace`` to
    tweak rarer fields (for example ``finish_reason="length"``).
    """

    kind: str | None = None
    content: str | None = None
    # (function name, arguments already encoded as the JSON string sent on the wire)
    tool_calls: tuple[tuple[str, str], ...] = ()
    finish_reason: str = "stop"
    status: int = 200
    error_message: str = ""
    error_type: str | None = None
    error_code: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    usage: Mapping[str, int] | None = None
    expect: Expectation | None = None
    delay_seconds: float = 0.0
    chunk_delay_seconds: float = 0.0
    """Streamed (`stream: true`), the pause before each chunk: a slow generation."""

    def __post_init__(self) -> None:
        if self.status != 200 and not 400 <= self.status <= 599:
            raise ValueError(f"step status must be 200 or 4xx/5xx, got {self.status}")
        if self.delay_seconds < 0:
            raise ValueError("delay_seconds must not be negative")

    @property
    def is_error(self) -> bool:
        return self.status >= 400

    def describe(self) -> str:
        """Short human description used in failure reports."""
        if self.is_error:
            return f"error {self.status}: {self.error_message}"
        if self.tool_calls:
            names = ", ".join(name for name, _ in self.tool_calls)
            return f"tool_calls [{names}]"
        return f"content {shorten(self.content or '')}"


def _frozen_usage(usage: Mapping[str, int] | None) -> Mapping[str, int] | None:
    # Steps are frozen; a read-only copy stops a test from mutating a shared dict later.
    return None if usage is None else MappingProxyType(dict(usage))


def reply_json(
    kind: str | None,
    document: Mapping[str, Any],
    usage: Mapping[str, int] | None = None,
    *,
    expect: Expectation | None = None,
    delay_seconds: float = 0.0,
) -> Step:
    """Assistant message whose content is ``json.dumps(document)``."""
    return Step(
        kind=kind,
        content=json.dumps(document),
        usage=_frozen_usage(usage),
        expect=expect,
        delay_seconds=delay_seconds,
    )


def reply_text(
    kind: str | None,
    text: str,
    usage: Mapping[str, int] | None = None,
    *,
    expect: Expectation | None = None,
    delay_seconds: float = 0.0,
    chunk_delay_seconds: float = 0.0,
) -> Step:
    """Assistant message with verbatim content (handy for scripting garbage output)."""
    return Step(
        kind=kind,
        content=text,
        usage=_frozen_usage(usage),
        expect=expect,
        delay_seconds=delay_seconds,
        chunk_delay_seconds=chunk_delay_seconds,
    )


def reply_tool_calls(
    kind: str | None,
    calls: Sequence[ToolCallSpec],
    content: str | None = None,
    usage: Mapping[str, int] | None = None,
    *,
    expect: Expectation | None = None,
    delay_seconds: float = 0.0,
) -> Step:
    """Assistant message with ``tool_calls``.

    Dict arguments are JSON-encoded; a string is sent verbatim so tests can script
    malformed arguments.
    """
    if not calls:
        raise ValueError("reply_tool_calls needs at least one call")
    encoded = tuple(
        (name, args if isinstance(args, str) else json.dumps(dict(args))) for name, args in calls
    )
    return Step(
        kind=kind,
        content=content,
        tool_calls=encoded,
        finish_reason="tool_calls",
        usage=_frozen_usage(usage),
        expect=expect,
        delay_seconds=delay_seconds,
    )


def reply_error(
    status: int,
    message: str = "scripted error",
    headers: Mapping[str, str] | None = None,
    kind: str | None = None,
    *,
    error_type: str | None = None,
    code: str | None = None,
    expect: Expectation | None = None,
    delay_seconds: float = 0.0,
) -> Step:
    """HTTP error in OpenAI's error shape.

    Example: ``reply_error(429, headers={"Retry-After": "0"})`` for rate limiting.
    """
    if status < 400:
        raise ValueError(f"reply_error needs a 4xx/5xx status, got {status}")
    return Step(
        kind=kind,
        status=status,
        error_message=message,
        error_type=error_type,
        error_code=code,
        headers=tuple((headers or {}).items()),
        expect=expect,
        delay_seconds=delay_seconds,
    )


def shorten(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")
