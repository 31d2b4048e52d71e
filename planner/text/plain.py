"""Why a pass stopped, as plain text: a reason never shows a model's raw JSON reply.

A reason can carry what the model wrote: the excerpt of an unusable reply in a
ModelBehaviourError (`the reply is not JSON: {"done": true, "summary": {…`), or a field of its
reply that holds a JSON document itself. People read the reason in the tracking comment, the
job summary and the terminal, so plain_reason() keeps the words around such a document and
puts in its place the text it holds (its `reason`, `message`, `summary`… strings), or, when it
cannot be read (cut off, malformed), says that the reply was malformed. The reply itself stays
in the history, where the error entry records it whole.
"""

from __future__ import annotations

import json
import re
from typing import Any

JSON_START = re.compile(r"[\[{]\s*\"")
"""Where a JSON object (or a list of them or of strings) starts: a bracket before a quote."""
TEXT_KEYS = ("reason", "message", "summary", "description", "comment", "text", "error")
"""The keys whose text says what a reply meant, in this order of preference."""
MALFORMED = "the model's reply was malformed (it is kept in the history)"
MAX_TEXT = 300
"""Characters of a document's text kept in a reason."""


def plain_reason(reason: str) -> str:
    """`reason` with every JSON document in it replaced by its text (or said malformed)."""
    match = JSON_START.search(reason)
    if match is None:
        return reason
    head = reason[: match.start()].rstrip(" :")
    try:
        value, end = json.JSONDecoder().raw_decode(reason, match.start())
    except ValueError:  # cut off or malformed: nothing after its start is plain text
        return _joined(head, MALFORMED, _unclosed(head))
    text = _text_of(value)
    rest = plain_reason(reason[end:])
    return _joined(head, _short(text) if text else MALFORMED, "") + rest


def _joined(head: str, text: str, closing: str) -> str:
    return f"{head}: {text}{closing}" if head else f"{text}{closing}"


def _unclosed(head: str) -> str:
    """The parentheses `head` opened and the cut text would have closed."""
    return ")" * max(head.count("(") - head.count(")"), 0)


def _text_of(value: Any) -> str:
    """The words a JSON value holds: the first of its TEXT_KEYS with text, searched through
    nested objects; else its strings, joined."""
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, dict):
        for key in TEXT_KEYS:
            text = _text_of(value.get(key))
            if text:
                return text
        return "; ".join(filter(None, (_text_of(item) for item in value.values())))
    if isinstance(value, list):
        return "; ".join(filter(None, (_text_of(item) for item in value)))
    return ""


def _short(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"
