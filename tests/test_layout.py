"""The import graph of planner/ follows the layers: dependencies point one way.

Every module's imports (parsed with ast, including imports inside functions and under
TYPE_CHECKING) are mapped to layers; a module may import its own layer or a layer of lower
rank, never one above or beside it. The layer table is printed (`pytest -s tests/test_layout.py`)
and kept in LAYERS below; CONTRIBUTING.md's layout table describes the same packages. Modules
depend on one another one way too, inside a layer as well: no import circles.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "planner"


@dataclass(frozen=True)
class Layer:
    name: str
    rank: int
    packages: tuple[str, ...]
    what: str


LAYERS = (
    Layer("root", -1, ("planner",), "the package itself: the version; imports nothing"),
    Layer("core", 0, ("planner.core",), "errors, protocols between layers, tool names"),
    Layer("text", 0, ("planner.text",), "untrusted text fenced, secrets redacted, posts inert"),
    Layer("config", 1, ("planner.config",), "the configuration and its sections"),
    Layer("plan", 1, ("planner.plan",), "plan documents, clarifications, task guard, repair"),
    Layer(
        "outcome", 2, ("planner.outcome",), "pass result, StopPass/PlanChanged, deadline, evidence"
    ),
    Layer("memory", 3, ("planner.memory",), "JSONL history, entries, derived state, digests"),
    Layer("model", 3, ("planner.model",), "model endpoint: requests, streaming, tool calls, edits"),
    Layer("engine", 4, ("planner.engine",), "the pass loop and the phase interface"),
    Layer("tools", 5, ("planner.tools",), "tools the model calls; scrubbed env for children"),
    Layer("storage", 5, ("planner.storage",), "history backends (import the engine only)"),
    Layer("testing", 5, ("planner.testing",), "scripted OpenAI-compatible server"),
    Layer("replanning", 6, ("planner.replanning",), "phase package"),
    Layer("refinement", 6, ("planner.refinement",), "phase package"),
    Layer("interactive", 6, ("planner.interactive",), "phase package"),
    Layer("approval", 6, ("planner.approval",), "phase package"),
    Layer("grounding", 6, ("planner.grounding",), "phase package: repository map, exploration"),
    Layer("verification", 6, ("planner.verification",), "phase package: the repository's tests"),
    Layer("run", 7, ("planner.run",), "assembles a pass; registers the phases"),
    Layer("ci.forges", 8, ("planner.ci.forges",), "forge seam: base types, HTTP, local files"),
    Layer("ci.forges.github", 9, ("planner.ci.forges.github",), "GitHub adapter"),
    Layer("ci.forges.gitlab", 9, ("planner.ci.forges.gitlab",), "GitLab adapter"),
    Layer("ci", 10, ("planner.ci",), "CI entry point, inputs/outputs, triggers, tracking, git"),
    Layer("evaluation", 10, ("planner.evaluation",), "drives passes over a task suite"),
    Layer("cli", 11, ("planner.cli", "planner.__main__"), "command line and demo"),
)
"""Lower rank = closer to the core; a module imports its own layer or lower ranks only.
Layers of equal rank never import each other: phase packages plug into the engine, not into
each other; GitHub code never imports GitLab code and vice versa; storage (rank 1) never
imports the CI layer it serves — it needs nothing from it and keeps its own HTTP download;
evaluation drives passes like the CI layer does, and neither imports the other. The root
package holds only the version and imports nothing, so any layer may read it (`planner
--version`)."""


def layer_of(module: str) -> Layer | None:
    """The layer whose package is the longest prefix of `module` ("planner" alone is root)."""
    best: Layer | None = None
    best_length = -1
    for layer in LAYERS:
        for package in layer.packages:
            inside = module == package or module.startswith(package + ".")
            if (
                inside
                and len(package) > best_length
                and (package != "planner" or module == package)
            ):
                best, best_length = layer, len(package)
    return best


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[int, str]]:
    """(line, module) for every planner import in the tree, relative ones resolved."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                yield node.lineno, imported_from(base, alias.name)


def imported_from(base: str, name: str) -> str:
    """The module `from base import name` imports: the submodule when `name` is one (`from
    planner.tools import arguments`), else `base` itself (`from planner.tools import
    build_registry`)."""
    path = PACKAGE.parent.joinpath(*f"{base}.{name}".split("."))
    is_submodule = path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()
    return f"{base}.{name}" if is_submodule else base


def edges() -> Iterator[tuple[str, int, str]]:
    """(importing module file, line, imported module) over every .py file in planner/.
    Fixture repositories shipped as data (e.g. an evaluation suite's repos) import no planner
    module, so they add no edges."""
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for line, target in imported(tree, module, path.name == "__init__.py"):
            if target == "planner" or target.startswith("planner."):
                yield module, line, target


def violation(source: str, target: str) -> str | None:
    """Why `source` may not import `target`, or None when it may."""
    mine, theirs = layer_of(source), layer_of(target)
    if mine is None or theirs is None:
        return None  # reported by test_every_package_has_a_layer
    if mine == theirs or theirs.rank < mine.rank:
        return None
    where = "above" if theirs.rank > mine.rank else "beside"
    return f"layer {mine.name} (rank {mine.rank}) imports layer {theirs.name} {where} it"


def layer_table() -> str:
    rows = [f"{'rank':>4}  {'layer':<18} {'packages':<40} what"]
    for layer in sorted(LAYERS, key=lambda item: (item.rank, item.name)):
        rows.append(
            f"{layer.rank:>4}  {layer.name:<18} {', '.join(layer.packages):<40} {layer.what}"
        )
    return "\n".join(rows)


