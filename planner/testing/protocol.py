"""The chat-completions request as the real API validates it (roles, tool-call pairing, tool and
response-format shapes): a request it would reject is a ProtocolError, answered with HTTP 400.
A test that passes against a lenient fake but fails against the real API is worse than none."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from planner.testing.steps import JsonDict

KIND_HEADER = "X-Planner-Kind"
ROLES = ("system", "user", "assistant", "tool", "developer")
NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class ProtocolError(Exception):
    """A request the real API would reject with HTTP 400."""

    def __init__(self, message: str, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code


def parse_body(raw: bytes) -> JsonDict:
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        body = None
    if not isinstance(body, dict):
        raise ProtocolError(
            "We could not parse the JSON body of your request. The OpenAI API expects "
            "a JSON payload."
        )
    return body


def validate_request(body: JsonDict) -> None:
    options = body.get("stream_options")
    if options is not None and body.get("stream") is not True:
        raise ProtocolError(
            "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
            "stream_options",
        )
    if not isinstance(body.get("model"), str):
        raise ProtocolError("you must provide a model parameter", "model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ProtocolError("'messages' must be a non-empty array", "messages")
    for index, message in enumerate(messages):
        _validate_message(index, message)
    _validate_tool_pairing(messages)
    if "tools" in body:
        _validate_tools(body["tools"])
    if "response_format" in body:
        _validate_response_format(body["response_format"])


def _validate_message(index: int, message: object) -> None:
    where = f"messages[{index}]"
    if not isinstance(message, dict):
        raise ProtocolError(f"Invalid type for '{where}': expected an object.", where)
    role = message.get("role")
    if role not in ROLES:
        supported = ", ".join(repr(r) for r in ROLES)
        raise ProtocolError(
            f"Invalid value: {role!r}. Supported values are: {supported}.",
            f"{where}.role",
            "invalid_value",
        )
    content = message.get("content")
    if content is not None and not isinstance(content, str | list):
        raise ProtocolError(f"Invalid type for '{where}.content'.", f"{where}.content")
    if role == "assistant":
        _validate_assistant(where, message)
    elif content is None:
        raise ProtocolError(f"Missing required parameter: '{where}.content'.", f"{where}.content")


def _validate_assistant(where: str, message: JsonDict) -> None:
    tool_calls = message.get("tool_calls")
    if tool_calls is None:
        if message.get("content") is None:
            raise ProtocolError(
                f"Invalid value for '{where}.content': expected a string, got null.",
                f"{where}.content",
            )
        return
    if not isinstance(tool_calls, list) or not tool_calls:
        raise ProtocolError(
            f"Invalid '{where}.tool_calls': expected a non-empty array.", f"{where}.tool_calls"
        )
    for position, call in enumerate(tool_calls):
        _validate_tool_call(f"{where}.tool_calls[{position}]", call)


def _validate_tool_call(where: str, call: object) -> None:
    if not isinstance(call, dict) or not isinstance(call.get("id"), str):
        raise ProtocolError(f"Missing required parameter: '{where}.id'.", f"{where}.id")
    if call.get("type") != "function":
        raise ProtocolError(f"Invalid value for '{where}.type'.", f"{where}.type")
    function = call.get("function")
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise ProtocolError(
            f"Missing required parameter: '{where}.function.name'.", f"{where}.function"
        )
    # The API only accepts the arguments as the string it produced, not a decoded object.
    if not isinstance(function.get("arguments"), str):
        raise ProtocolError(
            f"Invalid type for '{where}.function.arguments': expected a string.",
            f"{where}.function.arguments",
        )


def _validate_tool_pairing(messages: list[JsonDict]) -> None:
    # Ids of the latest assistant tool_calls that still await a tool message, by the
    # index of that assistant message; the API rejects any gap in this pairing.
    pending: dict[str, int] = {}
    for index, message in enumerate(messages):
        if message["role"] == "tool":
            _answer_tool_call(index, message, pending)
            continue
        _require_answered(pending)
        if message["role"] == "assistant" and message.get("tool_calls"):
            pending = {call["id"]: index for call in message["tool_calls"]}
    _require_answered(pending)


def _answer_tool_call(index: int, message: JsonDict, pending: dict[str, int]) -> None:
    call_id = message.get("tool_call_id")
    if not isinstance(call_id, str):
        raise ProtocolError(
            f"Missing required parameter: 'messages[{index}].tool_call_id'.",
            f"messages[{index}].tool_call_id",
        )
    if call_id not in pending:
        raise ProtocolError(
            "Invalid parameter: messages with role 'tool' must be a response to a preceding "
            f"message with 'tool_calls' (unknown or already answered tool_call_id {call_id!r}).",
            f"messages[{index}].role",
        )
    del pending[call_id]


def _require_answered(pending: dict[str, int]) -> None:
    if not pending:
        return
    index = next(iter(pending.values()))
    missing = ", ".join(sorted(pending))
    raise ProtocolError(
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        f"to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        f"{missing}",
        f"messages[{index}].role",
    )


def _validate_tools(tools: object) -> None:
    if not isinstance(tools, list):
        raise ProtocolError("Invalid type for 'tools': expected an array.", "tools")
    for index, tool in enumerate(tools):
        where = f"tools[{index}]"
        if not isinstance(tool, dict) or tool.get("type") != "function":
            raise ProtocolError(f"Invalid value for '{where}.type'.", f"{where}.type")
        function = tool.get("function")
        if not isinstance(function, dict):
            raise ProtocolError(
                f"Missing required parameter: '{where}.function'.", f"{where}.function"
            )
        _validate_name(function.get("name"), f"{where}.function.name")
        # The real API lets "parameters" be omitted (no-argument function), so only
        # its type is checked.
        if "parameters" in function and not isinstance(function["parameters"], dict):
            raise ProtocolError(
                f"Invalid type for '{where}.function.parameters': expected an object.",
                f"{where}.function.parameters",
            )


def _validate_response_format(response_format: object) -> None:
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    if kind in ("text", "json_object"):
        return
    if kind != "json_schema":
        raise ProtocolError(
            "Invalid value for 'response_format.type': supported values are 'text', "
            "'json_object' and 'json_schema'.",
            "response_format.type",
            "invalid_value",
        )
    assert isinstance(response_format, dict)  # narrowed by the kind check above
    spec = response_format.get("json_schema")
    if not isinstance(spec, dict):
        raise ProtocolError(
            "Missing required parameter: 'response_format.json_schema'.",
            "response_format.json_schema",
        )
    _validate_name(spec.get("name"), "response_format.json_schema.name")
    if not isinstance(spec.get("schema"), dict):
        raise ProtocolError(
            "Invalid type for 'response_format.json_schema.schema': expected an object.",
            "response_format.json_schema.schema",
        )


def _validate_name(name: object, param: str) -> None:
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise ProtocolError(
            f"Invalid '{param}': string does not match pattern. Expected a string that "
            f"matches the pattern '^[a-zA-Z0-9_-]{{1,64}}$', got {name!r}.",
            param,
            "invalid_value",
        )


def request_kind(body: JsonDict, headers: Mapping[str, str]) -> str | None:
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        spec = response_format.get("json_schema")
        name = spec.get("name") if isinstance(spec, dict) else None
        if isinstance(name, str):
            return name
    return headers.get(KIND_HEADER.lower())
