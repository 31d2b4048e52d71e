#!/usr/bin/env python3
"""Every message planner shows a user, found in the source, for its catalogue and the docs.

    python3 scripts/error_messages.py            # each message, word for word, and where it is made
    python3 scripts/error_messages.py --missing  # those the catalogue lacks, and stale entries

Each message is compared word for word with planner/core/catalogue/, which gives it a code
and the section of docs/troubleshooting.md that says what to do (tests/test_catalogue.py);
docs/messages.md lists the catalogue (render_page, `python3 scripts/dev.py docs`).

A message is
- the reason of a `StopPass` (why a pass ended early: the tracking comment's "Why");
- the first argument of `raise E(...)` (or `return E(...)`, an error made for a caller to raise)
  where E is planner's PlannerError or one of its subclasses; in planner/ci and planner/cli, of
  any exception (one the job does not expect ends it as "planner failed unexpectedly: E: …");
- a log record of level warning or above (`log.warning(...)`, `log.error`, `log.exception`,
  `log.critical`), a `console.error(...)` or `console.warning(...)` line of the job log;
- what a program exits with or prints to standard error: `sys.exit("...")`,
  `print(..., file=sys.stderr)`;
- what planner posts on the issue or the pull request: the text of `reply(status, text)`,
  `post_comment`, `edit_comment`, `reply_to_thread`.

A message held in a name is followed: a module's string constant, the function's own assignment,
or a parameter of the function, whose arguments at every call of it are the messages. Its
*template* is the text exactly, {} for each part filled in at run time (template()); a log call's
`%s` takes its argument's text where that is known. A place whose text holds no words of its own
(`console.error(str(exc))`, a body a renderer composed, only a marker) relays a message made
elsewhere and is not one. Its *key* is the longest fixed part of the text; tests/test_docs.py
also requires every key in docs/troubleshooting.md.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planner.core.catalogue import CATALOGUE, Entry  # noqa: E402 - after the path
from scripts.check_links import slug  # noqa: E402

PACKAGE = ROOT / "planner"
TROUBLESHOOTING = ROOT / "docs" / "troubleshooting.md"
MESSAGES_PAGE = ROOT / "docs" / "messages.md"
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


POSTING = {"reply": 1, "post_comment": 1, "edit_comment": 2, "reply_to_thread": 2}
"""Calls that post text on the issue or the pull request, and the position of the text."""
PLACEHOLDER = "{}"


@dataclass(frozen=True)
class Message:
    error: str
    key: str
    where: str
    template: str = ""
    """The message exactly as the code writes it, each part it fills in at run time as {}."""


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


MAX_ALTERNATIVES = 32
"""A message with more alternatives than this (nested conditions) keeps the first ones."""
MAX_DEPTH = 3
"""How deep the walk follows a message into the functions that return it."""
FUNCTIONS: dict[str, list[tuple[Function, Source]]] = {}
"""The package's functions by name (messages() fills it): a message a function returns is
followed into it when the name is the package's only function of that name."""


def templates(
    node: ast.expr, names: dict[str, ast.expr] | None = None, percent: bool = False
) -> list[str]:
    """The messages `node` makes, exactly: its literal text, and {} for each part filled in at
    run time (an f-string's placeholder, a `%s` of a log call with `percent`, a name that holds
    no known text); one for each alternative (`a if c else b`, `a or b`, each text a function it
    calls returns). Whitespace runs become one space, as the forge and the log show them."""
    found = _templates(node, names or {}, percent, 0)
    return list(dict.fromkeys(" ".join(text.split()) for text in found))


def template(
    node: ast.expr, names: dict[str, ast.expr] | None = None, percent: bool = False
) -> str:
    """The first of templates()."""
    return templates(node, names, percent)[0]


