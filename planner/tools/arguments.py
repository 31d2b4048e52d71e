"""Reading tool arguments the model sent, with messages it can act on."""

from __future__ import annotations

from typing import Any


class BadArguments(Exception):
    """The arguments of a tool call do not fit its schema; the message says how."""


def text(arguments: dict[str, Any], name: str, default: str | None = None) -> str:
    value = arguments.get(name, default)
    if value is None:
        raise BadArguments(f"missing argument {name!r}")
    if not isinstance(value, str):
        raise BadArguments(f"argument {name!r} must be a string, not {type(value).__name__}")
    return value


def optional_int(arguments: dict[str, Any], name: str) -> int | None:
    value = arguments.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise BadArguments(f"argument {name!r} must be a positive integer")
    return value


def flag(arguments: dict[str, Any], name: str) -> bool:
    value = arguments.get(name, False)
    if not isinstance(value, bool):
        raise BadArguments(f"argument {name!r} must be true or false")
    return value


def string_list(arguments: dict[str, Any], name: str) -> list[str]:
    return _list_of(arguments, name, str, "strings", "a string")


def object_list(arguments: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return _list_of(arguments, name, dict, "objects", "an object")


def _list_of(
    arguments: dict[str, Any], name: str, kind: type, plural: str, singular: str
) -> list[Any]:
    """A non-empty list of `kind` items; `plural` and `singular` name them in the message."""
    value = arguments.get(name)
    if not isinstance(value, list) or not value:
        raise BadArguments(f"argument {name!r} must be a non-empty array of {plural}")
    if not all(isinstance(item, kind) for item in value):
        raise BadArguments(f"every item of {name!r} must be {singular}")
    return value
