"""Top-level symbols of a source file, each with the first line of its docstring.

Python is parsed with ast (exact); other languages are read with one regular expression per
language for their top-level definitions, taking the comment line just above a definition as
its docstring. Markdown files contribute their first headings. Good enough for a map: a model
only needs to know where things are, the exploration and the tools read the rest.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass

DOC_CHARS = 90


@dataclass(frozen=True, slots=True)
class Symbol:
    kind: str
    name: str
    doc: str = ""

    def line(self) -> str:
        return f"{self.kind} {self.name}" + (f": {self.doc}" if self.doc else "")


@dataclass(frozen=True, slots=True)
class Outline:
    summary: str
    """The module docstring's first line (or a Markdown file's title)."""
    symbols: tuple[Symbol, ...] = ()


EMPTY = Outline("")


def outline(path: str, text: str) -> Outline:
    suffix = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    if suffix in ("py", "pyi"):
        return _python(text)
    if suffix in ("md", "markdown", "rst"):
        return _markdown(text)
    pattern = _PATTERNS.get(suffix)
    return _by_pattern(text, pattern) if pattern else EMPTY


def first_line(text: str | None) -> str:
    line = (text or "").strip().split("\n", 1)[0].strip()
    return line if len(line) <= DOC_CHARS else line[: DOC_CHARS - 1].rstrip() + "…"


def _python(text: str) -> Outline:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes in old code are not our problem
            tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return EMPTY
    public = [node for node in tree.body if not getattr(node, "name", "").startswith("_")]
    symbols = [_python_symbol(node) for node in public]
    return Outline(first_line(ast.get_docstring(tree)), tuple(s for s in symbols if s))


def _python_symbol(node: ast.stmt) -> Symbol | None:
    if isinstance(node, ast.ClassDef):
        return Symbol("class", node.name, first_line(ast.get_docstring(node)))
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        arguments = ", ".join(a.arg for a in node.args.args)
        doc = first_line(ast.get_docstring(node))
        return Symbol("def", f"{node.name}({arguments})", doc)
    return None


HEADING = re.compile(r"^(#{1,2})\s+(.+?)\s*#*\s*$", re.MULTILINE)


def _markdown(text: str) -> Outline:
    headings = [m.group(2) for m in HEADING.finditer(text)]
    if not headings:
        return EMPTY
    return Outline(first_line(headings[0]), tuple(Symbol("#", h) for h in headings[1:]))


COMMENT_PREFIX = re.compile(r"^\s*(?:///?|#|--|\*|/\*\*?)\s?")
JS = (
    r"^(?:export\s+(?:default\s+)?)?(?:async\s+)?"
    r"(function\*?|class|interface|type|enum|const)\s+([A-Za-z_$][\w$]*)"
)
_PATTERNS: dict[str, re.Pattern[str]] = {
    **dict.fromkeys(("js", "jsx", "mjs", "cjs", "ts", "tsx"), re.compile(JS, re.MULTILINE)),
    "go": re.compile(r"^(func|type)\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)", re.MULTILINE),
    "rs": re.compile(
        r"^(?:pub(?:\([^)]*\))?\s+)?(fn|struct|enum|trait|mod|type|const)\s+([A-Za-z_]\w*)",
        re.MULTILINE,
    ),
    **dict.fromkeys(
        ("java", "kt", "cs", "scala", "swift"),
        re.compile(
            r"^(?:(?:public|private|internal|protected|abstract|final|sealed|data|open|static)\s+)*"
            r"(class|interface|enum|record|object|struct|fun|func)\s+([A-Za-z_]\w*)",
            re.MULTILINE,
        ),
    ),
    "rb": re.compile(r"^(def|class|module)\s+([A-Za-z_][\w.?!]*)", re.MULTILINE),
    **dict.fromkeys(
        ("c", "h", "cc", "cpp", "hpp", "cxx"),
        re.compile(
            r"^(?!(?:if|for|while|switch|return|else)\b)"
            r"(struct|class|[A-Za-z_][\w \t\*&:<>,]*?[\s\*&])"
            r"([A-Za-z_]\w*)\s*\([^;{]*\)\s*(?:const\s*)?\{?\s*$",
            re.MULTILINE,
        ),
    ),
    "sh": re.compile(r"^(function\s+)?([A-Za-z_][\w-]*)\s*\(\)\s*\{", re.MULTILINE),
    "php": re.compile(r"^(?:abstract\s+|final\s+)?(function|class|interface|trait)\s+(\w+)", re.M),
}


def _by_pattern(text: str, pattern: re.Pattern[str]) -> Outline:
    symbols = []
    for match in pattern.finditer(text):
        kind = (match.group(1) or "def").strip().split()[-1] if match.group(1) else "def"
        if len(kind) > 12 or kind.endswith("*"):
            kind = "def"  # a C return type, not a keyword
        symbols.append(Symbol(kind, match.group(2), _comment_above(text, match.start())))
    return Outline(_leading_comment(text), tuple(symbols))


def _comment_above(text: str, start: int) -> str:
    lines = text[:start].rstrip("\n").rsplit("\n", 2)[-2:]
    line = lines[-1] if lines else ""
    if not COMMENT_PREFIX.match(line) or line.strip().startswith("*/"):
        return ""
    return first_line(COMMENT_PREFIX.sub("", line).rstrip("*/ "))


def _leading_comment(text: str) -> str:
    for line in text.lstrip().split("\n", 5)[:5]:
        if line.startswith(("#!", "// SPDX", "# SPDX", "package ", "use ")):
            continue
        if COMMENT_PREFIX.match(line) and COMMENT_PREFIX.sub("", line).strip():
            return first_line(COMMENT_PREFIX.sub("", line).rstrip("*/ "))
        return ""
    return ""
