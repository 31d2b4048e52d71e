"""A Python code block holding only some definitions of its file, put into the file.

Asked for a file's complete new content, a small model often answers with just the function
it changed: the 1.5B wrote `pager.py` as the fixed `page` alone (4 lines of 9; right, and
refused as a fragment), and `temperature.py` as `to_fahrenheit` alone, twice. Re-asked, it
rewrote more and changed more: the second `page` raised `ValueError` the issue never asked
for. A block whose top level is only definitions (and imports) is read as what it is:

- a function or class the file defines at its top level is replaced by the block's;
- a class's methods are replaced one by one, and new methods are added at its end, when the
  block's class holds only methods (and its docstring): the rest of the class stays;
- a definition the file lacks is added at its end; an import it lacks, after its imports.

Anything else (statements, a block or file that does not parse) is not merged: the caller
refuses the block as a fragment, as before.
"""

from __future__ import annotations

import ast
from typing import TypeGuard

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def merged_definitions(before: str, block: str) -> str | None:
    """`before` with the definitions of `block` put in; None when `block` is not only
    definitions and imports, or either text does not parse."""
    try:
        old, new = ast.parse(before), ast.parse(block)
    except (SyntaxError, ValueError):
        return None
    if not _only_definitions(new.body) or not any(_is_definition(n) for n in new.body):
        return None
    lines, block_lines = before.splitlines(), block.splitlines()
    edits: list[tuple[int, int, list[str]]] = []  # (first index, end index, new lines)
    known = {n.name: n for n in old.body if _is_definition(n)}
    added: list[list[str]] = []
    for node in filter(_is_definition, new.body):
        source = _source(block_lines, node)
        existing = known.get(node.name)
        method = _method_of(old, node) if existing is None else None
        if method is not None:
            indent = " " * method.col_offset
            source = _with_docstring(source, node, method, lines)
            edits.append((_start(method), _end(method), _indented_by(source, indent)))
        elif existing is None:
            added.append(source)
        elif not (
            isinstance(existing, ast.ClassDef)
            and isinstance(node, ast.ClassDef)
            and _class_edits(existing, node, block_lines, edits, lines)
        ):
            source = _with_docstring(source, node, existing, lines)
            edits.append((_start(existing), _end(existing), source))
    for first, end, replacement in sorted(edits, key=lambda e: e[0], reverse=True):
        lines[first:end] = replacement
    while added and lines and not lines[-1].strip():
        lines.pop()
    for source in added:
        lines += ["", "", *source]
    lines = _with_imports(lines, old, new, block_lines)
    return "\n".join(lines) + ("\n" if before.endswith("\n") else "")


def defined_names(text: str, methods: bool = False) -> set[str]:
    """The functions and classes `text` defines at its top level (none when it does not parse);
    with `methods`, the methods of its classes too."""
    try:
        body = ast.parse(text).body
    except (SyntaxError, ValueError):
        return set()
    names = {node.name for node in body if _is_definition(node)}
    if methods:
        names |= {m.name for node in body if isinstance(node, ast.ClassDef) for m in _methods(node)}
    return names


def _methods(node: ast.ClassDef) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [m for m in node.body if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)]


def _method_of(
    module: ast.Module, node: Definition
) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The one method of the file's classes that a top-level function of the block stands for:
    it takes `self` or `cls` and exactly one class has a method of its name. Shown a class's
    methods as a window, the 1.5B answered with the changed method alone, outside its class;
    added at the file's end, it changed nothing the class runs."""
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or not node.args.args:
        return None
    if node.args.args[0].arg not in ("self", "cls"):
        return None
    found = [
        m
        for c in module.body
        if isinstance(c, ast.ClassDef)
        for m in _methods(c)
        if m.name == node.name
    ]
    return found[0] if len(found) == 1 else None


def _indented_by(lines: list[str], indent: str) -> list[str]:
    return [indent + line if line.strip() else line for line in lines]


