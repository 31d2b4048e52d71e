"""Reading the model's replies: the JSON value a reply holds, the document it validates as, a
native tool call's arguments, and the conversation that asks again when a reply is unusable.
A reply is untrusted input: hostile numbers and nesting are refused with a clear message."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from planner.core.errors import ModelBehaviourError
from planner.core.interfaces import DocT, ToolCall
from planner.text.prompts import render


def reasked(
    messages: Sequence[dict[str, Any]], kind: str, text: str, problem: str, cut_off: bool
) -> list[dict[str, Any]]:
    """The conversation that asks again. A reply cut off at the output limit is left out: it is
    mostly a loop (the 1.5B repeated one subtask until the limit), which a model shown it
    continues; the request is asked again with the problem."""
    reask = {"role": "user", "content": render("reask.md.j2", kind=kind, problem=problem)}
    *earlier, request = messages
    if not cut_off or request.get("role") != "user" or not isinstance(request["content"], str):
        return [*messages, {"role": "assistant", "content": text}, reask]
    return [*earlier, {"role": "user", "content": f"{request['content']}\n\n{reask['content']}"}]


def native_call(call: Any) -> ToolCall:
    """A tool call the endpoint returned natively; arguments that are not a JSON object
    are kept raw, so the call fails as an action the model can correct."""
    raw = call.function.arguments or ""
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except UNPARSABLE:
        arguments = None
    if not isinstance(arguments, dict):
        return ToolCall(id=call.id, name=call.function.name, arguments={}, raw_arguments=raw or " ")
    return ToolCall(id=call.id, name=call.function.name, arguments=arguments)


def short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


FENCE = re.compile(r"```(?:json|JSON)?\s*\n(.*?)\n\s*```", re.DOTALL)


def extract_json(text: str) -> Any:
    """The JSON value in a reply: the whole text, a fenced block, or the outermost object."""
    candidates = [text.strip(), *FENCE.findall(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    problem = "the reply is not JSON"
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
        except (ValueError, RecursionError) as exc:  # a 5,000-digit number, nesting too deep
            problem = f"the reply's JSON cannot be used ({_unusable(exc)})"
    raise ModelBehaviourError(f"{problem}: {short(text.strip() or '(empty)', 200)}")


UNPARSABLE = (ValueError, RecursionError)
"""What json.loads raises on hostile input: JSONDecodeError is a ValueError, an integer over
Python's digit limit a plain ValueError, deep nesting a RecursionError."""


def _unusable(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return "a number with too many digits" if "digits" in str(exc) else str(exc)[:100]


def parse_document(text: str, schema: type[DocT], context: Any = None) -> DocT:
    value = extract_json(text)
    try:
        return schema.model_validate(value, context=context)
    except ValidationError as exc:
        raise ModelBehaviourError(_validation_summary(exc)) from None


def _validation_summary(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:8]:
        where = ".".join(str(p) for p in error["loc"]) or "(document)"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)
