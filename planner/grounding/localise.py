"""Which functions and classes an issue is about, across the whole repository.

A 5,000-line module whose bug is in one function must not make a small model page through it:
the task prompt shows the definitions the issue points to (planner.grounding.task_files). They
are found by a symbol index of the repository's Python files — every function, class and
method with its lines, parameters, the names its body uses and the names it calls — ranked by
what the issue's text says:

- a name the issue writes as code (in backticks, a code block, a `>>>` example, a call
  `name(`, a traceback's `in name`) is the strongest sign, the more often the stronger;
- a parameter the issue writes as code (`intfmt=","`), names the body uses that the issue
  writes as code, and the words of the issue in the body's names and docstring follow;
- definitions in test files count less: the fix belongs in the code.

Time and memory stay bounded on a large repository: the Python files holding one of the
issue's code names are found by the caller's search (`git grep`, which reads nothing for the
model), at most MAX_SCAN of them are read — through the caller's reader, the workspace's
no-follow, descriptor-based read — and the MAX_CANDIDATES holding most of the names are parsed;
parsed files are kept by content, at most CACHE_FILES of them. The names searched are the
issue's identifiers that look like code (snake_case, CamelCase, digits) when it has any, so a
plain word such as `event` does not make every file a candidate. Without a search, at most
MAX_SCAN Python files are read.
"""

from __future__ import annotations

import ast
import math
import re
import warnings
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from planner.text.words import STOPWORDS, words_of

Reader = Callable[[str], bytes | None]
"""Reads a repository file by its relative path (None when it cannot be read)."""
Search = Callable[[list[str]], list[str] | None]
"""The files holding any of the names, case-insensitively (None when it cannot search)."""
MAX_SCAN = 5_000
"""Files read per query at most to find the candidates."""

