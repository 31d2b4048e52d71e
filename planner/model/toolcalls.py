"""Tool calls without native tool calling: the model writes the call as a JSON document.

Small local models (and many Ollama set-ups) write `{"name": "read_file", "arguments": {...}}`
as text, often fenced or wrapped in `<tool_call>` tags, and leave `tool_calls` empty. This
module turns such text into ToolCalls, validates them against the tools' schemas, describes
the tools in the prompt, and rewrites a native-shaped conversation (assistant `tool_calls`,
`tool` results) into plain messages for the wire, so the conversation the pass keeps (and the
history) has one format whatever the endpoint.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Sequence
from typing import Any

from planner.core.interfaces import ToolCall, ToolSpec
from planner.text.prompts import render

FENCED = re.compile(r"```[A-Za-z0-9_-]*\s*\n(.*?)\n?\s*```", re.DOTALL)
TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
NAME_KEYS = ("tool", "name", "function", "tool_name")
ARGUMENT_KEYS = ("arguments", "parameters", "args", "input")
JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "null": (type(None),),
}


class CallProblem(Exception):
    """A text reply that is not a usable tool call; the message is shown to the model."""


def calls_in_text(text: str | None) -> list[tuple[str, Any]] | None:
    """The (name, arguments) pairs written in a reply, or None when it holds no call."""
    for candidate in _candidates(text or ""):
        value = _loads(candidate)
        calls = _calls_of(value) if value is not None else []
        if calls:
            return calls
    return _calls_of(_objects_in(_json_literals(text or ""))) or None


def _loads(text: str) -> Any:
    """The JSON value of `text`, forgiving what small models get wrong inside strings: raw
    newlines and tabs, and Python's triple quotes (a docstring copied into oldText) unescaped;
    None when it is not JSON even so."""
    for attempt in (text, _triple_quoted_values(text), text.replace('"""', '\\"\\"\\"')):
        try:
            return json.loads(attempt, strict=False)
        except json.JSONDecodeError:
            continue
    return None


# A value written in Python's triple quotes ("content": <3 quotes>...<3 quotes>) ends at the
# triple quote followed by the next key or the object's end, so docstrings inside it stay in.
TRIPLE_QUOTED_VALUE = re.compile(r'(:\s*)"""\n?(.*?)"""(?=\s*(?:,\s*"|\}))', re.DOTALL)


def _triple_quoted_values(text: str) -> str:
    def as_json(match: re.Match[str]) -> str:
        return match.group(1) + json.dumps(textwrap.dedent(match.group(2)))

    return TRIPLE_QUOTED_VALUE.sub(as_json, text)


PYTHON_LITERALS = re.compile(r"(?<=[:\[,\s])(None|True|False)(?=\s*[,}\]])")


def _json_literals(text: str) -> str:
    # Small models write Python's None/True/False where JSON has null/true/false.
    spelled = {"None": "null", "True": "true", "False": "false"}
    return PYTHON_LITERALS.sub(lambda match: spelled[match.group(1)], text)


def _objects_in(text: str) -> list[Any]:
    """Every top-level JSON object in `text`, in order (a model may write several calls one
    after another without a list around them)."""
    decoder = json.JSONDecoder()
    found, position = [], text.find("{")
    while position >= 0:
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            position = text.find("{", position + 1)
            continue
        found.append(value)
        position = text.find("{", end)
    return found


def _candidates(text: str) -> list[str]:
    found = [text.strip(), *TAGGED.findall(text), *FENCED.findall(text)]
    for opening, closing in ("{}", "[]"):
        start, end = text.find(opening), text.rfind(closing)
        if 0 <= start < end:
            found.append(text[start : end + 1])
    return [candidate for candidate in found if candidate]


def _calls_of(value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list):
        value = value["tool_calls"]
    items = value if isinstance(value, list) else [value]
    calls = [_call_of(item) for item in items]
    return [call for call in calls if call is not None] if all(calls) else []


