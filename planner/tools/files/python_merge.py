"""What a Python file rewritten whole leaves out by accident, put back.

A small model asked to add `median` to a module that has `mean` writes the module back with
only `median` (the 1.5B did, twice in a row: every test importing `mean` broke, and no repair
reply put it back). Asked to read `APP_PORT`, it writes `os.getenv(...)` without `import os`.
Both leave a file that cannot work, in ways a program can see and mend exactly:

- a top-level name the new text uses but no longer binds (an import, a constant, a function)
  is taken back from the old text;
- a definition the new text drops that another file still imports, or (in a module that is not
  a test file) a public one the issue does not name, is taken back, unless a new definition has
  its body (a rename, which the issue asked for); so is a constant another file imports;
- a standard-library module the new text uses but never imports is imported.

Anything that does not parse is left as written: the syntax check answers it.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
import symtable
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from planner.model.definitions import first_line, is_docstring

BUILTIN_NAMES = frozenset(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__"}

DEFINITION_STARTS = ("def ", "async def ", "class ", "@")

UsedBy = Callable[[str], str | None]
"""A dropped definition's name → why it is still needed (`tests/test_a.py uses it`), or None."""


@dataclass
class Completion:
    text: str
    kept: list[str] = field(default_factory=list)
    """Sentences for the model: what was put back, and why."""


@dataclass(frozen=True)
class _Binding:
    name: str
    node: ast.stmt

    @property
    def is_import(self) -> bool:
        return isinstance(self.node, ast.Import | ast.ImportFrom)

    @property
    def is_definition(self) -> bool:
        return isinstance(self.node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)


def complete_module(
    before: str, after: str, used_by: UsedBy, imported_by: UsedBy | None = None
) -> Completion:
    """`after` with what it left out of `before` put back (see the module's docstring);
    `imported_by` says which other file imports a dropped constant (None: constants stay
    dropped)."""
    completion = Completion(after)
    try:
        old = ast.parse(before)
        if _star_import(ast.parse(after)):
            return completion  # which names it binds is unknowable here
        unbound_before = _names(before)[1]
        used_by = functools.cache(used_by)  # each name is looked up in the repository once
        imported = functools.cache(imported_by or _nobody)
        for _ in range(3):  # what was put back may use more of the old text
            step = _completed_once(before, old, unbound_before, completion.text, used_by, imported)
            if step is None:
                break
            completion = Completion(step.text, completion.kept + step.kept)
    except (SyntaxError, ValueError):  # symtable refuses some text ast accepts
        return Completion(after)
    return completion


def _nobody(name: str) -> str | None:
    return None


def _completed_once(
    before: str,
    old: ast.Module,
    unbound_before: set[str],
    after: str,
    used_by: UsedBy,
    imported_by: UsedBy,
) -> Completion | None:
    new = ast.parse(after)
    bound, unbound = _names(after)
    missing = unbound - unbound_before
    restored = _restored(_top_bindings(old), bound, new, missing, used_by, imported_by)
    imports = sorted(name for name in missing - {b.name for b, _ in restored} if _stdlib(name))
    if not restored and not imports:
        return None
    text = _assembled(before, after, new, restored, imports)
    kept = [reason for _, reason in restored] + [f"added `import {name}`" for name in imports]
    return Completion(text, kept)


def _restored(
    old: list[_Binding],
    bound: set[str],
    new: ast.Module,
    missing: set[str],
    used_by: UsedBy,
    imported_by: UsedBy,
) -> list[tuple[_Binding, str]]:
    """Old bindings to put back, each with the reason shown to the model; one statement once."""
    bodies = _bodies(new)
    chosen: list[tuple[_Binding, str]] = []
    for binding in old:
        renamed = binding.is_definition and _body(binding.node) in bodies
        if binding.name in bound or renamed or any(binding.node is b.node for b, _ in chosen):
            continue  # a rename in progress: its callers are the model's to change next
        if binding.name in missing:
            chosen.append((binding, f"kept `{binding.name}`: the new content uses it"))
        elif user := _needed_by(binding, used_by, imported_by):
            chosen.append((binding, f"kept `{binding.name}`: {user}"))
    return chosen


def _needed_by(binding: _Binding, used_by: UsedBy, imported_by: UsedBy) -> str | None:
    """Why a dropped definition, or a constant another module imports, is still needed."""
    if binding.is_definition:
        return used_by(binding.name)
    return None if binding.is_import else imported_by(binding.name)


