#!/usr/bin/env python3
"""Every message planner shows a user, found in the source, for docs/troubleshooting.md.

    python3 scripts/error_messages.py            # each message's fixed text and where it is made
    python3 scripts/error_messages.py --missing  # only those docs/troubleshooting.md lacks

A message is
- the reason of a `StopPass` (why a pass ended early: the tracking comment's "Why");
- the first argument of `raise E(...)` (or `return E(...)`, an error made for a caller to raise)
  where E is planner's PlannerError or one of its subclasses; in planner/ci and planner/cli, of
  any exception (one the job does not expect ends it as "planner failed unexpectedly: E: …");
- a log record of level warning or above (`log.warning(...)`, `log.error`, `log.exception`,
  `log.critical`), a `console.error(...)` or `console.warning(...)` line of the job log;
- what a program exits with or prints to standard error: `sys.exit("...")`,
  `print(..., file=sys.stderr)`.

A message held in a name is followed: a module's string constant, the function's own assignment,
or a parameter of the function, whose arguments at every call of it are the messages. Its *key* is
the longest fixed part of the text (an f-string's placeholders and `%s`-style ones split it);
tests/test_docs.py requires every key in docs/troubleshooting.md, so a new message needs its fix
there.
"""

from __future__ import annotations

import argparse
import ast
import re
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
LOG_LEVELS = {"warning", "error", "exception", "critical"}
LOGGERS = {"log", "logger", "LOG", "LOGGER"}
CONSOLE_LEVELS = {"error", "warning"}
ANY_EXCEPTION = ("ci/", "cli/")
"""Where an exception nobody expects reaches the user as it is."""
PERCENT = re.compile(r"%[-#0 +]*\d*(?:\.\d+)?[sdrfiox%]")


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


def fixed_parts(node: ast.expr, names: dict[str, ast.expr] | None = None) -> list[str]:
    """The literal pieces of a message expression (an f-string's text between placeholders);
    `names`: what the names in scope hold."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        pieces = [v.value if isinstance(v, ast.Constant) else "\0" for v in node.values]
        return "".join(str(p) for p in pieces).split("\0")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return fixed_parts(node.left, names) + fixed_parts(node.right, names)
    if isinstance(node, ast.Name) and names and node.id in names:
        return fixed_parts(names[node.id], {k: v for k, v in names.items() if k != node.id})
    return []


Function = ast.FunctionDef | ast.AsyncFunctionDef


class Source:
    """One module: its string constants, and what each function's names hold."""

    def __init__(self, path: Path, tree: ast.Module) -> None:
        self.path, self.tree = path, tree
        self.constants = _assignments(tree.body)
        self.scope: dict[int, Function] = {}
        self._locals: dict[int, dict[str, ast.expr]] = {}
        self._enter(tree, None)

    def _enter(
        self, node: ast.AST, function: ast.FunctionDef | ast.AsyncFunctionDef | None
    ) -> None:
        """Each node's innermost enclosing function."""
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            function = node
        if function is not None:
            self.scope[id(node)] = function
        for child in ast.iter_child_nodes(node):
            self._enter(child, function)

    def names(self, node: ast.AST) -> dict[str, ast.expr]:
        function = self.scope.get(id(node))
        if function is None:
            return self.constants
        if id(function) not in self._locals:
            self._locals[id(function)] = _assignments(list(ast.walk(function)))
        return {**self.constants, **self._locals[id(function)]}

    def parameter(self, node: ast.AST, expression: ast.expr) -> tuple[str, int, str] | None:
        """(function, position, name) when `expression` is a parameter of the enclosing one."""
        function = self.scope.get(id(node))
        if function is None or not isinstance(expression, ast.Name):
            return None
        names = [argument.arg for argument in function.args.args]
        if expression.id not in names:
            return None
        position = names.index(expression.id) - (1 if names[:1] in (["self"], ["cls"]) else 0)
        return function.name, position, expression.id

    def where(self, node: ast.AST) -> str:
        return f"{self.path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"