def _call_of(item: Any) -> tuple[str, Any] | None:
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("function"), dict):
        item = item["function"]
    name = next((item[key] for key in NAME_KEYS if isinstance(item.get(key), str)), None)
    if name is None:
        return None
    arguments: Any = next((item[key] for key in ARGUMENT_KEYS if key in item), {})
    return name, arguments


def checked_calls(text: str | None, tools: Sequence[ToolSpec], first_id: int) -> list[ToolCall]:
    """The calls in `text`, each naming an offered tool with arguments its schema accepts."""
    calls = calls_in_text(text)
    if calls is None:
        raise CallProblem('no tool call found; answer {"tool": "<name>", "arguments": {...}}')
    by_name = {tool.name: tool for tool in tools}
    return [
        _checked(name, arguments, by_name, f"call_json_{first_id + index}")
        for index, (name, arguments) in enumerate(calls)
    ]


def lenient_calls(text: str | None, first_id: int) -> list[ToolCall]:
    """The calls in `text` as written (unknown tools and bad arguments are left to the tool
    registry, which answers them as failed actions exactly as for native calls)."""
    calls = calls_in_text(text) or []
    return [
        _tool_call(f"call_json_{first_id + index}", name, _decoded(arguments))
        for index, (name, arguments) in enumerate(calls)
    ]


def _checked(name: str, arguments: Any, by_name: dict[str, ToolSpec], call_id: str) -> ToolCall:
    tool = by_name.get(name)
    if tool is None:
        raise CallProblem(f"there is no tool {name!r}; the tools are: {', '.join(sorted(by_name))}")
    decoded = _decoded(arguments)
    if not isinstance(decoded, dict):
        raise CallProblem(f"the arguments of {name} must be a JSON object")
    problems = schema_problems(decoded, tool.parameters)
    if problems:
        raise CallProblem(f"arguments of {name}: {'; '.join(problems)}")
    return ToolCall(id=call_id, name=name, arguments=decoded)


def _decoded(arguments: Any) -> Any:
    # Some models encode the arguments as a JSON string, as the native wire format does.
    if isinstance(arguments, str):
        try:
            return json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            return arguments
    return arguments


def _tool_call(call_id: str, name: str, arguments: Any) -> ToolCall:
    if isinstance(arguments, dict):
        return ToolCall(id=call_id, name=name, arguments=arguments)
    return ToolCall(id=call_id, name=name, raw_arguments=json.dumps(arguments) or " ")


