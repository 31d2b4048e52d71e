"""Parsing a person's answer to an approval request (the text after the trigger phrase).

    approve all | approve a1,a3 | approve a1 a3     → Approve(ids)
    reject a2 <why> | reject a1,a3 <why> | reject a1 a3 <why>  → Reject(ids, reason)

Anything else is not an approval command. `approve` alone means all waiting specs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SPEC_ID = re.compile(r"^a\d{1,6}$")


@dataclass(frozen=True)
class Approve:
    ids: tuple[str, ...]
    """Empty means every waiting spec."""


@dataclass(frozen=True)
class Reject:
    ids: tuple[str, ...]
    reason: str


def parse_command(text: str) -> Approve | Reject | None:
    words = text.strip().split(None, 1)
    if not words or words[0].lower() not in ("approve", "reject"):
        return None
    rest = words[1] if len(words) > 1 else ""
    if words[0].lower() == "approve":
        return _approve(rest)
    return _reject(rest)


def is_attempt(text: str) -> bool:
    """Starts like an answer (`approve …`, `reject …`) even if parse_command refused the rest."""
    words = text.strip().split(None, 1)
    return bool(words) and words[0].lower().rstrip(":.,!") in ("approve", "reject")


UNREADABLE = (
    "Could not read this as an approval, so nothing was approved or rejected: answer with "
    "`/planner approve all`, `/planner approve a1,a3` or `/planner reject a2 <why>` alone."
)


def _approve(rest: str) -> Approve | None:
    tokens = [t for t in re.split(r"[\s,]+", rest.strip()) if t]
    if not tokens or [t.lower() for t in tokens] == ["all"]:
        return Approve(())
    if all(SPEC_ID.match(t.lower()) for t in tokens):
        return Approve(tuple(dict.fromkeys(t.lower() for t in tokens)))
    return None


def _reject(rest: str) -> Reject | None:
    match = re.match(r"^\s*((?:a\d{1,6})(?:(?:\s*,\s*|\s+)a\d{1,6})*)\b\s*(.*)$", rest, re.S | re.I)
    if match is None:
        return None
    ids = tuple(dict.fromkeys(i.lower() for i in re.split(r"[\s,]+", match.group(1).strip())))
    return Reject(ids, match.group(2).strip() or "no reason given")