MAX_CANDIDATES = 200
"""Files parsed per query at most (those holding most of the issue's code names)."""
CACHE_FILES = 2_000
"""Parsed files kept between queries."""
MAX_FILE_BYTES = 1_000_000
CODE_SPAN = re.compile(r"`{1,3}([^`]+)`{1,3}", re.DOTALL)
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
FENCE_LANGUAGE = re.compile(r"^[\w+-]*\n")
"""The language after a fence (```python) is not a name of the code."""
CALLED = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*)\s*\(")
KEYWORD_ARGUMENT = re.compile(r"[(,]\s*([A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)")
FRAME = re.compile(r'File "([^"]+)", line (\d+), in ([A-Za-z_][A-Za-z0-9_]*)')
TEST_FILE = re.compile(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*\.py$|_test\.py$|(^|/)conftest\.py$")
PYTHON_WORDS = frozenset(
    {
        "def", "class", "return", "import", "from", "none", "true", "false", "self", "print",
        "list", "dict", "str", "int", "float", "len", "range", "for", "while", "lambda", "and",
        "not", "the", "with", "traceback", "most", "recent", "call", "last", "file", "line",
        "error", "typeerror", "valueerror", "keyerror", "expected", "got",
    }
)  # fmt: skip
"""Names in code spans that point to no definition of the repository."""


@dataclass(frozen=True, slots=True)
class Definition:
    """A function, class or method of a Python file."""

    path: str
    qualname: str
    """`divide`, `LRUCache`, `LRUCache.popitem`."""
    kind: str
    """def or class."""
    start: int
    """First line (1-based, decorators included)."""
    end: int
    params: frozenset[str]
    uses: frozenset[str]
    """Lower-case names the body uses (variables, attributes, functions)."""
    calls: frozenset[str]
    """Names the body calls (the last part of `a.b.c(…)`)."""
    words: frozenset[str]
    """Words of the names the body uses."""
    doc_words: frozenset[str]
    """Words of the docstring."""

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]

    @property
    def lines(self) -> int:
        return self.end - self.start + 1


@dataclass(frozen=True)
class Location:
    """A ranked definition and the names of the definitions that call it."""

    definition: Definition
    score: float
    callers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Clues:
    """What an issue's text says about the code."""

    code: Counter[str]
    """Lower-case names written as code, with how often."""
    called: frozenset[str]
    """Names written as calls (`divide(`)."""
    frames: frozenset[tuple[str, str]]
    """(file name, function) of traceback frames."""
    words: frozenset[str]
    """The text's words (and their singular forms)."""
    arguments: frozenset[str] = frozenset()
    """Names written as keyword arguments (`intfmt=","`): parameters."""


def clues(texts: Sequence[str]) -> Clues:
    text = "\n".join(texts)[:100_000]
    spans = [FENCE_LANGUAGE.sub("", span) for span in CODE_SPAN.findall(text)]
    code_text = "\n".join([*spans, *(line for line in text.splitlines() if _code_line(line))])
    code: Counter[str] = Counter()
    for name in IDENTIFIER.findall(code_text):
        lowered = name.lower()
        if len(lowered) >= 3 and lowered not in PYTHON_WORDS:
            code[lowered] += 1
    for name in IDENTIFIER.findall(text):  # snake_case or CamelCase in prose is code too
        if ("_" in name.strip("_") or _camel(name)) and name.lower() not in PYTHON_WORDS:
            code[name.lower()] += 1
    called = {m.rsplit(".", 1)[-1].lower() for m in CALLED.findall(code_text)}
    frames = {(path.rsplit("/", 1)[-1], name) for path, _, name in FRAME.findall(text)}
    keywords = {name.lower() for name in KEYWORD_ARGUMENT.findall(code_text)}
    for name in keywords:  # `maxsize=2` names a parameter, not a definition called maxsize
        code[name] -= sum(1 for k in KEYWORD_ARGUMENT.findall(code_text) if k.lower() == name)
    arguments = frozenset(keywords)
    return Clues(
        +code, frozenset(called), frozenset(frames), _with_singulars(words_of(text)), arguments
    )


def _specific(name: str) -> bool:
    """A name no prose word is: snake_case, with digits (lower-cased CamelCase is not seen)."""
    return "_" in name.strip("_") or any(character.isdigit() for character in name)


def _code_line(line: str) -> bool:
    stripped = line.strip()
    return stripped.startswith((">>>", "...", "File ", "Traceback")) or bool(
        re.match(r"^[A-Za-z_][\w.]*\(.*\)$", stripped)
    )


def _camel(name: str) -> bool:
    return bool(re.search(r"[a-z][A-Z]", name)) or bool(re.match(r"^[A-Z][a-z]+[A-Z]", name))


def _with_singulars(words: Iterable[str]) -> frozenset[str]:
    found = set(words)
    found |= {w[:-1] for w in found if len(w) > 4 and w.endswith("s") and not w.endswith("ss")}
    return frozenset(found)


@dataclass
class SymbolIndex:
    """Definitions of a repository's Python files, parsed on demand and kept by file state."""

    read: Reader
    search: Search | None = None
    parsed: OrderedDict[tuple[str, int], tuple[Definition, ...]] = field(
        default_factory=OrderedDict
    )

    def locate(self, paths: Sequence[str], texts: Sequence[str], limit: int = 8) -> list[Location]:
        """The definitions `texts` point to, best first, each with its callers."""
        found = clues(texts)
        names = [name for name, _ in found.code.most_common(40)]
        if not names:
            return []
        specific = [name for name in names if _specific(name)]
        listed = self.search(specific or names) if self.search is not None else None
        if listed is not None:
            known = set(paths)
            paths = [path for path in listed if path in known]
        candidates = self._candidates(paths[:MAX_SCAN] if listed is None else paths, names)
        definitions = [d for path, data in candidates for d in self._parse(path, data)]
        scores = {id(d): score(d, found) for d in definitions}
        _callee_bonus(definitions, scores)
        ranked = sorted(
            ((scores[id(d)], d) for d in definitions),
            key=lambda item: (-item[0], item[1].path, item[1].start),
        )
        best = ranked[0][0] if ranked else 0.0
        floor = max(MIN_SCORE, best * RELATIVE_FLOOR)
        chosen = [(s, d) for s, d in ranked if s >= floor][:limit]
        return [Location(d, round(s, 1), _callers(d, definitions)) for s, d in chosen]

    def callees(self, definition: Definition, max_lines: int) -> list[Definition]:
        """Functions of the definition's file, at most `max_lines` long, that its body calls."""
        data = self._bytes(definition.path)
        if data is None:
            return []
        return [
            d
            for d in self._parse(definition.path, data)
            if d.name in definition.calls and d is not definition and d.kind == "def"
            if d.lines <= max_lines and not d.qualname.startswith(f"{definition.qualname}.")
        ]

    def ran(
        self, ran: Iterable[tuple[str, int]], texts: Sequence[str]
    ) -> list[tuple[Definition, float]]:
        """The functions in `ran` ((path, first line) of functions a test ran) and the classes
        holding them, each with the score `texts` give it, best first."""
        found = clues(texts)
        lines: dict[str, set[int]] = {}
        for path, line in ran:
            lines.setdefault(path, set()).add(line)
        chosen: list[Definition] = []
        for path, starts in lines.items():
            data = self._bytes(path) if path.endswith(".py") else None
            if data is None:
                continue
            chosen += [d for d in self._parse(path, data) if _ran(d, starts)]
        scored = [(d, score(d, found)) for d in chosen]
        return sorted(scored, key=lambda item: (-item[1], item[0].path, item[0].start))

    def _candidates(self, paths: Sequence[str], names: list[str]) -> list[tuple[str, bytes]]:
        """Python files holding any of `names`, those with most of them first."""
        wanted = [name.encode() for name in names]
        hits = []
        for path in [p for p in paths if p.endswith(".py")][:MAX_SCAN]:
            data = self._bytes(path)
            if data is None:
                continue
            lowered = data.lower()
            count = sum(1 for name in wanted if name in lowered)
            if count:
                hits.append((count, path, data))
        hits.sort(key=lambda item: (-item[0], item[1]))
        return [(path, data) for _, path, data in hits[:MAX_CANDIDATES]]

    def _bytes(self, path: str) -> bytes | None:
        data = self.read(path)
        return data if data is not None and len(data) <= MAX_FILE_BYTES else None

    def _parse(self, path: str, data: bytes) -> tuple[Definition, ...]:
        key = (path, hash(data))
        if key in self.parsed:
            self.parsed.move_to_end(key)
            return self.parsed[key]
        definitions = tuple(definitions_of(path, data.decode("utf-8", errors="replace")))
        self.parsed[key] = definitions
        while len(self.parsed) > CACHE_FILES:
            self.parsed.popitem(last=False)
        return definitions


def _ran(definition: Definition, starts: set[int]) -> bool:
    """A function that starts on one of the lines, or a class that holds one."""
    if definition.kind == "def":
        return definition.start in starts
    return any(definition.start < line <= definition.end for line in starts)


MIN_SCORE = 8.0
"""A definition scoring less is not shown (it shares a few words with the issue at most)."""
RELATIVE_FLOOR = 0.25
"""Nor one scoring less than this share of the best."""
STRONG = 60.0
"""A definition the issue names as code scores at least this much."""
CALLEE_BONUS = 10.0


def _callee_bonus(definitions: list[Definition], scores: dict[int, float]) -> None:
    """Definitions that a strongly pointed-to definition of the same file calls, and that
    share something with the issue, gain: the bug may be one call deeper (`tabulate` calls
    `_format`, which applies `intfmt`)."""
    strong = [d for d in definitions if scores[id(d)] >= STRONG]
    for definition in definitions:
        if scores[id(definition)] <= 0 or scores[id(definition)] >= STRONG:
            continue
        if any(
            definition.name in caller.calls and caller.path == definition.path for caller in strong
        ):
            scores[id(definition)] += CALLEE_BONUS


def score(definition: Definition, found: Clues) -> float:
    name = definition.name.lower()
    code = found.code.keys()
    points = 0.0
    mentions = found.code.get(name, 0)
    if mentions:
        points += 30 + 10 * math.log2(1 + mentions) + (15 if name in found.called else 0)
    owner = definition.qualname.split(".")[0].lower()
    if "." in definition.qualname and owner in found.code:
        points += 12 + 4 * math.log2(1 + found.code[owner])
    if (definition.path.rsplit("/", 1)[-1], definition.name) in found.frames:
        points += 60
    parts = _with_singulars(words_of(definition.name)) - {name} or _compound(name, found.words)
    points += 8 * min(2, len(parts & code)) + 5 * min(3, len(parts & found.words))
    points += 5 * min(3, len(definition.params & (code | found.arguments)))
    points += 3 * min(5, len((definition.uses - {name}) & code))
    points += 3 * min(4, len((definition.words - parts) & found.words))
    points += 1 * min(6, len(definition.doc_words & found.words))
    if TEST_FILE.search(definition.path):
        points *= 0.3
    return points


def _compound(name: str, words: frozenset[str]) -> set[str]:
    """The two words of the issue a name is written as without a separator (`typedkey`: typed,
    key), or nothing."""
    for cut in range(3, len(name) - 2):
        if name[:cut] in words and name[cut:] in words:
            return {name[:cut], name[cut:]}
    return set()


def _callers(definition: Definition, definitions: list[Definition]) -> tuple[str, ...]:
    """Where the definition is called: code first, then tests (a count)."""
    calling = [
        d
        for d in definitions
        if definition.name in d.calls and d is not definition and d.kind == "def"
    ]
    code = [f"{d.path}:{d.qualname}" for d in calling if not TEST_FILE.search(d.path)]
    tests = len(calling) - len(code)
    return (*code[:MAX_CALLERS], *([f"{tests} test(s)"] if tests else []))


MAX_CALLERS = 4


def definitions_of(path: str, text: str) -> list[Definition]:
    """Every function, class and method of a Python file (none when it does not parse)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    found: list[Definition] = []
    _collect(path, tree.body, "", found)
    return found


def _collect(path: str, body: list[ast.stmt], prefix: str, found: list[Definition]) -> None:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            qualname = f"{prefix}{node.name}"
            found.append(_definition(path, node, qualname))
            if isinstance(node, ast.ClassDef):
                _collect(path, node.body, f"{qualname}.", found)


def _definition(
    path: str, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, qualname: str
) -> Definition:
    uses: set[str] = set()
    calls: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            uses.add(child.id)
        elif isinstance(child, ast.Attribute):
            uses.add(child.attr)
        elif isinstance(child, ast.Call):
            function = child.func
            if isinstance(function, ast.Name):
                calls.add(function.id)
            elif isinstance(function, ast.Attribute):
                calls.add(function.attr)
    params: set[str] = set()
    if not isinstance(node, ast.ClassDef):
        arguments = node.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        params = {a.arg.lower() for a in every if a.arg not in ("self", "cls")}
    decorators = [d.lineno for d in node.decorator_list]
    doc = ast.get_docstring(node) or ""
    return Definition(
        path=path,
        qualname=qualname,
        kind="class" if isinstance(node, ast.ClassDef) else "def",
        start=min([node.lineno, *decorators]),
        end=node.end_lineno or node.lineno,
        params=frozenset(params),
        uses=frozenset(name.lower() for name in uses),
        calls=frozenset(calls),
        words=_with_singulars(words_of(" ".join(uses))),
        doc_words=_with_singulars(words_of(doc[:2000]) - STOPWORDS),
    )