def _assignments(statements: list[ast.AST]) -> dict[str, ast.expr]:
    found: dict[str, ast.expr] = {}
    for statement in statements:
        targets: list[ast.expr] = []
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets = [statement.target]
        value = getattr(statement, "value", None)
        if len(targets) == 1 and isinstance(targets[0], ast.Name) and value is not None:
            found[targets[0].id] = value
    return found


def messages() -> list[Message]:
    parsed = [Source(path, ast.parse(path.read_text(encoding="utf-8"))) for path in sources()]
    errors = error_classes([source.tree for source in parsed])
    found: list[Message] = []
    forwarded: list[tuple[str, int, str, str]] = []  # function, position, parameter, kind
    for source in parsed:
        for node in ast.walk(source.tree):
            shown = _shown(node, errors, source)
            if shown is None:
                continue
            kind, expression = shown
            message = _message(kind, expression, node, source)
            if message is not None:
                found.append(message)
            elif (parameter := source.parameter(node, expression)) is not None:
                forwarded.append((*parameter, kind))
    return list(dict.fromkeys(found + _at_calls(parsed, forwarded)))  # a function name twice


def _shown(node: ast.AST, errors: set[str], source: Source) -> tuple[str, ast.expr] | None:
    """(kind, the message's expression) when `node` shows a message to a user."""
    if isinstance(node, ast.Raise | ast.Return):
        return _raised(node, errors, source)
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute) and node.args:
        owner = func.value
        name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
        if name in LOGGERS and func.attr in LOG_LEVELS:
            return f"log.{func.attr}", node.args[0]
        if name.endswith("console") and func.attr in CONSOLE_LEVELS:
            return f"console.{func.attr}", node.args[0]
        if name == "sys" and func.attr == "exit":
            return "sys.exit", node.args[0]
    if isinstance(func, ast.Name) and func.id == "print" and node.args:
        to = next((k.value for k in node.keywords if k.arg == "file"), None)
        if isinstance(to, ast.Attribute) and to.attr == "stderr":
            return "stderr", node.args[0]
    return None


def _raised(
    node: ast.Raise | ast.Return, errors: set[str], source: Source
) -> tuple[str, ast.expr] | None:
    made = node.exc if isinstance(node, ast.Raise) else node.value
    if not isinstance(made, ast.Call) or not isinstance(made.func, ast.Name):
        return None
    name = made.func.id
    anywhere = isinstance(node, ast.Raise) and name[:1].isupper()
    anywhere = anywhere and source.path.relative_to(PACKAGE).as_posix().startswith(ANY_EXCEPTION)
    if name not in {*errors, STOP} and not anywhere:
        return None
    position = 1 if name == STOP else 0  # StopPass(status, reason, ...)
    return (name, made.args[position]) if len(made.args) > position else None


def _message(kind: str, expression: ast.expr, node: ast.AST, source: Source) -> Message | None:
    parts = fixed_parts(expression, source.names(node))
    if kind.startswith("log."):
        parts = [piece for part in parts for piece in PERCENT.split(part)]
    parts = [" ".join(part.split()) for part in parts]
    key = max(parts, key=len, default="").strip(" :;,.()'\"")
    return Message(kind, key, source.where(node)) if len(key) >= MIN_KEY else None


def _at_calls(parsed: list[Source], forwarded: list[tuple[str, int, str, str]]) -> list[Message]:
    """Messages passed to a function that shows its parameter: the arguments of its calls."""
    wanted = {function for function, *_ in forwarded}
    calls: dict[str, list[tuple[ast.Call, Source]]] = {}
    for source in parsed:
        for node in ast.walk(source.tree):
            if isinstance(node, ast.Call) and _called(node) in wanted:
                calls.setdefault(_called(node), []).append((node, source))
    found = []
    for function, position, parameter, kind in forwarded:
        for node, source in calls.get(function, []):
            given = [k.value for k in node.keywords if k.arg == parameter]
            given += node.args[position : position + 1]
            for expression in given[:1]:
                message = _message(kind, expression, node, source)
                if message is not None:
                    found.append(message)
    return found


def _called(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


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
