#!/usr/bin/env python3
"""Every error message planner raises for a user, found in the source, for docs/troubleshooting.md.

    python3 scripts/error_messages.py            # each message's fixed text and where it is raised
    python3 scripts/error_messages.py --missing  # only those docs/troubleshooting.md lacks

A message is the reason of a `StopPass` (why a pass ended early: the tracking comment's "Why")
or the first argument of `raise E(...)` (or `return E(...)`, an error made for a caller
to raise) where E is planner's PlannerError or one of its
subclasses. Its *key* is the longest fixed part of the text (an f-string's placeholders split it);
tests/test_docs.py requires every key in docs/troubleshooting.md, so a new message needs its fix
there.
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "planner"
TROUBLESHOOTING = ROOT / "docs" / "troubleshooting.md"
BASE = "PlannerError"
STOP = "StopPass"
"""Not an error: the reason a pass ended, shown as the tracking comment's "Why"."""
SKIPPED = ("evaluation/suite/", "testing/")  # task data; the tests' own stand-ins
MIN_KEY = 12


@dataclass(frozen=True)
class Message:
    error: str
    key: str
    where: str


def sources() -> list[Path]:
    return [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if not any(part in path.relative_to(PACKAGE).as_posix() for part in SKIPPED)
    ]


def error_classes(trees: list[ast.Module]) -> set[str]:
    """PlannerError and every class that derives from it, by name, to any depth."""
    parents: dict[str, set[str]] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                parents[node.name] = {b.id for b in node.bases if isinstance(b, ast.Name)}
    found = {BASE}
    while True:
        more = {name for name, bases in parents.items() if bases & found} - found
        if not more:
            return found
        found |= more


def fixed_parts(node: ast.expr) -> list[str]:
    """The literal pieces of a message expression (an f-string's text between placeholders)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        pieces = [v.value if isinstance(v, ast.Constant) else "\0" for v in node.values]
        return "".join(str(p) for p in pieces).split("\0")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return fixed_parts(node.left) + fixed_parts(node.right)
    return []


def messages() -> list[Message]:
    parsed = {path: ast.parse(path.read_text(encoding="utf-8")) for path in sources()}
    errors = error_classes(list(parsed.values()))
    found = []
    for path, tree in parsed.items():
        for node in ast.walk(tree):
            message = _raised(node, errors, path)
            if message is not None:
                found.append(message)
    return found


def _raised(node: ast.AST, errors: set[str], path: Path) -> Message | None:
    made = node.exc if isinstance(node, ast.Raise) else getattr(node, "value", None)
    if not (isinstance(node, ast.Raise | ast.Return) and isinstance(made, ast.Call)):
        return None
    call = made
    if not isinstance(call.func, ast.Name) or call.func.id not in {*errors, STOP}:
        return None
    position = 1 if call.func.id == STOP else 0  # StopPass(status, reason, ...)
    if len(call.args) <= position:
        return None
    parts = [" ".join(part.split()) for part in fixed_parts(call.args[position])]
    key = max(parts, key=len, default="").strip(" :;,.()'\"")
    if len(key) < MIN_KEY:
        return None
    return Message(call.func.id, key, f"{path.relative_to(ROOT)}:{node.lineno}")


def missing(text: str) -> list[Message]:
    flat = " ".join(text.split())
    return [message for message in messages() if message.key not in flat]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--missing", action="store_true", help="only messages the page lacks")
    args = parser.parse_args(argv)
    shown = missing(TROUBLESHOOTING.read_text(encoding="utf-8")) if args.missing else messages()
    for message in shown:
        print(f"{message.error:<20} {message.key!r:<90} {message.where}")
    return 1 if args.missing and shown else 0


if __name__ == "__main__":
    sys.exit(main())