def _assembled(
    before: str,
    after: str,
    new: ast.Module,
    restored: list[tuple[_Binding, str]],
    imports: list[str],
) -> str:
    """Imports after the new text's leading imports; constants next; definitions before the
    new text's first definition, in their old order; blank lines as PEP 8 spaces them."""
    lines = after.splitlines()
    at_head, at_definitions = _insertion_lines(new, len(lines))
    old = [(b, _source(before, b.node)) for b, _ in restored]
    head = [*lines[:at_head], *(f"import {n}" for n in imports)]
    head += [source for b, source in old if b.is_import]
    groups = [
        "\n".join(head),
        "\n".join(source for b, source in old if not (b.is_import or b.is_definition)),
        "\n".join(lines[at_head:at_definitions]),
        *(source for b, source in old if b.is_definition),
        "\n".join(lines[at_definitions:]),
    ]
    return _joined([group.strip("\n") for group in groups if group.strip()])


def _joined(groups: list[str]) -> str:
    text = groups[0]
    for group in groups[1:]:
        starts_definition = group.lstrip().startswith(DEFINITION_STARTS)
        text += ("\n\n\n" if starts_definition else "\n\n") + group
    return text + "\n"


def _insertion_lines(new: ast.Module, count: int) -> tuple[int, int]:
    """Index of the line after the new text's leading docstring and imports, and of its first
    definition (its decorators included); the end when there is none."""
    at_head = 0
    for position, node in enumerate(new.body):
        leading_docstring = position == 0 and is_docstring(node)
        if not (leading_docstring or isinstance(node, ast.Import | ast.ImportFrom)):
            break
        at_head = node.end_lineno or at_head
    first = next(
        (
            n
            for n in new.body
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        ),
        None,
    )
    at_definitions = first_line(first) - 1 if first is not None else count
    return at_head, max(at_head, at_definitions)


def _top_bindings(module: ast.Module) -> list[_Binding]:
    """The names each top-level import, assignment and definition binds, in order."""
    found: list[_Binding] = []
    for node in module.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found += [_Binding((a.asname or a.name).split(".")[0], node) for a in node.names]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.append(_Binding(node.name, node))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found += [_Binding(t.id, node) for t in targets if isinstance(t, ast.Name)]
    return found


def _names(text: str) -> tuple[set[str], set[str]]:
    """The names the text binds at its top level, and the global names it reads that nothing
    in it binds and that are not builtins."""
    top = symtable.symtable(text, "<new>", "exec")
    used: set[str] = set()
    declared: set[str] = set()
    pending = [top]
    while pending:
        table = pending.pop()
        pending += table.get_children()
        for symbol in table.get_symbols():
            global_here = table is top or symbol.is_global()
            if global_here and symbol.is_referenced():
                used.add(symbol.get_name())
            if table is not top and symbol.is_declared_global() and symbol.is_assigned():
                declared.add(symbol.get_name())
    bound = {s.get_name() for s in top.get_symbols() if _binds(s)}
    return bound, used - bound - declared - BUILTIN_NAMES


def _binds(symbol: symtable.Symbol) -> bool:
    return symbol.is_assigned() or symbol.is_imported() or symbol.is_namespace()


def _bodies(module: ast.Module) -> set[str]:
    return {
        _body(node)
        for node in module.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }


def _body(node: ast.stmt) -> str:
    """A definition's body, without its name: a renamed function has the same one."""
    return ast.dump(ast.Module(body=getattr(node, "body", []), type_ignores=[]))


def _source(text: str, node: ast.stmt) -> str:
    lines = text.splitlines()
    return "\n".join(lines[first_line(node) - 1 : node.end_lineno])


def _star_import(module: ast.Module) -> bool:
    return any(
        isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)
        for node in ast.walk(module)
    )


def importer_pattern(module: str, name: str) -> str:
    """A line that imports `name` from `module` (`from stats import mean`, `from .cart import
    calc_total, x`) or reads it as an attribute (`cart.calc_total`)."""
    module_re, name_re = re.escape(module), re.escape(name)
    return (
        rf"\bfrom\s+[\w.]*?\b{module_re}\s+import\b.*\b{name_re}\b"
        rf"|\b{module_re}\.{name_re}\b"
    )


def parenthesised_import_pattern(module: str) -> str:
    """The first line of an import from `module` that goes on over several lines
    (`from stats import (`): its names are on the lines below (imports_name)."""
    return rf"\bfrom\s+[\w.]*?\b{re.escape(module)}\s+import\s*\("


def imports_name(text: str, module: str, name: str) -> bool:
    """Whether the Python `text` imports `name` from `module` (its last dotted part)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return any(
        isinstance(node, ast.ImportFrom)
        and (node.module or "").rsplit(".", 1)[-1] == module
        and any(alias.name == name for alias in node.names)
        for node in ast.walk(tree)
    )


def _stdlib(name: str) -> bool:
    return name in sys.stdlib_module_names and not name.startswith("_")
