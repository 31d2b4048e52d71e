"""Chat messages in the OpenAI shape, and finish_task, the tool that ends a task."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from planner.core.interfaces import ToolCall, ToolSpec

FINISH_TASK = ToolSpec(
    name="finish_task",
    description="Declare the current task finished (done, or impossible to do).",
    parameters={
        "type": "object",
        "properties": {
            "status": {"type": "string", "enum": ["completed", "failed"]},
            "summary": {"type": "string", "description": "What was done, or why it failed"},
        },
        "required": ["status", "summary"],
    },
)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def user(content: str) -> dict[str, Any]:
    return {"role": "user", "content": content}


def assistant(content: str | None, calls: list[ToolCall]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {
                    "name": c.name,
                    "arguments": c.raw_arguments or json.dumps(c.arguments),
                },
            }
            for c in calls
        ]
    return message


def tool_message(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}