def _templates(node: ast.expr, names: dict[str, ast.expr], percent: bool, depth: int) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        if not percent:
            return [node.value]
        return [PERCENT.sub(lambda m: "%" if m[0] == "%%" else PLACEHOLDER, node.value)]
    if isinstance(node, ast.JoinedStr):
        return ["".join(_piece(part, names) for part in node.values)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = _templates(node.left, names, percent, depth)
        right = _templates(node.right, names, percent, depth)
        return [one + two for one in left for two in right][:MAX_ALTERNATIVES]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _templates(node.left, names, True, depth)
    if isinstance(node, ast.IfExp):
        return _alternatives([node.body, node.orelse], names, percent, depth)
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        return _alternatives(node.values, names, percent, depth)
    if isinstance(node, ast.Call) and depth < MAX_DEPTH:
        returned = _returned(node, percent, depth)
        if returned:
            return returned
    name = _name_of(node)
    if name in names:
        rest = {k: v for k, v in names.items() if k != name}
        return _templates(names[name], rest, percent, depth)
    return [PLACEHOLDER]


def _alternatives(
    nodes: list[ast.expr], names: dict[str, ast.expr], percent: bool, depth: int
) -> list[str]:
    found = [text for node in nodes for text in _templates(node, names, percent, depth)]
    return found[:MAX_ALTERNATIVES]


def _returned(call: ast.Call, percent: bool, depth: int) -> list[str]:
    """What the package's function `call` calls returns, when it is the only one of its name."""
    defined = FUNCTIONS.get(_called(call), [])
    if len(defined) != 1:
        return []
    function, source = defined[0]
    found = [
        text
        for node in ast.walk(function)
        if isinstance(node, ast.Return)
        and node.value is not None
        and source.scope.get(id(node)) is function
        for text in _templates(node.value, source.names(node), percent, depth + 1)
    ]
    return found[:MAX_ALTERNATIVES]


def _piece(part: ast.expr, names: dict[str, ast.expr]) -> str:
    """One piece of an f-string: its text, a plain `{NAME}` of a known constant's text, else {}."""
    if isinstance(part, ast.Constant):
        return str(part.value)
    if isinstance(part, ast.FormattedValue) and part.conversion == -1 and not part.format_spec:
        known = _name_of(part.value)
        value = names.get(known)
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return value.value
    return PLACEHOLDER


def _name_of(node: ast.expr) -> str:
    """`x` for a name, `self.x` for an attribute of self (what the function assigned there)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}" if node.value.id in ("self", "cls") else ""
    return ""


def logged(call: ast.Call, names: dict[str, ast.expr]) -> list[str]:
    """A log call's messages as logging makes them: each `%s` of the format filled with the text
    of its argument where that is known (a constant, an f-string, what a function returns), else
    {}; one for each alternative."""
    fillings: list[list[str]] = [[]]
    for argument in call.args[1:]:
        options = list(dict.fromkeys(_templates(argument, names, False, 0)))
        fillings = [[*done, option] for done in fillings for option in options]
        fillings = fillings[:MAX_ALTERNATIVES]
    found = []
    for shown in dict.fromkeys(_templates(call.args[0], names, True, 0)):
        for arguments in fillings:
            if not arguments or shown.count(PLACEHOLDER) != len(arguments):
                found.append(" ".join(shown.split()))
                continue
            pieces = shown.split(PLACEHOLDER)
            filled = [piece + part for piece, part in zip(pieces, arguments, strict=False)]
            found.append(" ".join(("".join(filled) + pieces[-1]).split()))
    return list(dict.fromkeys(found))


def has_text(text: str) -> bool:
    """Whether a template holds text of its own: not only placeholders and punctuation (those
    relay a message made elsewhere: an exception's, a body composed by a renderer)."""
    visible = re.sub(r"<!--.*?-->", "", text.replace(PLACEHOLDER, ""))  # a marker, not read
    return bool(re.search(r"[A-Za-z]", visible))


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
        name = _name_of(targets[0]) if len(targets) == 1 else ""
        if name and value is not None:
            found[name] = value
    return found


def messages() -> list[Message]:
    parsed = [Source(path, ast.parse(path.read_text(encoding="utf-8"))) for path in sources()]
    errors = error_classes([source.tree for source in parsed])
    FUNCTIONS.clear()
    for source in parsed:
        for node in ast.walk(source.tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                FUNCTIONS.setdefault(node.name, []).append((node, source))
    found: list[Message] = []
    forwarded: list[tuple[str, int, str, str]] = []  # function, position, parameter, kind
    for source in parsed:
        for node in ast.walk(source.tree):
            shown = _shown(node, errors, source)
            if shown is None:
                continue
            kind, expression = shown
            made = _message(kind, expression, node, source)
            if made:
                found += made
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
    if isinstance(func, ast.Attribute) and func.attr in POSTING:
        position = POSTING[func.attr]
        given = [k.value for k in node.keywords if k.arg in ("text", "body")]
        given += node.args[position : position + 1]
        return (f"post.{func.attr}", given[0]) if given else None
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


def _message(kind: str, expression: ast.expr, node: ast.AST, source: Source) -> list[Message]:
    """The messages `expression` makes; [] when it holds no text of its own (a parameter,
    followed to the calls; an exception or a body made elsewhere, relayed)."""
    names = source.names(node)
    if kind.startswith("log.") and isinstance(node, ast.Call) and node.args[:1] == [expression]:
        shown = logged(node, names)
    else:
        shown = templates(expression, names, percent=kind.startswith("log."))
    parts = fixed_parts(expression, names)
    if kind.startswith("log."):
        parts = [piece for part in parts for piece in PERCENT.split(part)]
    parts = [" ".join(part.split()) for part in parts]
    key = max(parts, key=len, default="").strip(" :;,.()'\"")
    return [Message(kind, key, source.where(node), text) for text in shown if has_text(text)]


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
                found += _message(kind, expression, node, source)
    return found


def _called(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def missing(text: str) -> list[Message]:
    flat = " ".join(text.split())
    return [message for message in messages() if message.key not in flat]


def uncatalogued(found: list[Message] | None = None) -> list[Message]:
    """The messages whose text is not an entry of the catalogue, word for word."""
    known = {entry.text for entry in CATALOGUE}
    return [message for message in found or messages() if message.template not in known]


def stale_entries(found: list[Message] | None = None) -> list[Entry]:
    """Entries of the catalogue that no code makes any more."""
    made = {message.template for message in found or messages()}
    return [entry for entry in CATALOGUE if entry.text not in made]


def next_code() -> str:
    return f"PLN{max(int(entry.code[3:]) for entry in CATALOGUE) + 1:03d}"


PAGE_HEAD = """# Messages by code

<!-- Generated by `python3 scripts/dev.py docs` from planner/core/catalogue/; do not edit. -->

Every message planner shows: what it logs as a warning or an error, the errors it stops with, the
reasons a pass ends, the replies it posts and what its commands print on standard error. `…` stands
for what the message fills in (a path, a number, the forge's answer). Each links to what to do in
[troubleshooting.md](troubleshooting.md).

| code | message | what to do |
| --- | --- | --- |
"""


def render_page() -> str:
    rows = [
        f"| {entry.code} | {_cell(entry.text)} | [{_section_title(entry.fix)}]"
        f"(troubleshooting.md#{entry.fix}) |"
        for entry in CATALOGUE
    ]
    return PAGE_HEAD + "\n".join(rows) + "\n"


def _cell(text: str) -> str:
    """The message as plain text in a table cell: placeholders as …, nothing markdown reads."""
    shown = text.replace(PLACEHOLDER, "…").replace("\\", "\\\\").replace("|", "\\|")
    return re.sub(r"([`*_<>\[\]])", r"\\\1", shown)


def _section_title(anchor: str) -> str:
    headings = re.findall(r"^## (.+)$", TROUBLESHOOTING.read_text(encoding="utf-8"), re.M)
    titles = {slug(heading): heading for heading in headings}
    return titles.get(anchor, anchor).split(" — ")[0].split(" (")[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--missing", action="store_true", help="only what the catalogue lacks")
    args = parser.parse_args(argv)
    found = messages()
    shown = uncatalogued(found) if args.missing else found
    for message in shown:
        print(f"{message.error:<20} {message.template!r:<90} {message.where}")
    stale = stale_entries(found) if args.missing else []
    for entry in stale:
        print(f"stale entry {entry.code}: {entry.text!r}")
    if args.missing and shown:
        print(f"next free code: {next_code()}")
    return 1 if args.missing and (shown or stale) else 0


if __name__ == "__main__":
    sys.exit(main())