def test_dependencies_point_one_way() -> None:
    print("\n" + layer_table())
    problems = [
        f"{source}:{line} imports {target}: {why}"
        for source, line, target in edges()
        if (why := violation(source, target)) is not None
    ]
    assert not problems, "imports against the layers:\n" + "\n".join(problems)


Graph = Mapping[str, Mapping[str, list[int]]]
"""importing module → imported module → the lines of its imports."""


def import_graph(found: Iterable[tuple[str, int, str]]) -> Graph:
    graph: dict[str, dict[str, list[int]]] = {}
    for source, line, target in found:
        if source != target:
            graph.setdefault(source, {}).setdefault(target, []).append(line)
    return graph


def reachable(graph: Graph, start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in graph.get(todo.pop(), {}):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def import_circles(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module: the modules that import
    each other, directly or through others (a graph of a few hundred modules: a search from
    each is fast enough, and simpler than Tarjan's algorithm)."""
    reach = {module: reachable(graph, module) for module in graph}
    circles = {
        tuple(sorted({module} | {other for other in found if module in reach.get(other, ())}))
        for module, found in reach.items()
        if module in found
    }
    return sorted(list(circle) for circle in circles)


def describe_circle(graph: Graph, circle: list[str]) -> str:
    """The circle's modules, then every import between them with its lines."""
    imports = [
        f"  {source}:{','.join(map(str, sorted(set(lines))))} imports {target}"
        for source in circle
        for target, lines in graph.get(source, {}).items()
        if target in circle
    ]
    return "\n".join(["circle of " + ", ".join(circle), *imports])


def test_no_import_circles() -> None:
    """Modules that import each other (at module level, in functions or under TYPE_CHECKING)
    cannot be read, tested or moved apart; move what both need into a module of its own."""
    graph = import_graph(edges())
    circles = [describe_circle(graph, circle) for circle in import_circles(graph)]
    assert not circles, "import circles:\n" + "\n".join(circles)


def test_a_circle_is_found_and_named() -> None:
    circle = [("a", 1, "b"), ("b", 2, "c"), ("c", 3, "a"), ("c", 3, "a")]  # two names, one line
    found = [*circle, ("c", 4, "d"), ("d", 5, "d")]  # d only imports itself: no circle
    graph = import_graph(found)
    assert import_circles(graph) == [["a", "b", "c"]]
    assert describe_circle(graph, ["a", "b", "c"]).splitlines() == [
        "circle of a, b, c",
        "  a:1 imports b",
        "  b:2 imports c",
        "  c:3 imports a",
    ]


def test_a_submodule_imported_from_its_package_is_the_edge() -> None:
    """`from planner.tools import arguments` imports the module arguments, not the package's
    __init__ (whose own imports would otherwise look like a circle)."""
    assert imported_from("planner.tools", "arguments") == "planner.tools.arguments"
    assert imported_from("planner.tools", "build_registry") == "planner.tools"
    assert imported_from("planner", "engine") == "planner.engine"


def test_every_package_has_a_layer() -> None:
    """A new top-level package must be given a layer here before it can land."""
    unknown = sorted(
        {module_name(path) for path in PACKAGE.rglob("*.py") if layer_of(module_name(path)) is None}
    )
    assert not unknown, f"modules without a layer (add them to LAYERS in {__name__}): {unknown}"


def test_the_ground_floor_imports_nothing_of_planner() -> None:
    """core (errors, protocols, tool names) and text (fencing, redaction, inert posts) are what
    every layer reads; they import no other planner package, not even each other."""
    ground = ("planner.core", "planner.text")
    outside = [
        f"{source}:{line} imports {target}"
        for source, line, target in edges()
        if source.startswith(ground) and not target.startswith(source.rsplit(".", 1)[0])
    ]
    assert not outside, "the ground floor must not import " + "; ".join(outside)


@pytest.mark.parametrize(
    ("source", "target", "allowed"),
    [
        ("planner.engine.coordinator", "planner.replanning.phase", False),
        ("planner.engine.context", "planner.tools.registry", False),
        ("planner.model.llm", "planner.engine.context", False),
        ("planner.memory.history", "planner.model.llm", False),
        ("planner.engine.context", "planner.model.llm", True),
        ("planner.ci.forges.github", "planner.ci.forges.gitlab", False),
        ("planner.ci.forges.gitlab", "planner.ci.forges.github", False),
        ("planner.storage.gitlab", "planner.ci.forges.http", False),
        ("planner.replanning.phase", "planner.refinement.phase", False),
        ("planner.run.phases", "planner.replanning.phase", True),
        ("planner.ci.job", "planner.ci.forges.github", True),
        ("planner.ci.forges.github", "planner.ci.forges.base", True),
        ("planner.cli.main", "planner.ci.job", True),
        ("planner.ci.forges.local", "planner.cli.issue_file", False),
    ],
)
def test_the_rule_names_what_it_forbids(source: str, target: str, allowed: bool) -> None:
    """The rule itself: a forbidden edge is reported with both layers named."""
    why = violation(source, target)
    assert (why is None) is allowed
    if why is not None:
        assert layer_of(source).name in why and layer_of(target).name in why  # type: ignore[union-attr]


def test_an_unknown_package_has_no_layer() -> None:
    assert layer_of("planner.newthing.module") is None
    assert layer_of("planner") is not None and layer_of("planner").name == "root"  # type: ignore[union-attr]