def _only_definitions(body: list[ast.stmt]) -> bool:
    return all(_is_definition(n) or isinstance(n, ast.Import | ast.ImportFrom) for n in body)


def _is_definition(node: ast.stmt) -> TypeGuard[Definition]:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)


def _class_edits(
    existing: ast.ClassDef,
    node: ast.ClassDef,
    block_lines: list[str],
    edits: list[tuple[int, int, list[str]]],
    file_lines: list[str],
) -> bool:
    """Edits putting the block's methods into the file's class; False when the block's class
    holds more than methods and a docstring (then it replaces the class whole)."""
    members = [m for m in node.body if not is_docstring(m)]
    methods_only = [m for m in members if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)]
    if not members or len(methods_only) != len(members):
        return False
    methods = {
        m.name: m for m in existing.body if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    indent = " " * existing.body[0].col_offset
    appended: list[str] = []
    for member in methods_only:
        source = _source(block_lines, member)
        if member.name in methods:
            source = _with_docstring(source, member, methods[member.name], file_lines)
        source = _indented(source, member.col_offset, indent)
        if member.name in methods:
            edits.append((_start(methods[member.name]), _end(methods[member.name]), source))
        else:
            appended += ["", *source]
    if appended:
        end = _end(existing)
        edits.append((end, end, appended))
    return True


def _with_docstring(
    source: list[str], node: Definition, existing: Definition, file_lines: list[str]
) -> list[str]:
    """A new version of a function without a docstring gets the docstring of the function it
    replaces: the 1.5B wrote `divide` back without its 29-line docstring (the package's
    doctests), and the change read as deleting most of the function."""
    functions = ast.FunctionDef | ast.AsyncFunctionDef
    if not isinstance(node, functions) or not isinstance(existing, functions):
        return source
    if not existing.body or not is_docstring(existing.body[0]) or is_docstring(node.body[0]):
        return source
    doc = existing.body[0]
    shift = node.body[0].col_offset - doc.col_offset
    kept = [_shifted(line, shift) for line in file_lines[doc.lineno - 1 : _end(doc)]]
    at = node.body[0].lineno - first_line(node)
    return [*source[:at], *kept, *source[at:]]


def _shifted(line: str, shift: int) -> str:
    """`line` indented `shift` columns more (fewer, where it has the room)."""
    if shift >= 0:
        return " " * shift + line if line.strip() else line
    room = len(line) - len(line.lstrip(" "))
    return line[min(-shift, room) :]


def _with_imports(
    lines: list[str], old: ast.Module, new: ast.Module, block_lines: list[str]
) -> list[str]:
    """The block's imports the file lacks, after the file's leading imports (or its docstring)."""
    have = {ast.dump(n) for n in old.body if isinstance(n, ast.Import | ast.ImportFrom)}
    missing = [
        line
        for n in new.body
        if isinstance(n, ast.Import | ast.ImportFrom) and ast.dump(n) not in have
        for line in _source(block_lines, n)
    ]
    if not missing:
        return lines
    at = 0
    for position, node in enumerate(old.body):
        if not (
            isinstance(node, ast.Import | ast.ImportFrom) or (position == 0 and is_docstring(node))
        ):
            break
        at = node.end_lineno or at
    return [*lines[:at], *missing, *lines[at:]]


def _indented(lines: list[str], column: int, indent: str) -> list[str]:
    """A method's lines moved to the file's class indentation (the block may indent by 2)."""
    return [indent + line[column:] if line[:column].isspace() else line for line in lines]


def is_docstring(node: ast.stmt) -> bool:
    """A string standing alone as a statement: a module's, class's or function's docstring."""
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def first_line(node: ast.stmt) -> int:
    """The node's first line number, its decorators included."""
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _start(node: ast.stmt) -> int:
    """Index of the node's first line in the file's lines."""
    return first_line(node) - 1


def _end(node: ast.stmt) -> int:
    return node.end_lineno or node.lineno


def _source(lines: list[str], node: ast.stmt) -> list[str]:
    return lines[_start(node) : _end(node)]
