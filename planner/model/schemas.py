"""The response formats a request asks for: a document's JSON schema (compacted: every request
pays its tokens) or plain JSON mode, and the schema of a tool call written as JSON."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from planner.config import LLMConfig
from planner.core.interfaces import ToolSpec
from planner.model.toolcalls import call_schema


def response_format(config: LLMConfig, kind: str, schema: type[BaseModel]) -> dict[str, Any]:
    """The response format of a `kind` document (llm.structured_output)."""
    if config.structured_output == "json_mode":
        return {"type": "json_object"}
    return {
        "type": "json_schema",
        "json_schema": {"name": kind, "schema": json_schema_of(schema), "strict": False},
    }


def call_format(config: LLMConfig, kind: str, tools: Sequence[ToolSpec]) -> dict[str, Any]:
    """The response format of a tool call written as JSON (llm.tool_calling json)."""
    if config.structured_output == "json_mode":
        return {"type": "json_object"}
    schema = {"name": kind, "schema": call_schema(tools), "strict": False}
    return {"type": "json_schema", "json_schema": schema}


@functools.cache
def _schema_text(schema: type[BaseModel]) -> str:
    # Generating a schema costs milliseconds and the document classes never change.
    return json.dumps(compact_schema(schema.model_json_schema()))


NAME_MAPS = frozenset({"properties", "$defs", "patternProperties"})
SCHEMA_NOISE = frozenset({"title", "default", "description", "examples"})
"""Schema keywords that constrain nothing: pydantic's generated titles and the defaults cost
about half of a schema's tokens, and every request pays them. What fields mean is said once in
the prompts."""


def compact_schema(node: Any) -> Any:
    """`node` without SCHEMA_NOISE, an optional field's `anyOf [X, null]` written as X (an
    absent field and null mean the same to the documents)."""
    if isinstance(node, list):
        return [compact_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    options = node.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        (kept,) = [option for option in options if option != {"type": "null"}]
        rest = {key: value for key, value in node.items() if key != "anyOf"}
        return compact_schema({**rest, **kept})
    compact: dict[str, Any] = {}
    for key, value in node.items():
        if key in NAME_MAPS and isinstance(value, dict):
            # field and definition names are data here, even one called "title" or "default"
            compact[key] = {name: compact_schema(child) for name, child in value.items()}
        elif key not in SCHEMA_NOISE:
            compact[key] = compact_schema(value)
    return compact


def json_schema_of(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a document class (a fresh copy: callers may not mutate the cache)."""
    loaded: dict[str, Any] = json.loads(_schema_text(schema))
    return loaded