def schema_problems(arguments: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """What is wrong with `arguments` for an object schema: missing required keys, unknown
    keys where the schema forbids them, wrong types and values outside an enum."""
    properties: dict[str, Any] = schema.get("properties", {})
    problems = [f"{key} is required" for key in schema.get("required", []) if key not in arguments]
    for key, value in arguments.items():
        field = properties.get(key)
        if field is None:
            if schema.get("additionalProperties") is False:
                problems.append(f"{key} is not a parameter (allowed: {', '.join(properties)})")
            continue
        problems.extend(_value_problems(key, value, field))
    return problems


def _value_problems(key: str, value: Any, field: dict[str, Any]) -> list[str]:
    wanted = field.get("type")
    kinds = [wanted] if isinstance(wanted, str) else list(wanted or [])
    if kinds and not any(_is_type(value, kind) for kind in kinds):
        return [f"{key} must be {' or '.join(kinds)}, not {type(value).__name__}"]
    if "enum" in field and value not in field["enum"]:
        return [f"{key} must be one of {field['enum']}"]
    return []


def _is_type(value: Any, kind: str) -> bool:
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False
    return isinstance(value, JSON_TYPES.get(kind, (object,)))


def call_schema(tools: Sequence[ToolSpec]) -> dict[str, Any]:
    """The response schema of a json tool-call turn: one variant per tool, binding the tool's
    name to its parameters, so a server that enforces the schema (llama.cpp, vLLM, Ollama
    turn it into a grammar) keeps a small model from writing `edits` as a list of strings.
    A tool whose parameters use more of JSON Schema than every such server understands gets
    an open object (its arguments are still checked here)."""
    return {"anyOf": [_call_variant(tool) for tool in tools]}


def _call_variant(tool: ToolSpec) -> dict[str, Any]:
    parameters = tool.parameters if _plain_schema(tool.parameters) else {"type": "object"}
    return {
        "type": "object",
        "properties": {"tool": {"type": "string", "enum": [tool.name]}, "arguments": parameters},
        "required": ["tool", "arguments"],
    }


PLAIN_SCHEMA_KEYS = frozenset(
    {"type", "properties", "required", "items", "enum", "description", "minimum", "maximum"}
)


def _plain_schema(schema: Any) -> bool:
    """Only the keywords every schema-to-grammar converter handles, all the way down."""
    if (
        not isinstance(schema, dict)
        or not set(schema) - {"additionalProperties"} <= PLAIN_SCHEMA_KEYS
    ):
        return False
    if not isinstance(schema.get("additionalProperties", False), bool):
        return False
    nested = [
        *schema.get("properties", {}).values(),
        *([schema["items"]] if "items" in schema else []),
    ]
    return all(_plain_schema(child) for child in nested)


def tool_lines(tools: Sequence[ToolSpec]) -> list[str]:
    """One line per tool: `name(param: type, optional?: type) — description`."""
    return [f"{tool.name}({_signature(tool.parameters)}) — {tool.description}" for tool in tools]


def _signature(schema: dict[str, Any]) -> str:
    required = set(schema.get("required", []))
    parts = []
    for key, field in schema.get("properties", {}).items():
        parts.append(f"{key}{'' if key in required else '?'}: {_kind(field)}")
    return ", ".join(parts)


def _kind(field: dict[str, Any]) -> str:
    """A parameter's type as the signature shows it; an array of objects shows its items'
    keys (`[{oldText, newText}]`): "array" alone let small models write strings there."""
    if "enum" in field:
        return "|".join(json.dumps(option) for option in field["enum"])
    kind = field.get("type", "any")
    items = field.get("items")
    if kind == "array" and isinstance(items, dict) and items.get("properties"):
        return "[{" + ", ".join(items["properties"]) + "}]"
    return "|".join(kind) if isinstance(kind, list) else str(kind)


def wire_messages(
    messages: Sequence[dict[str, Any]], tools: Sequence[ToolSpec]
) -> list[dict[str, Any]]:
    """The conversation as plain messages: tool calls become the assistant's JSON text, tool
    results become user messages, and the first system message gains the tool list."""
    wire = plain_messages(messages)
    instructions = render("tool_calling_json.md.j2", tools=tool_lines(tools))
    if wire and wire[0]["role"] == "system":
        wire[0] = {"role": "system", "content": f"{wire[0]['content']}\n\n{instructions}"}
    else:
        wire.insert(0, {"role": "system", "content": instructions})
    return wire


def plain_messages(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation without native tool-call fields: calls as the assistant's JSON text,
    results as user messages (a request that offers no tools may carry none)."""
    names: dict[str, str] = {}
    return [_plain(message, names) for message in messages]


def _plain(message: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    if message.get("role") == "tool":
        name = names.get(str(message.get("tool_call_id")), "tool")
        return {"role": "user", "content": f"Result of {name}:\n{message.get('content') or ''}"}
    calls = message.get("tool_calls")
    if message.get("role") != "assistant" or not calls:
        return dict(message)
    written = []
    for call in calls:
        function = call["function"]
        names[call["id"]] = function["name"]
        written.append({"tool": function["name"], "arguments": _decoded(function["arguments"])})
    text = json.dumps(written[0] if len(written) == 1 else written)
    prose = message.get("content")
    return {"role": "assistant", "content": f"{prose}\n{text}" if prose else text}
