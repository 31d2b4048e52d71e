"""One entry of the catalogue: a message, its code and where its fix is."""

from __future__ import annotations

from typing import NamedTuple


class Entry(NamedTuple):
    code: str
    """PLN and three digits; never reused for another message."""
    text: str
    """The message as the code writes it, {} for each part filled in at run time."""
    fix: str
    """The anchor of the section of docs/troubleshooting.md that says what to do."""
